// The operations a rank's file-system steps call on a mount, and the types they speak (mount
// settings, open modes, content identity, views, read results, errors). Two implementations:
// the model (FileSystem, fs.h: simulated time, consistency, bandwidth, faults) and a real
// directory (src/live/: the same operations as system calls, for live mode), so the storage
// primitives run one program against either.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/kernel/faults.h"
#include "sim/kernel/process.h"
#include "sim/kernel/status.h"
#include "sim/kernel/time.h"
#include "sim/storage/metadata_server.h"

namespace racesim::storage {

using kernel::Time;

enum class MountKind : std::uint8_t { kLocal, kNfs, kLustre };
enum class FlockMode : std::uint8_t { kFlock, kLocalflock, kNoflock };

struct MountConfig {
  MountKind kind = MountKind::kLocal;
  Time meta_latency = 20 * kernel::kMicrosecond;  // each metadata operation
  double bandwidth = 2e9;                          // bytes/s, shared by all transfers
  double client_bandwidth = 1e9;                   // bytes/s, the most one transfer gets
  // bytes/s of one read at most, in place of client_bandwidth (and of a page-cache read's
  // page_cache_stream_bandwidth); 0: reads at the rates of writes.
  double read_bandwidth = 0;
  // bytes/s that reads running at once share (on a local mount the node's memory, as copies out
  // of it use it), in place of `bandwidth` or page_cache_bandwidth for a read: a read runs at
  // min(read_bandwidth, read_shared_bandwidth / the reads running at once), whatever writes run
  // beside it. 0: reads share the writes' rates with them. Set only with read_bandwidth.
  double read_shared_bandwidth = 0;
  // bytes/s of one read at most, in place of read_bandwidth, for each chunk that starts while a
  // write of the mount's files copies its bytes into memory (the page cache, a local mount
  // without one), whether or not that write has a core then: copies at once on a node's cores
  // contend for its memory and caches, and live a read beside writes costs more CPU than one
  // alone. 0: read_bandwidth whatever writes run. Set only with read_bandwidth.
  double read_amid_writes_bandwidth = 0;
  std::uint64_t chunk = 8ull << 20;                // bytes per transfer step
  Time acregmin = 3 * kernel::kSecond;             // nfs attribute cache
  Time acregmax = 60 * kernel::kSecond;
  Time acdirmin = 30 * kernel::kSecond;            // nfs directory and negative-lookup cache
  Time acdirmax = 60 * kernel::kSecond;
  FlockMode flock = FlockMode::kFlock;             // lustre
  Time meta_jitter = 0;                            // extra metadata latency, uniform [0, jitter)
  // The mount point ("/cache"; "" for "/"): the directory that exists from the start. Any other
  // directory exists once made (mkdir), and a name can be created only in a directory that
  // exists (ENOENT otherwise), as on Linux.
  std::string root;
  MetadataConfig metadata;                         // threads 0: no server queue (meta_latency)
  std::uint64_t capacity = 0;                      // bytes the mount holds; 0: unlimited
  // Each chunk of a transfer takes its time x a factor uniform in [1 - chunk_jitter, 1 +
  // chunk_jitter), drawn from the mount's stream (a draw on the run's tape): a copy's time varies
  // chunk to chunk (caches, interrupts, the scheduler's tick), which keeps the chunks of
  // concurrent transfers from staying in step. 0: every chunk takes its time.
  // REQUIRES: 0 <= chunk_jitter <= 0.9.
  double chunk_jitter = 0;
  // A fixed cost per read and per write of a file's bytes, on top of the bytes: on a local mount
  // under a CPU model the caller's CPU time (a loader's buffers and parsing, a writer's setup),
  // otherwise a wait (a network mount's per-file round trips, the cost of small files).
  Time read_overhead = 0;
  Time write_overhead = 0;
  // The same for a small text (a pointer, a done marker: Content::text), which a reader or writer
  // handles without the buffers and checks of a file with content.
  Time text_read_overhead = 0;
  Time text_write_overhead = 0;
  // Write-back through the node's page cache (a local mount; sim/storage/page_cache.h): 0 is none
  // (every write and read goes at the mount's bandwidth, as on tmpfs or with O_DIRECT). Above 0:
  // writes and reads are copies at min(page_cache_stream_bandwidth, page_cache_bandwidth / the
  // client's copies); fsync writes the file's dirty bytes at the disk's rates (client_bandwidth,
  // bandwidth, shared by the transfers to the disk at once; each at most disk_stream_bandwidth);
  // past dirty_limit writes go through at the same rates.
  double page_cache_bandwidth = 0;                 // bytes/s of the node's copies together
  double page_cache_stream_bandwidth = 0;          // bytes/s of one copy at most; 0: no cap
  // With a page cache: one transfer to the disk behind it (an fsync, a write past the dirty
  // limit) goes at most this fast, while the disk's rates (client_bandwidth, bandwidth) are
  // what its transfers at once share: a disk that one stream does not keep busy (a virtual
  // disk, an SSD's queues). 0: no cap, a stream alone takes the whole disk.
  double disk_stream_bandwidth = 0;
  std::uint64_t dirty_limit = 0;                   // bytes; REQUIRED with page_cache_bandwidth
  std::uint64_t dirty_background = 0;              // bytes; 0: half of dirty_limit (Linux 10% / 20%)
  Time dirty_expire = 30 * kernel::kSecond;        // vm.dirty_expire_centisecs
  // Writers of one file take turns at its write lock, a chunk at a time (a local mount; Linux's
  // inode lock: sim/storage/write_lock.h); false: writers of one file copy at once.
  bool write_lock = false;
  // With write_lock: the odds that a writer between two chunks of one write keeps the lock while
  // another writer waits (0: it always hands it over). REQUIRES: 0 <= write_lock_keep <= 1.
  double write_lock_keep = 0;
  // bytes/s at which a local mount frees a file's bytes (Linux frees its pages before the call
  // returns): open(O_TRUNC) of a file holding bytes, unlink or rename over a file no descriptor
  // of the mount holds open, the last close of an unlinked one; the caller's CPU time. 0: free.
  double truncate_bandwidth = 0;
  // With a page cache: bytes/s at which it frees those of a file's bytes already written back
  // to the disk (their blocks and extents as well as their pages: ext4 freed a synced 180 MiB
  // file in about 42 ms on this project's VM, the same bytes still dirty in about 10), in place
  // of truncate_bandwidth for them. 0: they are freed as the rest.
  double truncate_disk_bandwidth = 0;
};

enum class OpenMode : std::uint8_t { kTruncate, kExclusive, kKeep, kAppend };

// Which write of which file a name holds.
struct Content {
  int writer = -1;            // rank
  std::uint64_t version = 0;  // 1, 2, ... per mount, in order of creation
  std::uint64_t length = 0;   // the final length the writer intends
  // A small text the writer writes (set_text: a `latest` pointer, a done marker's step), whose
  // bytes are `length`; empty for other files. A reader sees the prefix it read.
  std::string text;
  std::uint64_t files = 1;    // the files it holds: an archive (`pack`) holds its members
  bool operator==(const Content&) const = default;
};

enum class FsError : std::uint8_t {
  kOk, kExists, kNotFound, kNoSys, kWouldBlock, kTimedOut, kBadFd, kIo, kNoSpace, kIsDir, kNotEmpty, kNotDir,
  kInvalid, kBusy,
  kDiskFull  // ENOSPC: the mount's capacity is used up (kNoSpace is an injected enospc fault)
};
const char* to_string(FsError e);

// What one client sees of a name.
struct FileView {
  bool exists = false;
  std::uint64_t size = 0;
  Content content;
  FsError error = FsError::kOk;  // a fault (EIO) failed the stat: nothing was seen
  bool dir = false;              // it is a directory
};

struct ReadResult {
  std::uint64_t bytes = 0;  // bytes read (the size visible to the client when it opened)
  Content content;          // what the file held when the read began
  bool complete = false;    // the writer had closed the file when the read began
  bool changed = false;     // the file was truncated or rewritten by another writer meanwhile
  bool intact() const { return !changed && bytes == content.length; }
  // The text read: the prefix of the writer's text that was visible (all of it when intact).
  std::string text() const { return content.text.substr(0, std::min<std::uint64_t>(bytes, content.text.size())); }
};

// One kind of read or write of a file, operation by operation: each one's bytes and CPU time
// (seconds of virtual time), kept as the sums a least-squares line of CPU time against bytes
// needs (cost = fixed + bytes / rate: src/live/cost_fit.h). Sums add, so the operations of many
// ranks and runs pool by adding theirs.
struct CostSums {
  double count = 0, bytes = 0, seconds = 0, bytes_squared = 0, bytes_seconds = 0, seconds_squared = 0;
  // Of copies that ran beside others (FsStats' *_beside_costs): the sum over them of how many
  // ran at once (the most during each, itself included, at most one per CPU); 0 elsewhere. Not
  // one of kCostFields: a record holds it as fs.MOUNT.cost.KIND.running where it is not 0.
  double running = 0;
  // One operation of `b` bytes that took `s` seconds. REQUIRES: b >= 0, s >= 0.
  void add(double b, double s) {
    count += 1;
    bytes += b;
    seconds += s;
    bytes_squared += b * b;
    bytes_seconds += b * s;
    seconds_squared += s * s;
  }
};

struct FsStats {
  std::uint64_t meta_ops = 0;
  std::uint64_t bytes_written = 0;
  std::uint64_t bytes_read = 0;
  std::uint64_t eio_errors = 0;     // operations failed by an eio fault
  std::uint64_t enospc_errors = 0;  // writes failed by an enospc fault
  std::uint64_t stalls = 0;         // writes paused by a writer_stall fault
  std::uint64_t disk_full = 0;      // writes failed because the capacity was used up
  std::uint64_t bytes_synced = 0;   // dirty page-cache bytes fsync wrote to the disk
  // The CPU time of reads of a file (its open, fixed cost and copy) and of writes of its bytes
  // (fixed cost and copies), where it is accounted (`cpu_accounted`): in the model what a CPU
  // model charges to the caller's cores, live the caller's thread CPU clock around the call.
  bool cpu_accounted = false;
  Time read_cpu = 0;
  Time write_cpu = 0;
  // Where each read and write is measured one by one (`costs_recorded`: a live run, by the
  // caller's thread CPU clock, as read_cpu and write_cpu), its cost by kind: reads of a file
  // with a content identity (a model's load) and of a text, writes of a file's bytes and of a
  // text (write_text).
  bool costs_recorded = false;
  CostSums read_costs, text_read_costs, write_costs, text_write_costs;
  // Where the copies of a mount's files are counted across the ranks (a live run's board), the
  // reads and writes of a file's bytes (read_costs, write_costs) again, apart by their company:
  // alone (a read with no other read running beside it at any moment, a write with no other
  // copy, read or write, as the model's reads share read_shared_bandwidth among reads and its
  // writes share bandwidth among all copies) and beside others. Of the reads alone, those that a
  // write of the mount's files ran beside at some moment again (read_amid_writes_costs, as the
  // model's reads take read_amid_writes_bandwidth while a write copies).
  CostSums read_alone_costs, write_alone_costs, read_beside_costs, write_beside_costs;
  CostSums read_amid_writes_costs;
  // fsyncs, where costs are recorded: each the bytes written through its descriptor since it was
  // opened or last synced, and the call's real time (the disk's work is I/O wait, not the
  // caller's CPU), so that the disk's rate can be fitted to what the runs met. Where the syncs
  // are counted across the ranks, apart by their company again: alone (no other fsync of the
  // mount's files running at any moment) and beside others (the model's disk is shared by the
  // fsyncs at once).
  CostSums sync_costs, sync_alone_costs, sync_beside_costs;
};

// The kinds of FsStats' costs and the fields of each, by the names of their metrics
// (fs.MOUNT.cost.KIND.FIELD), for whoever writes them and whoever reads them back.
struct CostKind {
  const char* name;
  CostSums FsStats::*sums;
};
inline constexpr CostKind kCostKinds[] = {
    {"read", &FsStats::read_costs},
    {"text_read", &FsStats::text_read_costs},
    {"write", &FsStats::write_costs},
    {"text_write", &FsStats::text_write_costs},
    {"read_alone", &FsStats::read_alone_costs},
    {"write_alone", &FsStats::write_alone_costs},
    {"read_beside", &FsStats::read_beside_costs},
    {"write_beside", &FsStats::write_beside_costs},
    {"read_amid_writes", &FsStats::read_amid_writes_costs},
    {"sync", &FsStats::sync_costs},
    {"sync_alone", &FsStats::sync_alone_costs},
    {"sync_beside", &FsStats::sync_beside_costs},
};
struct CostField {
  const char* name;
  double CostSums::*value;
};
inline constexpr CostField kCostFields[] = {
    {"count", &CostSums::count},
    {"bytes", &CostSums::bytes},
    {"seconds", &CostSums::seconds},
    {"bytes_squared", &CostSums::bytes_squared},
    {"bytes_seconds", &CostSums::bytes_seconds},
    {"seconds_squared", &CostSums::seconds_squared},
};

// What a mount holds at a moment (at the end of a run: what never left it).
struct FsContents {
  std::uint64_t files = 0;  // counting an archive's members
  std::uint64_t bytes = 0;  // as written so far
  std::uint64_t torn = 0;   // files shorter than their writer meant, or mixtures (a copy cut short)
};

// Whether the last stat or listing a mount answered came from the client's cache: kNone on a
// mount that keeps none (local, lustre, a live directory) or for a client's own file, kHit from
// the cache (no server round trip: an attribute, a negative lookup or a listing that may be
// stale), kMiss from the server (the cache entry was missing or had expired).
enum class CacheUse : std::uint8_t { kNone, kHit, kMiss };
const char* to_string(CacheUse use);  // "none", "hit", "miss"

// A mount as the storage steps use it. Every operation's contract is FileSystem's (fs.h); an
// implementation documents where it differs. All operations REQUIRE a simulated process.
class Files {
 public:
  virtual ~Files() = default;
  virtual const std::string& name() const = 0;
  virtual const MountConfig& config() const = 0;
  virtual const FsStats& stats() const = 0;
  // The metadata server's queue, or nullptr when the mount has none.
  virtual const MetadataServer* metadata_server() const = 0;
  // The run's fault seam (nullptr: none) and the name faults aim at this mount by; the storage
  // fault points (mount_faults.h) bite where the operations meet them.
  virtual void set_faults(kernel::FaultSeam* seam, std::string mount) = 0;
  virtual std::uint64_t used() const = 0;  // bytes held (capacity accounting)
  virtual FsContents contents() const = 0;

