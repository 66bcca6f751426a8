#include "sim/storage/fs.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace racesim::storage {

const char* to_string(FsError e) {
  switch (e) {
    case FsError::kOk: return "ok";
    case FsError::kExists: return "EEXIST";
    case FsError::kNotFound: return "ENOENT";
    case FsError::kNoSys: return "ENOSYS";
    case FsError::kWouldBlock: return "EWOULDBLOCK";
    case FsError::kTimedOut: return "timed out";
    case FsError::kBadFd: return "EBADF";
  }
  return "?";
}

// flock(2): shared or exclusive, FIFO, granted on release to the waiters at the front that fit.
class FileSystem::FileLock final : public kernel::NamedWaitable {
 public:
  FileLock(kernel::Simulation& sim, std::string name) : NamedWaitable(sim, "flock", std::move(name)) {}

  FsError acquire(bool exclusive, bool blocking, Time timeout) {
    kernel::Process* self = sim_.current();
    if (waiters_.empty() && fits(exclusive)) {
      grant(self, exclusive);
      return FsError::kOk;
    }
    if (!blocking) return FsError::kWouldBlock;
    wants_[self] = exclusive;
    const auto status = sim_.wait_on(&waiters_, sim_.deadline_after(timeout));
    wants_.erase(self);
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

FileSystem::FileSystem(kernel::Simulation& sim, std::string name, MountConfig config)
    : sim_(sim), name_(std::move(name)), config_(config) {}

FileSystem::~FileSystem() = default;

void FileSystem::meta() {
  ++stats_.meta_ops;
  if (config_.meta_latency > 0) sim_.sleep_for(config_.meta_latency);
}

void FileSystem::transfer(std::uint64_t bytes, bool write) {
  (write ? stats_.bytes_written : stats_.bytes_read) += bytes;
  ++active_transfers_;
  // Bounded: each step moves at least one byte.
  for (std::uint64_t left = bytes; left > 0;) {
    const std::uint64_t step = std::min(left, std::max<std::uint64_t>(1, config_.chunk));
    const double rate = std::min(config_.client_bandwidth,
                                 config_.bandwidth / static_cast<double>(active_transfers_));
    sim_.sleep_for(static_cast<Time>(std::ceil(static_cast<double>(step) / rate * 1e9)));
    left -= step;
  }
  --active_transfers_;
}

FileView FileSystem::server_view(const std::string& path, int client) const {
  auto it = names_.find(path);
  if (it == names_.end()) return {};
  const Inode& f = *it->second;
  // A writer sees its own writes; on local and lustre everyone does; on nfs others see what
  // reached the server.
  const bool coherent = config_.kind != MountKind::kNfs || (f.open && f.writer_client == client);
  return {true, coherent ? f.written : f.flushed, f.content};
}

kernel::Result<int> FileSystem::create(const std::string& path, int client, int rank,
                                       bool exclusive, std::uint64_t final_length) {
  meta();
  auto it = names_.find(path);
  if (it != names_.end() && exclusive) return kernel::Result<int>::error("EEXIST");
  auto inode = std::make_shared<Inode>();
  inode->ino = next_ino_++;
  inode->content = {rank, next_version_++, final_length};
  inode->open = true;
  inode->writer_client = client;
  names_[path] = inode;
  attr_cache_.erase({client, path});
  const int fd = next_fd_++;
  open_[fd] = {std::move(inode)};
  return fd;
}

FsError FileSystem::write(int fd, std::uint64_t bytes) {
  auto it = open_.find(fd);
  if (it == open_.end()) return FsError::kBadFd;
  std::shared_ptr<Inode> f = it->second.inode;
  // The bytes become visible as each chunk lands.
  for (std::uint64_t left = bytes; left > 0;) {
    const std::uint64_t step = std::min(left, std::max<std::uint64_t>(1, config_.chunk));
    transfer(step, true);
    f->written += step;
    if (config_.kind != MountKind::kNfs) f->flushed = f->written;
    left -= step;
  }
  return FsError::kOk;
}

FsError FileSystem::fsync(int fd) {
  auto it = open_.find(fd);
  if (it == open_.end()) return FsError::kBadFd;
  meta();
  it->second.inode->flushed = it->second.inode->written;
  return FsError::kOk;
}

FsError FileSystem::close(int fd) {
  auto it = open_.find(fd);
  if (it == open_.end()) return FsError::kBadFd;
  meta();
  it->second.inode->flushed = it->second.inode->written;
  it->second.inode->open = false;
  open_.erase(it);
  return FsError::kOk;
}

FileView FileSystem::stat(const std::string& path, int client) {
  if (config_.kind == MountKind::kNfs) {
    auto it = attr_cache_.find({client, path});
    if (it != attr_cache_.end()) {
      const Time ttl = it->second.view.exists ? config_.acregmin : config_.acdirmin;
      if (sim_.now() - it->second.at < ttl) return it->second.view;  // no server round trip
    }
    meta();
    const FileView v = server_view(path, client);
    attr_cache_[{client, path}] = {sim_.now(), v};
    return v;
  }
  meta();
  return server_view(path, client);
}

std::vector<std::string> FileSystem::list(const std::string& dir, const std::string& contains,
                                          int client) {
  const std::string key = dir + "\n" + contains;
  if (config_.kind == MountKind::kNfs) {
    auto it = dir_cache_.find({client, key});
    if (it != dir_cache_.end() && sim_.now() - it->second.first < config_.acdirmin) {
      return it->second.second;
    }
  }
  meta();
  std::vector<std::string> out;
  for (auto it = names_.lower_bound(dir); it != names_.end() && it->first.compare(0, dir.size(), dir) == 0; ++it) {
    if (it->first.find(contains, dir.size()) != std::string::npos) out.push_back(it->first);
  }
  if (config_.kind == MountKind::kNfs) dir_cache_[{client, key}] = {sim_.now(), out};
  return out;
}

FsError FileSystem::rename(const std::string& from, const std::string& to, int client) {
  meta();
  auto it = names_.find(from);
  if (it == names_.end()) return FsError::kNotFound;
  names_[to] = it->second;
  names_.erase(from);
  attr_cache_.erase({client, from});
  attr_cache_.erase({client, to});
  return FsError::kOk;
}

FsError FileSystem::unlink(const std::string& path, int client) {
  meta();
  if (names_.erase(path) == 0) return FsError::kNotFound;
  attr_cache_.erase({client, path});
  return FsError::kOk;
}

std::optional<ReadResult> FileSystem::read(const std::string& path, int client) {
  meta();  // open: close-to-open revalidates with the server
  auto it = names_.find(path);
  if (it == names_.end()) return std::nullopt;
  std::shared_ptr<Inode> f = it->second;
  const FileView v = server_view(path, client);
  ReadResult r{v.size, f->content, !f->open};
  transfer(v.size, false);
  return r;
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
  meta();
  if (config_.kind == MountKind::kLustre && config_.flock == FlockMode::kNoflock) return FsError::kNoSys;
  if (!names_.count(path)) return FsError::kNotFound;
  return lock_of(path, client).acquire(exclusive, blocking, timeout);
}

FsError FileSystem::unlock(const std::string& path, int client) {
  if (config_.kind == MountKind::kLustre && config_.flock == FlockMode::kNoflock) return FsError::kNoSys;
  return lock_of(path, client).release(sim_.current()) ? FsError::kOk : FsError::kNotFound;
}

}  // namespace racesim::storage
