// A file system mount shared by the simulated ranks: a namespace of names pointing at inodes, data
// written in chunks over time at a bandwidth shared among concurrent transfers, and the
// consistency of the mount's kind, which decides what another client sees while a file is being
// written.
//
//   local   one node's POSIX file system: every client sees every write at once.
//   nfs     close-to-open consistency (RFC 7530 s. 10.3.1, Linux nfs(5)): a writer's data reaches
//           the server at close or fsync; other clients see the size the server has. Each
//           client caches attributes for acregmin (default 3 s) and directory contents,
//           including negative lookups, for acdirmin (default 30 s), so a new file can stay
//           invisible to a client that looked for it recently.
//   lustre  a coherent namespace and data (like local, across nodes), with flock behaviour set
//           by the mount option: flock (coherent across clients), localflock (coherent on one
//           client only) or noflock (flock fails with ENOSYS).
//
// Every file carries its content's identity: who wrote it, which version and its final length,
// so a reader can tell an intact file from a torn one (ReadResult::intact).
//
// Bandwidth: a transfer moves `chunk` bytes at a time; each chunk takes chunk / rate, where the
// rate is min(client_bandwidth, bandwidth / active transfers) when the chunk starts. This is
// processor sharing at chunk granularity: N equal concurrent writes of S bytes finish after
// about N*S/bandwidth (tested against that closed form).
//
// A client is a node (ranks on one node share a client: its caches and its local locks); a
// writer is a rank.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sim/kernel/simulation.h"
#include "sim/kernel/status.h"
#include "sim/kernel/sync.h"

namespace racesim::storage {

using kernel::Time;

enum class MountKind : std::uint8_t { kLocal, kNfs, kLustre };
enum class FlockMode : std::uint8_t { kFlock, kLocalflock, kNoflock };

struct MountConfig {
  MountKind kind = MountKind::kLocal;
  Time meta_latency = 20 * kernel::kMicrosecond;  // each metadata operation
  double bandwidth = 2e9;                          // bytes/s, shared by all transfers
  double client_bandwidth = 1e9;                   // bytes/s, the most one transfer gets
  std::uint64_t chunk = 8ull << 20;                // bytes per transfer step
  Time acregmin = 3 * kernel::kSecond;             // nfs attribute cache
  Time acdirmin = 30 * kernel::kSecond;            // nfs directory and negative-lookup cache
  FlockMode flock = FlockMode::kFlock;             // lustre
};

// Which write of which file a name holds.
struct Content {
  int writer = -1;            // rank
  std::uint64_t version = 0;  // 1, 2, ... per mount, in order of creation
  std::uint64_t length = 0;   // the final length the writer intends
  bool operator==(const Content&) const = default;
};

// What one client sees of a name.
struct FileView {
  bool exists = false;
  std::uint64_t size = 0;
  Content content;
};

struct ReadResult {
  std::uint64_t bytes = 0;  // bytes read (what was visible to the client when it opened)
  Content content;
  bool complete = false;    // the writer had closed the file
  bool intact() const { return complete && bytes == content.length; }
};

enum class FsError : std::uint8_t { kOk, kExists, kNotFound, kNoSys, kWouldBlock, kTimedOut, kBadFd };
const char* to_string(FsError e);

struct FsStats {
  std::uint64_t meta_ops = 0;
  std::uint64_t bytes_written = 0;
  std::uint64_t bytes_read = 0;
};

class FileSystem {
 public:
  FileSystem(kernel::Simulation& sim, std::string name, MountConfig config);
  ~FileSystem();
  FileSystem(const FileSystem&) = delete;
  FileSystem& operator=(const FileSystem&) = delete;
  const MountConfig& config() const { return config_; }
  const FsStats& stats() const { return stats_; }

  // All operations REQUIRE a simulated process and block it for their latency or transfer.
  // Creates (or truncates to a new version) `path` for writing by `rank` on `client`; with
  // `exclusive` (O_CREAT|O_EXCL) an existing name is kExists. The name is visible at once with
  // size 0 (on nfs: to other clients once their caches expire).
  kernel::Result<int> create(const std::string& path, int client, int rank, bool exclusive,
                             std::uint64_t final_length);
  // Appends `bytes` to the open file, chunk by chunk.
  FsError write(int fd, std::uint64_t bytes);
  FsError fsync(int fd);
  FsError close(int fd);
  FileView stat(const std::string& path, int client);
  // Names in the mount starting with `dir` and containing `contains`, sorted (glob "dir/*x*").
  std::vector<std::string> list(const std::string& dir, const std::string& contains, int client);
  // Atomically points `to` at `from`'s file (replacing what `to` held) and removes `from`.
  FsError rename(const std::string& from, const std::string& to, int client);
  FsError unlink(const std::string& path, int client);
  // Reads the whole file as `client` sees it on open; costs the transfer of what it reads.
  std::optional<ReadResult> read(const std::string& path, int client);
  // flock(2) on `path` (which must exist): shared or exclusive, blocking (up to `timeout`) or
  // not (kWouldBlock). lustre noflock: kNoSys. lustre localflock: locks of different clients
  // do not see each other.
  FsError lock(const std::string& path, int client, bool exclusive, bool blocking,
               Time timeout = kernel::kTimeMax);
  FsError unlock(const std::string& path, int client);

 private:
  struct Inode {
    std::uint64_t ino = 0;
    Content content;
    std::uint64_t written = 0;  // bytes the writer has written
    std::uint64_t flushed = 0;  // bytes on the server (nfs: at fsync/close)
    bool open = false;
    int writer_client = -1;
  };
  struct Open {
    std::shared_ptr<Inode> inode;
  };
  class FileLock;
  struct CacheEntry {
    Time at = 0;
    FileView view;
  };

  void meta();                                      // one metadata operation
  void transfer(std::uint64_t bytes, bool write);   // bandwidth-shared transfer
  FileView server_view(const std::string& path, int client) const;
  FileLock& lock_of(const std::string& path, int client);

  kernel::Simulation& sim_;
  std::string name_;
  MountConfig config_;
  FsStats stats_;
  std::map<std::string, std::shared_ptr<Inode>> names_;
  std::map<int, Open> open_;
  int next_fd_ = 3;
  std::uint64_t next_ino_ = 1;
  std::uint64_t next_version_ = 1;
  int active_transfers_ = 0;
  std::map<std::pair<int, std::string>, CacheEntry> attr_cache_;  // nfs, per client
  std::map<std::pair<int, std::string>, std::pair<Time, std::vector<std::string>>> dir_cache_;
  std::map<std::pair<int, std::string>, std::unique_ptr<FileLock>> locks_;
};

}  // namespace racesim::storage
