// Board: see board.h.
#include "src/live/board.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include <boost/interprocess/allocators/allocator.hpp>
#include <boost/interprocess/containers/string.hpp>
#include <boost/interprocess/managed_shared_memory.hpp>
#include <boost/interprocess/sync/interprocess_condition.hpp>
#include <boost/interprocess/sync/interprocess_mutex.hpp>
#include <boost/interprocess/sync/scoped_lock.hpp>
#include <boost/date_time/posix_time/posix_time_types.hpp>

namespace racesim::live {

namespace bip = boost::interprocess;

namespace {

using Lock = bip::scoped_lock<bip::interprocess_mutex>;
using CharAlloc = bip::allocator<char, bip::managed_shared_memory::segment_manager>;
using ShmString = bip::basic_string<char, std::char_traits<char>, CharAlloc>;

struct Slot {
  char name[Board::kNameBytes] = {};
  bool used = false;
  bool set = false;                // a mark
  int arrived = 0;                 // a barrier: ranks waiting in this generation
  std::uint64_t generation = 0;    // a barrier: how many times it has passed
  int permits = 0;                 // a semaphore: its permits (set at its first use)
  std::uint64_t tickets = 0;       // a semaphore: tickets taken (arrivals, in order)
  std::uint64_t left = 0;          // a semaphore: holders that left
  int reading = 0;                 // a mount: its reads running now
  int copying = 0;                 // a mount: its copies (reads and writes) running now
};

// A copy running now (begin_copy to end_copy), and the company it has had so far.
struct Copy {
  bool used = false;
  bool read = false;
  int mount = -1;  // its mount's slot in Shared::mounts
  Board::CopyCompany most;
};

struct Shared {
  bip::interprocess_mutex mutex;
  bip::interprocess_condition changed;
  int world = 0;
  int attached = 0;
  std::int64_t start_ns = 0;  // 0 until start()
  bool stop = false;
  std::uint64_t next_version = 1;
  Slot barriers[Board::kMaxNames];
  Slot marks[Board::kMaxNames];
  Slot semaphores[Board::kMaxNames];
  Slot mounts[Board::kMaxNames];
  Copy copies[Board::kMaxCopies];
  bool failed = false;
  int failed_rank = -1;
  char check[128] = {};
  char diagnosis[2048] = {};
};

void copy_text(char* out, std::size_t size, const std::string& s) {
  const std::size_t n = std::min(size - 1, s.size());
  std::memcpy(out, s.data(), n);
  out[n] = '\0';
}

// The slot of `name` in `table`, created when `create`; throws LiveError at a limit.
Slot* find_slot(Slot* table, const std::string& name, bool create, const char* what) {
  if (name.size() >= static_cast<std::size_t>(Board::kNameBytes)) {
    throw LiveError(std::string("live run: ") + what + " name '" + name + "' is longer than " +
                    std::to_string(Board::kNameBytes - 1) + " bytes");
  }
  Slot* free_slot = nullptr;
  for (int i = 0; i < Board::kMaxNames; ++i) {
    if (table[i].used && name == table[i].name) return &table[i];
    if (!table[i].used && !free_slot) free_slot = &table[i];
  }
  if (!create) return nullptr;
  if (!free_slot) {
    throw LiveError(std::string("live run: more than ") + std::to_string(Board::kMaxNames) + " " + what +
                    " names (a live run's limit)");
  }
  free_slot->used = true;
  copy_text(free_slot->name, sizeof free_slot->name, name);
  return free_slot;
}

boost::posix_time::ptime deadline_in(std::int64_t ns) {
  return boost::posix_time::microsec_clock::universal_time() + boost::posix_time::microseconds(ns / 1000);
}

}  // namespace

struct Board::Impl {
  bip::managed_shared_memory segment;
  Shared* shared = nullptr;
};

Board::Board(std::string name, std::unique_ptr<Impl> impl) : name_(std::move(name)), impl_(std::move(impl)) {}
Board::~Board() = default;

std::unique_ptr<Board> Board::create(const std::string& segment, int world, const std::string& task) {
  if (world < 1 || world > kMaxWorld) {
    throw LiveError("live run: " + std::to_string(world) + " ranks (a live run has 1 to " + std::to_string(kMaxWorld) + ")");
  }
  bip::shared_memory_object::remove(segment.c_str());
  auto impl = std::make_unique<Impl>();
  const std::size_t bytes = (1u << 20) + task.size() * 2 + static_cast<std::size_t>(world) * (64u << 10);
  try {
    impl->segment = bip::managed_shared_memory(bip::create_only, segment.c_str(), bytes);
    impl->shared = impl->segment.construct<Shared>("board")();
    impl->shared->world = world;
    impl->segment.construct<ShmString>("task")(task.data(), task.size(), CharAlloc(impl->segment.get_segment_manager()));
  } catch (const bip::interprocess_exception& e) {
    bip::shared_memory_object::remove(segment.c_str());
    throw LiveError("live run: cannot create shared memory segment /dev/shm/" + segment + ": " + e.what());
  }
  return std::unique_ptr<Board>(new Board(segment, std::move(impl)));
}

std::unique_ptr<Board> Board::open(const std::string& segment) {
  auto impl = std::make_unique<Impl>();
  try {
    impl->segment = bip::managed_shared_memory(bip::open_only, segment.c_str());
  } catch (const bip::interprocess_exception& e) {
    throw LiveError("live worker: cannot open shared memory segment /dev/shm/" + segment + ": " + e.what());
  }
  impl->shared = impl->segment.find<Shared>("board").first;
  if (!impl->shared || !impl->segment.find<ShmString>("task").first) {
    throw LiveError("live worker: /dev/shm/" + segment + " is not a racesim live board");
  }
  return std::unique_ptr<Board>(new Board(segment, std::move(impl)));
}

bool Board::remove(const std::string& segment) { return bip::shared_memory_object::remove(segment.c_str()); }

std::string Board::task() const {
  const ShmString* t = impl_->segment.find<ShmString>("task").first;
  return t ? std::string(t->data(), t->size()) : std::string();
}

int Board::world() const { return impl_->shared->world; }

void Board::attach() {
  Lock l(impl_->shared->mutex);
  ++impl_->shared->attached;
  impl_->shared->changed.notify_all();
}

int Board::wait_attached(int n, std::int64_t timeout_ns) {
  Shared& s = *impl_->shared;
  const auto until = deadline_in(timeout_ns);
  Lock l(s.mutex);
  // Bounded by the deadline.
  while (s.attached < n && !s.stop) {
    if (!s.changed.timed_wait(l, until)) break;
  }
  return s.attached;
}

void Board::start(std::int64_t start_ns) {
  Lock l(impl_->shared->mutex);
  impl_->shared->start_ns = start_ns;
  impl_->shared->changed.notify_all();
}

std::optional<std::int64_t> Board::wait_start(std::int64_t timeout_ns) {
  Shared& s = *impl_->shared;
  const auto until = deadline_in(timeout_ns);
  Lock l(s.mutex);
  // Bounded by the deadline.
  while (s.start_ns == 0 && !s.stop) {
    if (!s.changed.timed_wait(l, until)) break;
  }
  if (s.start_ns == 0 || s.stop) return std::nullopt;
  return s.start_ns;
}

void Board::stop() {
  // A worker killed inside a critical section leaves the mutex held (it is not robust): the
  // supervisor waits for it at most 200 ms, then sets the flag anyway (the workers are being
  // killed; nothing else writes).
  Lock l(impl_->shared->mutex, deadline_in(200'000'000));
  impl_->shared->stop = true;
  if (l.owns()) impl_->shared->changed.notify_all();
}

bool Board::stopped() const {
  Lock l(impl_->shared->mutex);
  return impl_->shared->stop;
}

std::uint64_t Board::next_version() {
  Lock l(impl_->shared->mutex);
  return impl_->shared->next_version++;
}

std::uint64_t Board::arrive(const std::string& name, int parties) {
  Lock l(impl_->shared->mutex);
  Slot* b = find_slot(impl_->shared->barriers, name, true, "barrier");
  const std::uint64_t gen = b->generation;
  if (++b->arrived >= parties) {
    b->arrived = 0;
    ++b->generation;
  }
  return gen;
}

bool Board::passed(const std::string& name, std::uint64_t generation) const {
  Lock l(impl_->shared->mutex);
  const Slot* b = find_slot(impl_->shared->barriers, name, false, "barrier");
  return b && b->generation > generation;
}

void Board::set_mark(const std::string& name) {
  Lock l(impl_->shared->mutex);
  find_slot(impl_->shared->marks, name, true, "mark")->set = true;
}

bool Board::marked(const std::string& name) const {
  Lock l(impl_->shared->mutex);
  const Slot* m = find_slot(impl_->shared->marks, name, false, "mark");
  return m && m->set;
}

std::uint64_t Board::take_ticket(const std::string& name, int permits, int& actual_permits) {
  Lock l(impl_->shared->mutex);
  Slot* sem = find_slot(impl_->shared->semaphores, name, true, "semaphore");
  if (sem->permits == 0) sem->permits = permits;
  actual_permits = sem->permits;
  return sem->permits == permits ? sem->tickets++ : 0;
}

bool Board::may_enter(const std::string& name, std::uint64_t ticket) const {
  Lock l(impl_->shared->mutex);
  const Slot* sem = find_slot(impl_->shared->semaphores, name, false, "semaphore");
  return sem && ticket < sem->left + static_cast<std::uint64_t>(sem->permits);
}

void Board::leave(const std::string& name) {
  Lock l(impl_->shared->mutex);
  if (Slot* sem = find_slot(impl_->shared->semaphores, name, false, "semaphore")) ++sem->left;
}

int Board::begin_copy(const std::string& mount, bool read) {
  Shared& s = *impl_->shared;
  Lock l(s.mutex);
  Slot* m = find_slot(s.mounts, mount, true, "mount");
  const Copy* const free_copy =
      std::find_if(s.copies, s.copies + kMaxCopies, [](const Copy& c) { return !c.used; });
  if (free_copy == s.copies + kMaxCopies) {
    throw LiveError("live run: more than " + std::to_string(kMaxCopies) +
                    " copies of files running at once (a live run's limit)");
  }
  const int ticket = static_cast<int>(free_copy - s.copies);
  ++m->copying;
  if (read) ++m->reading;
  const int at = static_cast<int>(m - s.mounts);
  s.copies[ticket] = Copy{true, read, at, {}};
  // Every copy of the mount running now has this company at least (this one included).
  for (Copy& c : s.copies) {
    if (!c.used || c.mount != at) continue;
    c.most.copies = std::max(c.most.copies, m->copying);
    if (c.read) c.most.reads = std::max(c.most.reads, m->reading);
  }
  return ticket;
}

Board::CopyCompany Board::end_copy(int ticket) {
  Shared& s = *impl_->shared;
  Lock l(s.mutex);
  assert(ticket >= 0 && ticket < kMaxCopies && s.copies[ticket].used && "end_copy REQUIRES a running copy's ticket");
  Copy& c = s.copies[ticket];
  Slot& m = s.mounts[c.mount];
  assert(m.copying > 0 && (!c.read || m.reading > 0) && "a running copy is counted on its mount");
  --m.copying;
  if (c.read) --m.reading;
  c.used = false;
  assert(c.most.copies >= 1 && (!c.read || c.most.reads >= 1) && "a copy counts itself");
  return c.most;
}

bool Board::report_failure(int rank, const std::string& check, const std::string& diagnosis) {
  Shared& s = *impl_->shared;
  Lock l(s.mutex);
  s.stop = true;
  s.changed.notify_all();
  if (s.failed) return false;
  s.failed = true;
  s.failed_rank = rank;
  copy_text(s.check, sizeof s.check, check);
  copy_text(s.diagnosis, sizeof s.diagnosis, diagnosis);
  return true;
}

std::optional<Board::Failure> Board::failure() const {
  const Shared& s = *impl_->shared;
  // The supervisor reads this once every worker has exited: a mutex a killed worker left held
  // is not waited for beyond 200 ms.
  Lock l(impl_->shared->mutex, deadline_in(200'000'000));
  if (!s.failed) return std::nullopt;
  return Failure{s.failed_rank, s.check, s.diagnosis};
}

void Board::put_result(int rank, const std::string& json) {
  const std::string key = "result." + std::to_string(rank);
  try {
    impl_->segment.construct<ShmString>(key.c_str())(json.data(), json.size(),
                                                     CharAlloc(impl_->segment.get_segment_manager()));
  } catch (const bip::bad_alloc&) {
    throw LiveError("live worker: rank " + std::to_string(rank) + "'s result (" + std::to_string(json.size()) +
                    " bytes) does not fit in /dev/shm/" + name_);
  } catch (const bip::interprocess_exception& e) {
    throw LiveError("live worker: rank " + std::to_string(rank) + "'s result: " + e.what());
  }
}

std::optional<std::string> Board::result(int rank) const {
  const std::string key = "result." + std::to_string(rank);
  const ShmString* r = impl_->segment.find<ShmString>(key.c_str()).first;
  if (!r) return std::nullopt;
  return std::string(r->data(), r->size());
}

}  // namespace racesim::live