  virtual kernel::Result<int> create(const std::string& path, int client, int rank, OpenMode mode,
                                     std::uint64_t final_length) = 0;
  virtual FsError write(int fd, std::uint64_t bytes, std::uint64_t* written = nullptr) = 0;
  virtual FsError fsync(int fd) = 0;
  virtual FsError close(int fd) = 0;
  virtual void set_text(int fd, std::string text) = 0;
  virtual FileView stat(const std::string& path, int client) = 0;
  // How the last stat(), list() or any() that returned was answered (for the trace of a
  // condition: read it right after the call, before the process blocks again).
  virtual CacheUse last_cache_use() const { return CacheUse::kNone; }
  virtual std::vector<std::string> list(const std::string& pattern, int client, bool hidden = false,
                                        FsError* error = nullptr) = 0;
  // Whether list(pattern, client, hidden, error) returns anything, with the same effects (the
  // metadata operation, faults, caches); an implementation may skip building the names.
  virtual bool any(const std::string& pattern, int client, bool hidden = false, FsError* error = nullptr) {
    return !list(pattern, client, hidden, error).empty();
  }
  virtual FsError mkdir(const std::string& path, int client) = 0;
  virtual FsError makedirs(const std::string& path, int client, bool parents, bool exist_ok) = 0;
  virtual FsError rename(const std::string& from, const std::string& to, int client) = 0;
  virtual FsError unlink(const std::string& path, int client) = 0;
  virtual FsError copy(const std::string& from, const std::string& to, int client, int rank) = 0;
  virtual FsError write_copy(const std::string& to, int client, int rank, const ReadResult& r) = 0;
  virtual FsError write_archive(const std::string& to, int client, int rank,
                                const std::vector<ReadResult>& members) = 0;
  virtual FsError tree(const std::string& dir, int client, std::vector<std::string>& dirs,
                       std::vector<std::string>& files) = 0;
  virtual FsError rmdir(const std::string& path, int client) = 0;
  virtual kernel::Result<ReadResult> read(const std::string& path, int client) = 0;
  virtual FsError lock(const std::string& path, int client, bool exclusive, bool blocking,
                       Time timeout = kernel::kTimeMax) = 0;
  virtual FsError unlock(const std::string& path, int client) = 0;
  // What the kernel does when a process dies: its flocks are released and its open files closed.
  virtual void release(const kernel::Process* p) = 0;
};

}  // namespace racesim::storage
