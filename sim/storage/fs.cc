#include "sim/storage/fs.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <type_traits>

#include "sim/storage/faults.h"

namespace racesim::storage {

const char* to_string(CacheUse use) {
  switch (use) {
    case CacheUse::kNone: return "none";
    case CacheUse::kHit: return "hit";
    case CacheUse::kMiss: return "miss";
  }
  return "none";
}

const char* to_string(FsError e) {
  switch (e) {
    case FsError::kOk: return "ok";
    case FsError::kExists: return "EEXIST";
    case FsError::kNotFound: return "ENOENT";
    case FsError::kNoSys: return "ENOSYS";
    case FsError::kWouldBlock: return "EWOULDBLOCK";
    case FsError::kTimedOut: return "timed out";
    case FsError::kBadFd: return "EBADF";
    case FsError::kIo: return "EIO";
    case FsError::kNoSpace: return "ENOSPC";
    case FsError::kIsDir: return "EISDIR";
    case FsError::kNotEmpty: return "ENOTEMPTY";
    case FsError::kNotDir: return "ENOTDIR";
    case FsError::kInvalid: return "EINVAL";
    case FsError::kBusy: return "EBUSY";
    case FsError::kDiskFull: return "ENOSPC";
  }
  return "?";
}

// flock(2): shared or exclusive, FIFO, granted on release to the waiters at the front that fit.
class FileSystem::FileLock final : public kernel::NamedWaitable {
 public:
  FileLock(kernel::Simulation& sim, std::string name) : NamedWaitable(sim, "flock", std::move(name)) {}

  FsError acquire(bool exclusive, bool blocking, Time timeout) {
    kernel::Process* self = sim_.current();
    // Converting a lock one holds (flock(2)): the old lock is removed first, not atomically.
    release(self);
    if (waiters_.empty() && fits(exclusive)) {
      grant(self, exclusive);
      return FsError::kOk;
    }
    if (!blocking) return FsError::kWouldBlock;
    wants_[self] = exclusive;
    struct Forget {  // also when the waiter is killed
      std::map<const kernel::Process*, bool>& wants;
      const kernel::Process* self;
      ~Forget() { wants.erase(self); }
    } forget{wants_, self};
    const auto status = sim_.wait_on(&waiters_, sim_.deadline_after(timeout));
    if (status == kernel::WaitStatus::kTimeout) {
      release_waiters();  // a timed-out exclusive waiter may have held shared ones back
      return FsError::kTimedOut;
    }
    return FsError::kOk;  // granted by release_waiters before the wake
  }

  bool release(const kernel::Process* p) {
    auto it = std::find(holders_.begin(), holders_.end(), p);
    if (it == holders_.end()) return false;
    holders_.erase(it);
    if (holders_.empty()) exclusive_ = false;
    release_waiters();
    return true;
  }

  void releasers(const kernel::WaitQueue&, const kernel::Process&,
                 std::vector<const kernel::Process*>& out) const override {
    out.insert(out.end(), holders_.begin(), holders_.end());
  }

 private:
  bool fits(bool exclusive) const { return holders_.empty() || (!exclusive && !exclusive_); }
  void grant(const kernel::Process* p, bool exclusive) {
    holders_.push_back(p);
    exclusive_ = exclusive;
  }
  void release_waiters() {
    // Bounded by the number of waiters.
    while (kernel::Process* front = waiters_.front()) {
      const bool exclusive = wants_.at(front);
      if (!fits(exclusive)) return;
      grant(front, exclusive);
      sim_.wake(front);
    }
  }

  std::vector<const kernel::Process*> holders_;
  bool exclusive_ = false;
  std::map<const kernel::Process*, bool> wants_;
  kernel::WaitQueue waiters_{this, "flock"};
};

FileSystem::FileSystem(kernel::Simulation& sim, std::string name, MountConfig config,
                       kernel::RandomStream jitter)
    : sim_(sim),
      name_(std::move(name)),
      config_(config),
      names_(config_.root),
      jitter_(jitter),
      write_turns_(sim.stream("fs/" + name_ + "/write_turns")),
      chunk_jitter_(sim.stream("fs/" + name_ + "/chunk_jitter")),
      faults_(sim) {
  assert(config_.write_lock_keep >= 0 && config_.write_lock_keep <= 1 && "the odds of keeping a write lock are a probability");
  assert(config_.chunk_jitter >= 0 && config_.chunk_jitter <= 0.9 && "a chunk's time varies by at most 90%");
  if (config_.metadata.threads > 0) mds_ = std::make_unique<MetadataServer>(config_.metadata.threads);
  if (config_.page_cache_bandwidth > 0) {
    cache_ = std::make_unique<PageCache>(PageCacheConfig{
        config_.dirty_limit, config_.dirty_background > 0 ? config_.dirty_background : config_.dirty_limit / 2,
        config_.dirty_expire, config_.bandwidth, config_.truncate_disk_bandwidth > 0});
  }
}

FileSystem::~FileSystem() = default;

Time FileSystem::meta(MetaOp op, int client) {
  ++stats_.meta_ops;
  Time d = mds_ ? config_.metadata.of(op).latency : config_.meta_latency;
  assert(d >= 0 && config_.meta_jitter >= 0);
  if (config_.meta_jitter > 0) {
    d = kernel::add_time(d, static_cast<Time>(jitter_.uniform_u64(static_cast<std::uint64_t>(config_.meta_jitter))));
  }
  const double slow = slowness();
  d = kernel::scale_time(d, slow);
  if (mds_) {
    // The request queues at the server on arrival; the latency outside the queue follows.
    const Time served = mds_->serve(sim_.now(), kernel::scale_time(config_.metadata.of(op).service, slow));
    sim_.sleep_until(kernel::add_time(served, d));
    return 0;
  }
  return d > 0 ? callers_time(d, client) : 0;
}

Time FileSystem::callers_time(Time t, int client) {
  assert(client >= 0 && t >= 0 && "callers_time REQUIRES a client and a time");
  // A local file system's metadata operation is a system call the kernel runs on the caller's
  // core (ext4, tmpfs: no device in the way), and a file's fixed cost is the caller's own work. A
  // network file system's waits on the network.
  if (config_.kind == MountKind::kLocal) return kernel_work(t, client);
  sim_.sleep_for(t);
  return 0;
}

Time FileSystem::kernel_work(Time t, int client) {
  assert(client >= 0 && t >= 0 && "kernel_work REQUIRES a client and a time");
  if (host::CpuScheduler* const cpu = cpu_of_ ? cpu_of_(client) : nullptr; cpu != nullptr) [[unlikely]] {
    cpu->run(t);
    return t;
  }
  sim_.sleep_for(t);
  return 0;
}

FsContents FileSystem::contents() const {
  FsContents c;
  names_.for_each_value([&c](const std::shared_ptr<Inode>& f) {
    c.files += f->content.files;
    c.bytes += f->written;
    if (f->mixture() || f->written < f->content.length) ++c.torn;
  });
  return c;
}

FileSystem::Freed FileSystem::unlinked(Inode& f) {
  if (!f.linked) return {};
  f.linked = false;
  if (frees_disk_apart()) [[unlikely]] {
    cache_->advance(sim_.now());  // the flusher's work up to now is on the disk
    f.on_disk_at_unlink = on_disk(f);  // before its dirty bytes go: what stays is on the disk
  }
  if (cache_) cache_->drop(f.ino);  // the kernel discards a deleted file's dirty pages
  // Only a linked file is charged, and its charge is part of used_: giving it back cannot go below 0.
  assert(f.charged <= used_ && "a file's charged bytes are counted in the mount's used bytes");
  used_ -= f.charged;
  return f.writers == 0 ? to_free(f) : Freed{};
}

std::uint64_t FileSystem::on_disk(const Inode& f) const {
  if (!frees_disk_apart()) return 0;
  // Written over itself (a writer that kept the file), a range counts once: at most its size.
  return std::min(f.written, f.synced_to_disk + cache_->written_back_bytes(f.ino));
}

FileSystem::Freed FileSystem::to_free(const Inode& f) const {
  const bool memory_rate = config_.truncate_bandwidth > 0;
  const bool disk_rate = frees_disk_apart();
  if (!memory_rate && !disk_rate) return {};
  // Without a rate of its own, bytes on the disk are freed as the rest.
  // (on_disk and on_disk_at_unlink are 0 unless frees_disk_apart.)
  const std::uint64_t disk = f.linked ? on_disk(f) : std::min(f.written, f.on_disk_at_unlink);
  assert(disk <= f.written && "a file has no more bytes on the disk than it holds");
  return {memory_rate ? f.written - disk : 0, disk};
}

void FileSystem::free_bytes(Freed freed, int client) {
  assert(client >= 0 && freed && "to_free decides what is freed");
  assert((freed.in_memory == 0 || config_.truncate_bandwidth > 0) &&
         (freed.on_disk == 0 || config_.truncate_disk_bandwidth > 0) && "each part is freed at its rate");
  Time t = 0;
  if (freed.in_memory > 0) {
    t = kernel::transfer_time(static_cast<double>(freed.in_memory), config_.truncate_bandwidth);
  }
  if (freed.on_disk > 0) [[unlikely]] {
    t = kernel::add_time(t, kernel::transfer_time(static_cast<double>(freed.on_disk), config_.truncate_disk_bandwidth));
  }
  t = kernel::scale_time(t, slowness());
  // Freeing pages is the kernel's work on the caller's CPU (truncate_inode_pages), as a copy is.
  kernel_work(t, client);
}

namespace {
// The core count of a transfer without a CPU model: no limit on the copies that run at once.
constexpr double kNoCoreLimit = 1e18;
}  // namespace

Time FileSystem::transfer(std::uint64_t bytes, int client, bool cached, bool read) {
  assert(client >= 0);
  const bool read_rate = read && config_.read_bandwidth > 0;
  // A read shares read_shared_bandwidth with the reads alone where the mount sets it (reads and
  // writes use the node's memory unlike: measured apart), else the writes' rate with them all.
  const bool read_shared = read_rate && config_.read_shared_bandwidth > 0;
  int& all = cached ? cache_transfers_ : active_transfers_;
  std::vector<int>& clients = cached ? client_cache_transfers_ : client_transfers_;
  const auto at = static_cast<std::size_t>(client);
  if (at >= clients.size()) clients.resize(at + 1, 0);
  ++all;
  ++clients[at];
  if (read_shared) [[unlikely]] {
    if (at >= client_cache_reads_.size()) client_cache_reads_.resize(at + 1, 0);
    ++reads_of(cached, at);
  }
  // A copy into or out of memory (the page cache, a local file system without one: tmpfs) is the
  // client's CPU time. A network transfer (nfs, lustre) waits on the network instead, and the disk
  // behind a page cache (fsync, a write past the dirty limit) is I/O wait: the disk moves the
  // bytes while the caller sleeps and its core runs other work.
  const bool memory_copy = cached || (config_.kind == MountKind::kLocal && !cache_);
  // Counted only where a read takes a rate of its own beside them.
  const bool counted_write = !read && memory_copy && config_.read_amid_writes_bandwidth > 0;
  if (counted_write) [[unlikely]] ++memory_writes_;
  // By index: another client's first transfer may grow (and move) the arrays while this one sleeps.
  struct Done {  // a process killed mid-transfer (ProcessKilled) stops taking bandwidth
    int& all;
    std::vector<int>& clients;
    std::size_t at;
    FileSystem& fs;
    bool cached, counted_read, counted_write;
    ~Done() {
      --all;
      --clients[at];
      if (counted_read) [[unlikely]] --fs.reads_of(cached, at);
      if (counted_write) [[unlikely]] --fs.memory_writes_;
    }
  } done{all, clients, at, *this, cached, read_shared, counted_write};
  const double slow = slowness();
  host::CpuScheduler* const cpu = cpu_of_ && memory_copy ? cpu_of_(client) : nullptr;
  // Without a CPU model every copy runs at once and they share the client's (node's) rate and
  // the mount's. On the node's cores a copy runs only while it has a core, at one stream's rate
  // (a local mount's client_bandwidth is then one copy's rate on a core); the rates that copies
  // share are shared by those running at once, at most one per core (the scheduler shares the
  // cores among the rest). Fixed for the transfer; only the counts change between its chunks.
  const double cores = cpu != nullptr ? static_cast<double>(cpu->config().cores) : kNoCoreLimit;
  const double write_stream_rate = config_.page_cache_stream_bandwidth > 0 ? config_.page_cache_stream_bandwidth
                                                                           : config_.page_cache_bandwidth;
  Time on_cores = 0;
  // Bounded: each step moves at least one byte.
  for (std::uint64_t left = bytes; left > 0;) {
    const std::uint64_t step = std::min(left, std::max<std::uint64_t>(1, config_.chunk));
    assert(memory_writes_ >= 0 && (memory_writes_ == 0 || config_.read_amid_writes_bandwidth > 0) &&
           "writes are counted once each, and only where the mount sets read_amid_writes_bandwidth");
    // A read's own rate, or its rate beside writes copying into memory as this chunk starts.
    const double read_own =
        read_rate && memory_writes_ > 0 ? config_.read_amid_writes_bandwidth : config_.read_bandwidth;
    const double client_rate = read_rate ? read_own : config_.client_bandwidth;
    const double stream_rate = read_rate ? read_own : write_stream_rate;
    // A copy through the page cache is the node's memory bandwidth, shared by its copies.
    assert(clients[at] > 0 && all >= clients[at] && "this transfer counts itself, for its client and in all");
    const double mine = std::min(static_cast<double>(clients[at]), cores);
    double rate;
    if (read_shared) [[unlikely]] {
      assert(reads_of(cached, at) > 0 && "a read counts itself among the reads");
      const double reading = std::min(static_cast<double>(reads_of(cached, at)), cores);
      rate = std::min(cached ? stream_rate : cpu != nullptr ? client_rate : client_rate / mine,
                      config_.read_shared_bandwidth / reading);
    } else {
      const double running = std::min(static_cast<double>(active_transfers_), cores);
      rate = cached ? std::min(config_.page_cache_bandwidth / mine, stream_rate)
                    : std::min(cpu != nullptr ? client_rate : client_rate / mine, config_.bandwidth / running);
    }
    // One stream to the disk behind a page cache goes at most at its own rate.
    if (!cached && cache_ && config_.disk_stream_bandwidth > 0) [[unlikely]] {
      rate = std::min(rate, config_.disk_stream_bandwidth);
    }
    Time t = kernel::scale_time(kernel::transfer_time(static_cast<double>(step), rate), slow);
    if (config_.chunk_jitter > 0) [[unlikely]] t = kernel::scale_time(t, chunk_factor());
    if (cpu != nullptr) [[unlikely]] {
      cpu->run(t);  // a memcpy: the client's CPU time, on its node's cores
      on_cores = kernel::add_time(on_cores, t);
    } else {
      sim_.sleep_for(t);
    }
    left -= step;
  }
  return on_cores;
}

Time FileSystem::file_cost(const Inode& f, bool read, int client) {
  const bool text = !f.content.text.empty();
  const Time fixed = read ? (text ? config_.text_read_overhead : config_.read_overhead)
                          : (text ? config_.text_write_overhead : config_.write_overhead);
  return fixed > 0 ? callers_time(kernel::scale_time(fixed, slowness()), client) : 0;
}

double FileSystem::chunk_factor() {
  const double j = config_.chunk_jitter;
  assert(j > 0 && j <= 0.9);
  // Drawn whatever the policy decides, so that the stream's later draws do not depend on it.
  const double drawn = chunk_jitter_.uniform(1 - j, 1 + j);
  switch (sim_.decide_draw()) {
    case 1: return 1 - j;
    case 2: return 1;
    case 3: return 1 + j;
    default: return drawn;
  }
}

std::string FileSystem::parent(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

void FileSystem::changed_dir(const std::string& path, int client) {
  if (!attr_cache_.empty()) attr_cache_.erase({client, path});
  if (config_.kind != MountKind::kNfs) return;
  // The client knows about its own change to the directory: its listings of it are dropped.
  const std::string dir = parent(path);
  for (auto it = dir_cache_.lower_bound({client, std::string()});
       it != dir_cache_.end() && it->first.first == client;) {
    it = parent(it->first.second) == dir ? dir_cache_.erase(it) : std::next(it);
  }
}

bool FileSystem::negative_cached(const std::string& path, int client) const {
  if (config_.kind != MountKind::kNfs || attr_cache_.empty()) return false;
  auto it = attr_cache_.find({client, path});
  return it != attr_cache_.end() && !it->second.view.exists && it->second.life.fresh(sim_.now());
}

FileView FileSystem::server_view(const std::string& path, int client) const {
  const auto* found = names_.file(path);
  if (found == nullptr) {
    if (names_.is_dir(path)) return {true, 0, {}, FsError::kOk, true};
    return {};
  }
  return server_view(**found, client);
}

FileView FileSystem::server_view(const Inode& f, int client) const {
  // A writer's client sees its writes; on local and lustre everyone does; on nfs other clients
  // see what reached the server.
  const bool coherent = config_.kind != MountKind::kNfs || f.writer_client == client;
  return {true, coherent ? f.written : f.flushed, f.content};
}

kernel::Result<int> FileSystem::create(const std::string& path, int client, int rank,
                                       OpenMode mode, std::uint64_t final_length) {
  int fd = -1;
  if (const FsError e = op_faults(); e != FsError::kOk) return kernel::Result<int>::error(to_string(e));
  const FsError e = do_create(path, client, rank, mode, final_length, &fd);
  if (e != FsError::kOk) return kernel::Result<int>::error(to_string(e));
  return fd;
}

FsError FileSystem::do_create(const std::string& path, int client, int rank, OpenMode mode,
                              std::uint64_t final_length, int* fd_out) {
  meta(MetaOp::kCreate, client);
  const auto* found = names_.file(path);
  std::shared_ptr<Inode> inode;
  std::uint64_t offset = 0;
  Freed freed;  // a truncated file's bytes
  if (found != nullptr) {
    if (mode == OpenMode::kExclusive) return FsError::kExists;
    inode = *found;
    if (mode == OpenMode::kTruncate) {  // the same inode, emptied: open readers see it shrink
      // A truncation under way holds the inode lock this one takes first.
      if (inode->truncating) [[unlikely]] wait_out_truncation(*inode);
      assert(inode->charged <= used_ && "a file's charged bytes are counted in the mount's used bytes");
      if (frees_disk_apart()) [[unlikely]] cache_->advance(sim_.now());  // the flusher's work up to now
      freed = to_free(*inode);
      inode->synced_to_disk = 0;  // its blocks go with its bytes
      used_ -= inode->charged;
      inode->charged = 0;
      inode->content = {rank, next_version_++, final_length, {}};
      inode->written = inode->flushed = 0;
      inode->mixed = false;
      inode->foreign.clear();
      if (cache_) cache_->drop(inode->ino);
    } else if (mode == OpenMode::kAppend) {
      offset = inode->written;
    }
  } else {
    if (mode == OpenMode::kAppend) return FsError::kNotFound;
    if (names_.is_dir(path)) return FsError::kIsDir;
    if (!names_.parent_exists(path)) return FsError::kNotFound;
    inode = std::make_shared<Inode>();
    inode->ino = next_ino_++;
    inode->content = {rank, next_version_++, final_length, {}};
    names_.put_file(path, inode);
    changed_dir(path, client);
  }
  ++inode->writers;
  inode->writer_client = client;
  if (!attr_cache_.empty()) attr_cache_.erase({client, path});
  const int fd = next_fd_++;
  const std::uint64_t version = inode->content.version;
  add_open(fd, {std::move(inode), offset, version, sim_.current(), client, path});
  *fd_out = fd;
  // Linux empties the file (its size is 0 to everyone at once), then frees its pages before
  // open returns, the file's writers held off meanwhile.
  if (freed) [[unlikely]] free_truncated(open_.at(fd).inode, freed, client);
  return FsError::kOk;
}

void FileSystem::free_truncated(std::shared_ptr<Inode> f, Freed freed, int client) {
  assert(f && freed && !f->truncating && "one truncation of a file at a time frees what it emptied");
  // Ends the truncation also when its process is killed while it frees (the unwind runs this).
  struct Done {
    std::shared_ptr<Inode> f;
    std::shared_ptr<kernel::Event> event;
    ~Done() {
      f->truncating.reset();
      event->set();
    }
  } done{f, std::make_shared<kernel::Event>(sim_, "truncation of inode " + std::to_string(f->ino))};
  f->truncating = done.event;
  free_bytes(freed, client);
}

void FileSystem::wait_out_truncation(Inode& f) {
  // Another truncation may start before a woken writer runs: it waits for that one too.
  while (f.truncating) {
    const std::shared_ptr<kernel::Event> freeing = f.truncating;
    freeing->wait();
  }
}

FsError FileSystem::write(int fd, std::uint64_t bytes, std::uint64_t* written) {
  if (written) *written = 0;
  auto it = open_.find(fd);
  if (it == open_.end()) return FsError::kBadFd;
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  // The fault point fs.write: a stall part way, or ENOSPC part way (the fraction AT of the bytes).
  return faults_.write(bytes, written, stats_, it->second.path,
                       [&](std::uint64_t n, std::uint64_t* done) { return do_write(fd, n, done); });
}

FsError FileSystem::do_write(int fd, std::uint64_t bytes, std::uint64_t* done) {
  if (done) *done = 0;
  auto it = open_.find(fd);
  if (it == open_.end()) return FsError::kBadFd;
  std::shared_ptr<Inode> f = it->second.inode;
  const int client = it->second.client;
  // The write's CPU time (under a CPU model): its fixed cost and its copies, as a live writer's
  // thread spends it (its making of the bytes and its write(2)s).
  if (bytes > 0) stats_.write_cpu = kernel::add_time(stats_.write_cpu, file_cost(*f, false, client));
  // Writers of one file take turns at its lock, a chunk at a time (write_lock.h).
  std::optional<WriteLock::Hold> turn;
  if (config_.write_lock && bytes > 0) [[unlikely]] take_write_lock(*f, turn);
  // The bytes become visible as each chunk lands.
  for (std::uint64_t left = bytes; left > 0;) {
    if (turn && left < bytes) [[unlikely]] turn->between_chunks(config_.write_lock_keep, write_turns_);
    // Each chunk is a write(2), which takes the inode lock a truncation holds.
    if (f->truncating) [[unlikely]] wait_out_truncation(*f);
    std::uint64_t step = std::min(left, std::max<std::uint64_t>(1, config_.chunk));
    // Past the capacity: what fits is written, then ENOSPC (bytes rewritten in place are free).
    const std::uint64_t offset = open_.at(fd).offset;
    bool full = false;
    if (config_.capacity > 0 && f->linked) {
      const std::uint64_t limit = f->charged + (config_.capacity > used_ ? config_.capacity - used_ : 0);
      if (offset + step > limit) {
        full = true;
        step = limit > offset ? limit - offset : 0;
      }
    }
    if (step > 0) {
      // Charged before the transfer, so that concurrent writers see the space taken.
      if (f->linked && offset + step > f->charged) {
        used_ += offset + step - f->charged;
        f->charged = offset + step;
      }
      assert((config_.capacity == 0 || used_ <= config_.capacity) && "a mount never holds more than its capacity");
      stats_.bytes_written += step;
      // Into the page cache while the dirty bytes stay under the limit, else through to the disk.
      bool cached = false;
      if (cache_) {
        cache_->advance(sim_.now());
        cached = cache_->fits(step);
      }
      if (const Time cpu = transfer(step, client, cached); cpu > 0) [[unlikely]] {
        stats_.write_cpu = kernel::add_time(stats_.write_cpu, cpu);
      }
      if (cached) {
        cache_->dirtied(f->ino, step, sim_.now());
      } else if (cache_) [[unlikely]] {
        f->synced_to_disk += step;  // written through to the disk, past the dirty limit
      }
    }
    if (full) {
      auto o = open_.find(fd);
      if (o != open_.end()) {
        landed(o->second, step);
        o->second.offset += step;
        f->written = std::max(f->written, o->second.offset);
        if (config_.kind != MountKind::kNfs) f->flushed = f->written;
      }
      if (done) *done += step;
      ++stats_.disk_full;
      return FsError::kDiskFull;
    }
    auto o = open_.find(fd);
    if (o == open_.end()) return FsError::kBadFd;  // closed by release() (the writer died)
    landed(o->second, step);
    o->second.offset += step;
    f->written = std::max(f->written, o->second.offset);
    f->writer_client = client;
    if (config_.kind != MountKind::kNfs) f->flushed = f->written;
    assert(f->flushed <= f->written && "a server never holds bytes that were not written");
    left -= step;
    if (done) *done += step;
  }
  return FsError::kOk;
}

void FileSystem::take_write_lock(Inode& f, std::optional<WriteLock::Hold>& turn) {
  // Named by inode: a name can be renamed.
  if (!f.write_lock) {
    f.write_lock = std::make_unique<WriteLock>(sim_, "write lock of inode " + std::to_string(f.ino) + " of " + name_);
  }
  turn.emplace(*f.write_lock);
}

void FileSystem::landed(const Open& o, std::uint64_t bytes) {
  Inode& f = *o.inode;
  if (o.version == f.content.version) {
    f.foreign.remove(o.offset, o.offset + bytes);
  } else {
    f.foreign.add(o.offset, o.offset + bytes);  // an older version's bytes in the new one
  }
}

FsError FileSystem::fsync(int fd) {
  auto it = open_.find(fd);
  if (it == open_.end()) return FsError::kBadFd;
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  const int client = it->second.client;
  meta(MetaOp::kStat, client);
  it = open_.find(fd);  // a concurrent release() may have closed it meanwhile
  if (it == open_.end()) return FsError::kBadFd;
  it->second.inode->flushed = it->second.inode->written;
  if (cache_) {  // the file's dirty bytes go to the disk; fsync returns when they are there
    cache_->advance(sim_.now());
    const std::uint64_t dirty = cache_->take(it->second.inode->ino);
    it->second.inode->synced_to_disk += dirty;
    stats_.bytes_synced += dirty;
    transfer(dirty, client, false);
  }
  return FsError::kOk;
}

FsError FileSystem::close(int fd) {
  if (open_.find(fd) == open_.end()) return FsError::kBadFd;
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  return do_close(fd);
}

FsError FileSystem::do_close(int fd) {
  auto it = open_.find(fd);
  if (it == open_.end()) return FsError::kBadFd;
  meta(MetaOp::kStat, it->second.client);  // close
  it = open_.find(fd);  // a concurrent release() may have closed it meanwhile
  if (it == open_.end()) return FsError::kBadFd;
  const Inode& f = *it->second.inode;
  const Freed freed = !f.linked && f.writers == 1 ? to_free(f) : Freed{};  // the last close of an unlinked file
  const int client = it->second.client;
  erase_open(it);
  if (freed) [[unlikely]] free_bytes(freed, client);
  return FsError::kOk;
}

void FileSystem::add_open(int fd, Open o) {
  open_by_owner_[o.owner].push_back(fd);
  open_.insert_or_assign(fd, std::move(o));
}

void FileSystem::erase_open(std::map<int, Open>::iterator it) {
  assert(it->second.inode->writers > 0 && "every open descriptor is one of its file's writers");
  it->second.inode->flushed = it->second.inode->written;
  --it->second.inode->writers;
  auto& fds = open_by_owner_[it->second.owner];
  const auto fd = std::find(fds.begin(), fds.end(), it->first);
  assert(fd != fds.end() && "an open descriptor is listed under its owner");
  fds.erase(fd);
  open_.erase(it);
}

FileView FileSystem::stat(const std::string& path, int client) {
  last_cache_use_ = CacheUse::kNone;
  if (const FsError e = op_faults(); e != FsError::kOk) {
    FileView v;
    v.error = e;
    return v;
  }
  if (config_.kind == MountKind::kNfs) {
    const auto* name = names_.file(path);
    if (name != nullptr && (*name)->writer_client == client) {
      return server_view(**name, client);  // the client's own file: its inode is current
    }
    auto it = attr_cache_.find({client, path});
    if (it != attr_cache_.end() && it->second.life.fresh(sim_.now())) {
      last_cache_use_ = CacheUse::kHit;
      return it->second.view;  // no server round trip
    }
    meta(MetaOp::kStat, client);
    last_cache_use_ = CacheUse::kMiss;
    const FileView v = server_view(path, client);
    const Time lo = v.exists ? config_.acregmin : config_.acdirmin;
    const Time hi = v.exists ? config_.acregmax : config_.acdirmax;
    CacheEntry& e = attr_cache_[{client, path}];
    const bool unchanged = e.view.exists == v.exists && e.view.size == v.size && e.view.content == v.content;
    e.life.refresh(sim_.now(), !unchanged, lo, hi);
    e.view = v;
    return v;
  }
  meta(MetaOp::kStat, client);
  return server_view(path, client);
}

bool FileSystem::glob_match(std::string_view pattern, std::string_view name, bool hidden) {
  if (!hidden && !name.empty() && name[0] == '.' && (pattern.empty() || pattern[0] != '.')) {
    return false;
  }
  // Iterative wildcard matching with one backtrack point: O(|pattern| * |name|) at worst.
  std::size_t p = 0, n = 0, star = std::string_view::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::vector<std::string> FileSystem::list(const std::string& pattern, int client, bool hidden,
                                          FsError* error) {
  const FsError e = op_faults();
  if (error) *error = e;
  last_cache_use_ = CacheUse::kNone;
  if (e != FsError::kOk) return {};
  // The nfs client's cache entry of this listing (local and lustre keep none).
  const std::string key = config_.kind == MountKind::kNfs ? pattern + (hidden ? "\n." : "") : std::string();
  if (config_.kind == MountKind::kNfs) {
    auto it = dir_cache_.find({client, key});
    if (it != dir_cache_.end() && it->second.life.fresh(sim_.now())) {
      last_cache_use_ = CacheUse::kHit;
      return it->second.names;
    }
  }
  meta(MetaOp::kReaddir, client);
  if (config_.kind == MountKind::kNfs) last_cache_use_ = CacheUse::kMiss;
  std::vector<std::string> out;
  std::string_view dir, base;
  if (split_pattern(pattern, dir, base)) {
    out = names_.children(dir, [&](const std::string& name) { return glob_match(base, name, hidden); });
  }
  if (config_.kind == MountKind::kNfs) {
    DirCacheEntry& e = dir_cache_[{client, key}];
    e.life.refresh(sim_.now(), e.names != out, config_.acdirmin, config_.acdirmax);
    e.names = out;
  }
  return out;
}

bool FileSystem::any(const std::string& pattern, int client, bool hidden, FsError* error) {
  if (config_.kind == MountKind::kNfs) return !list(pattern, client, hidden, error).empty();
  // What list() does on these mounts, less the names.
  const FsError e = op_faults();
  if (error) *error = e;
  if (e != FsError::kOk) return false;
  meta(MetaOp::kReaddir, client);
  std::string_view dir, base;
  return split_pattern(pattern, dir, base) &&
         names_.any_child(dir, [&](const std::string& name) { return glob_match(base, name, hidden); });
}

bool FileSystem::split_pattern(std::string_view pattern, std::string_view& dir, std::string_view& base) {
  if (pattern.find('/') == std::string_view::npos) return false;
  dir = dir_of(pattern);
  base = pattern.substr(dir.size() + 1);
  return true;
}

FsError FileSystem::mkdir(const std::string& path, int client) {
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  meta(MetaOp::kMkdir, client);
  if (names_.is_file(path) || names_.is_dir(path)) return FsError::kExists;
  if (!names_.parent_exists(path)) return FsError::kNotFound;
  names_.add_dir(path);
  changed_dir(path, client);
  return FsError::kOk;
}

FsError FileSystem::makedirs(const std::string& path, int client, bool parents, bool exist_ok) {
  FsError e = mkdir(path, client);
  if (e == FsError::kNotFound && parents) {
    const auto slash = path.rfind('/');
    if (slash != std::string::npos && slash > 0) {
      const FsError up = makedirs(path.substr(0, slash), client, true, true);
      if (up != FsError::kOk) return up;
      e = mkdir(path, client);
    }
  }
  if (e == FsError::kExists && exist_ok) {
    const FileView v = stat(path, client);
    if (v.error != FsError::kOk) return v.error;
    if (v.exists && v.dir) return FsError::kOk;
  }
  return e;
}

FsError FileSystem::rename(const std::string& from, const std::string& to, int client) {
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  meta(MetaOp::kRename, client);
  const auto* file = names_.file(from);
  if (file == nullptr && !names_.is_dir(from)) return FsError::kNotFound;
  if (from == config_.root || to == config_.root) return FsError::kBusy;
  if (from == to) return FsError::kOk;
  if (!names_.parent_exists(to)) return FsError::kNotFound;
  if (file != nullptr) {
    if (names_.is_dir(to)) return FsError::kIsDir;
    std::shared_ptr<Inode> inode = *file;
    Freed freed;  // the bytes of the file it replaces
    if (const auto* old = names_.file(to); old != nullptr && *old != inode) freed = unlinked(**old);
    names_.erase_file(from);
    names_.put_file(to, std::move(inode));
    changed_dir(from, client);
    changed_dir(to, client);
    if (freed) [[unlikely]] free_bytes(freed, client);
    return FsError::kOk;
  }
  if (names_.is_file(to)) return FsError::kNotDir;
  if (to.compare(0, from.size() + 1, from + "/") == 0) return FsError::kInvalid;  // under itself
  if (names_.is_dir(to)) {
    // Over a directory: only an empty one is replaced.
    if (names_.has_children(to)) return FsError::kNotEmpty;
    names_.erase_dir(to);
  }
  // A directory: everything under it moves at once.
  names_.move_dir(from, to);
  changed_dir(from, client);
  changed_dir(to, client);
  return FsError::kOk;
}

FsError FileSystem::unlink(const std::string& path, int client) {
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  meta(MetaOp::kUnlink, client);
  const auto* file = names_.file(path);
  if (file == nullptr) return FsError::kNotFound;
  const Freed freed = unlinked(**file);
  names_.erase_file(path);
  changed_dir(path, client);
  if (freed) [[unlikely]] free_bytes(freed, client);
  return FsError::kOk;
}

kernel::Result<ReadResult> FileSystem::read(const std::string& path, int client) {
  if (const FsError e = op_faults(); e != FsError::kOk) return kernel::Result<ReadResult>::error(to_string(e));
  return do_read(path, client);
}

kernel::Result<ReadResult> FileSystem::do_read(const std::string& path, int client) {
  // open() of a name the client looked up and found missing, while that negative entry lives:
  // ENOENT from the client's cache, with no round trip (Linux's nfs_lookup_revalidate keeps a
  // negative dentry with lookupcache=all, the default).
  if (negative_cached(path, client)) return kernel::Result<ReadResult>::error("ENOENT");
  // The read's CPU time (under a CPU model): its open, its fixed cost and its copy, as a live
  // reader's thread spends it.
  Time cpu = meta(MetaOp::kStat, client);  // open: close-to-open revalidates with the server
  const auto* file = names_.file(path);
  if (file == nullptr) {
    stats_.read_cpu = kernel::add_time(stats_.read_cpu, cpu);
    return kernel::Result<ReadResult>::error("ENOENT");
  }
  std::shared_ptr<Inode> f = *file;
  const FileView v = server_view(*f, client);
  assert(v.size <= f->written && "a reader sees no byte that was not written");
  ReadResult r{v.size, f->content, f->writers == 0, false};
  if (v.size > 0) cpu = kernel::add_time(cpu, file_cost(*f, true, client));
  stats_.bytes_read += v.size;
  cpu = kernel::add_time(cpu, transfer(v.size, client, cache_ != nullptr, true));  // what was written stays cached (no eviction)
  stats_.read_cpu = kernel::add_time(stats_.read_cpu, cpu);
  // Truncated or rewritten by another writer while it was read: what was read is a mixture.
  r.changed = f->mixture() || f->content != r.content || f->written < r.bytes;
  return r;
}

FsError FileSystem::copy(const std::string& from, const std::string& to, int client, int rank) {
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  const auto r = do_read(from, client);
  if (!r) return FsError::kNotFound;
  return do_write_copy(to, client, rank, *r);
}

FsError FileSystem::write_copy(const std::string& to, int client, int rank, const ReadResult& r) {
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  return do_write_copy(to, client, rank, r);
}

FsError FileSystem::do_write_copy(const std::string& to, int client, int rank, const ReadResult& r) {
  int fd = -1;
  if (const FsError e = do_create(to, client, rank, OpenMode::kTruncate, r.bytes, &fd); e != FsError::kOk) {
    return e;
  }
  // The copy carries the source's identity, so a copy of a torn file is still torn.
  open_.at(fd).inode->content = r.content;
  open_.at(fd).version = r.content.version;
  open_.at(fd).inode->mixed = r.changed;
  return write_and_close(fd, r.bytes);
}

FsError FileSystem::write_archive(const std::string& to, int client, int rank,
                                  const std::vector<ReadResult>& members) {
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  constexpr std::uint64_t kTarHeader = 512;
  ReadResult a;
  a.complete = true;
  a.content = {rank, 0, 0, {}, 0};
  for (const ReadResult& m : members) {
    a.bytes += m.bytes + kTarHeader;
    a.content.length += m.content.length + kTarHeader;
    a.content.files += m.content.files;
    a.changed = a.changed || !m.intact();
  }
  int fd = -1;
  if (const FsError e = do_create(to, client, rank, OpenMode::kTruncate, a.content.length, &fd); e != FsError::kOk) {
    return e;
  }
  a.content.version = open_.at(fd).inode->content.version;
  open_.at(fd).inode->content = a.content;
  open_.at(fd).version = a.content.version;
  open_.at(fd).inode->mixed = a.changed;
  return write_and_close(fd, a.bytes);
}

FsError FileSystem::write_and_close(int fd, std::uint64_t bytes) {
  const FsError e = do_write(fd, bytes);
  // A failed write still closes the file (Python's `with`), leaving what was written.
  const FsError c = do_close(fd);
  return e != FsError::kOk ? e : c;
}

void FileSystem::set_text(int fd, std::string text) { open_.at(fd).inode->content.text = std::move(text); }

FsError FileSystem::tree(const std::string& dir, int client, std::vector<std::string>& dirs,
                         std::vector<std::string>& files) {
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  meta(MetaOp::kReaddir, client);
  if (names_.is_file(dir)) return FsError::kNotDir;
  if (!names_.is_dir(dir)) return FsError::kNotFound;
  const std::size_t listed = dirs.size();
  names_.subtree(dir, dirs, files);
  for (std::size_t d = listed; d < dirs.size(); ++d) meta(MetaOp::kReaddir, client);  // each directory is listed
  return FsError::kOk;
}

FsError FileSystem::rmdir(const std::string& path, int client) {
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  meta(MetaOp::kUnlink, client);  // rmdir
  if (path == config_.root) return FsError::kBusy;
  if (names_.is_file(path)) return FsError::kNotDir;
  if (!names_.is_dir(path)) return FsError::kNotFound;
  if (names_.has_children(path)) return FsError::kNotEmpty;
  names_.erase_dir(path);
  changed_dir(path, client);
  return FsError::kOk;
}

FileSystem::FileLock& FileSystem::lock_of(const std::string& path, int client) {
  // localflock: each client has its own lock table, invisible to the others.
  const int table = config_.kind == MountKind::kLustre && config_.flock == FlockMode::kLocalflock ? client : -1;
  auto& slot = locks_[{table, path}];
  if (!slot) slot = std::make_unique<FileLock>(sim_, name_ + ":" + path);
  return *slot;
}

FsError FileSystem::lock(const std::string& path, int client, bool exclusive, bool blocking,
                         Time timeout) {
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  meta(MetaOp::kStat, client);  // a lock enqueue
  if (config_.kind == MountKind::kLustre && config_.flock == FlockMode::kNoflock) return FsError::kNoSys;
  if (!names_.is_file(path)) return FsError::kNotFound;
  return lock_of(path, client).acquire(exclusive, blocking, timeout);
}

void FileSystem::release(const kernel::Process* p) {
  for (auto& [key, lock] : locks_) {
    while (lock->release(p)) {  // bounded by the lock's holders
    }
  }
  // The kernel closes its files, in the order it opened them.
  auto mine = open_by_owner_.find(p);
  if (mine == open_by_owner_.end()) return;
  const boost::container::small_vector<int, 2> fds = mine->second;  // erase_open edits it
  for (const int fd : fds) {
    const auto it = open_.find(fd);
    assert(it != open_.end() && "an owner's descriptors are open");
    erase_open(it);
  }
}

FsError FileSystem::unlock(const std::string& path, int client) {
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  if (config_.kind == MountKind::kLustre && config_.flock == FlockMode::kNoflock) return FsError::kNoSys;
  return lock_of(path, client).release(sim_.current()) ? FsError::kOk : FsError::kNotFound;
}

}  // namespace racesim::storage
