// A file system mount shared by the simulated ranks: a namespace of names pointing at inodes, data
// written in chunks over time at a bandwidth shared among concurrent transfers, and the
// consistency of the mount's kind, which decides what another client sees while a file is being
// written.
//
//   local   one node's POSIX file system: every client sees every write at once.
//   nfs     close-to-open consistency (RFC 7530 s. 10.3.1, Linux nfs(5)): a writer's data reaches
//           the server at close or fsync; other clients see the size the server has. Each
//           client caches attributes and directory contents, including negative lookups, so a
//           new file can stay invisible to a client that looked for it recently. As in Linux,
//           an entry's lifetime starts at acregmin (3 s; directories and negative lookups:
//           acdirmin, 30 s), doubles when a revalidation after it ran out finds nothing
//           changed, up to acregmax (acdirmax), both 60 s, and falls back to the minimum on a
//           change (cache_lifetime.h).
//   lustre  a coherent namespace and data (like local, across nodes), with flock behaviour set
//           by the mount option: flock (coherent across clients), localflock (coherent on one
//           client only) or noflock (flock fails with ENOSYS).
//
// Every file carries its content's identity: who wrote it, which version and its final length,
// so a reader can tell an intact file from a torn one (ReadResult::intact).
//
// Bandwidth: a transfer moves `chunk` bytes at a time; each chunk takes chunk / rate, where the
// rate is min(client_bandwidth / the client's active transfers, bandwidth / all active
// transfers) when the chunk starts. This is processor sharing at chunk granularity: N equal
// concurrent writes of S bytes from N clients finish after about N*S/bandwidth (tested against
// that closed form); with chunk_jitter each chunk's time varies by up to that fraction. Each
// metadata operation costs meta_latency plus a jitter drawn uniformly from [0, meta_jitter) from
// the mount's own seeded stream; with a metadata server (MountConfig::metadata.threads > 0,
// sim/storage/metadata_server.h) it costs instead its kind's latency plus the jitter plus its
// wait in the server's queue and its service there. Each read or write of a file's bytes also
// costs read_overhead or write_overhead (a small text's: text_read_overhead,
// text_write_overhead): on a local mount the caller's own work (CPU time under a CPU model, like
// a local metadata operation), on a network mount a wait (the per-file round trips of small
// files). A mount with a capacity fails a write past it with ENOSPC (FsError::kDiskFull), freed
// by unlink.
//
// Opening for write: kTruncate is O_CREAT|O_TRUNC (an existing file is truncated in place: a
// reader in the middle of reading it gets a torn result; a writer that had it open keeps writing
// at its own offset, so its later bytes land in the new version: until the new writer rewrites
// them, the file is a mixture of two versions, and stays one if the older writer's bytes land
// last), kExclusive is O_CREAT|O_EXCL, kKeep is
// O_CREAT alone (an existing file keeps its content; writes from offset 0 rewrite it, as a
// writer of the same bytes does), kAppend writes at the end of an existing file.
//
// A client is a node (ranks on one node share a client: its caches and its local locks); a
// writer is a rank.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <boost/container/small_vector.hpp>

#include "sim/kernel/faults.h"
#include "sim/storage/cache_lifetime.h"
#include "sim/kernel/random.h"
#include "sim/host/cpu_scheduler.h"
#include "sim/kernel/simulation.h"
#include "sim/kernel/status.h"
#include "sim/kernel/sync.h"
#include "sim/storage/byte_ranges.h"
#include "sim/storage/files.h"
#include "sim/storage/metadata_server.h"
#include "sim/storage/mount_faults.h"
#include "sim/storage/page_cache.h"
#include "sim/storage/path_index.h"
#include "sim/storage/write_lock.h"

namespace racesim::storage {

class FileSystem final : public Files {
 public:
  // `jitter` draws the metadata latency jitter (unused when config.meta_jitter is 0).
  FileSystem(kernel::Simulation& sim, std::string name, MountConfig config,
             kernel::RandomStream jitter = kernel::RandomStream(0));
  ~FileSystem();
  FileSystem(const FileSystem&) = delete;
  FileSystem& operator=(const FileSystem&) = delete;
  const MountConfig& config() const override { return config_; }
  const FsStats& stats() const override { return stats_; }
  const std::string& name() const override { return name_; }
  // The metadata server's queue, or nullptr when the mount has none.
  const MetadataServer* metadata_server() const override { return mds_.get(); }
  std::uint64_t used() const override { return used_; }  // bytes held (capacity accounting)
  FsContents contents() const override;

  // Where the storage faults (sim/storage/faults.h) come from: the run's seam, asked at every
  // operation for the calling process's rank and this mount's name `mount` (the name a fault
  // plan aims at: one per mount, shared by a local mount's per-node instances). nullptr: none.
  void set_faults(kernel::FaultSeam* seam, std::string mount) override { faults_.set(seam, std::move(mount)); }
  // The cores of each client's node (sim/host/cpu_scheduler.h), when the platform models them:
  // a copy into or out of the page cache, and every transfer of a local mount without one
  // (tmpfs: write(2) and read(2) are memcpys there), is the client's CPU work, run on them chunk
  // by chunk, so a writer descheduled between two chunks lands its bytes later. So is a local
  // mount's metadata operation (a system call the kernel runs on the caller's core: it keeps its
  // core, or waits for one). A copy on a core runs at one stream's rate (a local mount's
  // client_bandwidth; the page cache's stream bandwidth), and the mount's (or page cache's)
  // bandwidth is shared by the copies running at once, at most one per core. The disk behind a
  // page cache (fsync, a write past the dirty limit) and the network (nfs, lustre, and their
  // metadata) are waited for off the cores. Unset: each copy and metadata operation takes its
  // time as if on a core of its own, sharing the client's and the mount's rates.
  void set_cpus(std::function<host::CpuScheduler*(int client)> cpu_of) {
    cpu_of_ = std::move(cpu_of);
    stats_.cpu_accounted = static_cast<bool>(cpu_of_);
  }

  // All operations REQUIRE a simulated process and block it for their latency or transfer.
  // Opens `path` for writing by `rank` on `client` (see OpenMode); a new file gets the content
  // identity (rank, next version, final_length). kExclusive on an existing name: "EEXIST";
  // kAppend on a missing one: "ENOENT". A new name is visible at once with size 0 (on nfs: to
  // other clients once their caches expire). The fd belongs to the calling process.
  kernel::Result<int> create(const std::string& path, int client, int rank, OpenMode mode,
                             std::uint64_t final_length) override;
  kernel::Result<int> create(const std::string& path, int client, int rank, bool exclusive,
                             std::uint64_t final_length) {
    return create(path, client, rank, exclusive ? OpenMode::kExclusive : OpenMode::kTruncate,
                  final_length);
  }
  // Appends `bytes` to the open file, chunk by chunk. Faults: writer_stall pauses it part way,
  // enospc stops it part way with kNoSpace. `written`, when given, receives the bytes written.
  FsError write(int fd, std::uint64_t bytes, std::uint64_t* written = nullptr) override;
  FsError fsync(int fd) override;
  FsError close(int fd) override;
  // The client's view of `path` (a file or a directory). On nfs, a file the client itself is
  // writing is seen as written; other names come from the attribute cache while it is fresh.
  FileView stat(const std::string& path, int client) override;
  CacheUse last_cache_use() const override { return last_cache_use_; }
  // The names in the directory of `pattern` matching its last component, a glob with * and ?
  // (fnmatch: a leading wildcard does not match a leading '.', unless `hidden`), sorted. Not
  // recursive. On nfs a client reuses its listing while its cache entry lives (acdirmin to
  // acdirmax), except after its own changes to that directory.
  // `error`, when given, receives kIo when a fault failed the listing (which is then empty).
  std::vector<std::string> list(const std::string& pattern, int client, bool hidden = false,
                                FsError* error = nullptr) override;
  // Whether list() would return anything: on local and lustre mounts without building the
  // names (a glob condition polled by every rank needs no more); nfs lists, for its cache.
  bool any(const std::string& pattern, int client, bool hidden = false, FsError* error = nullptr) override;
  // The same as list("DIR*CONTAINS*", client, hidden = true): ORT's scan for a cache file whose
  // name contains a key.
  std::vector<std::string> list(const std::string& dir, const std::string& contains, int client) {
    return list(dir + "*" + contains + "*", client, true);
  }
  // Creates a directory. Errors: "EEXIST" (the name exists), "ENOENT" (its parent does not).
  FsError mkdir(const std::string& path, int client) override;
  // os.makedirs(path, exist_ok): mkdir; on ENOENT (with `parents`) the parent first, then again;
  // on EEXIST (with `exist_ok`) a stat checks that it is a directory. Each call is a metadata
  // operation. Bounded by the path's depth.
  FsError makedirs(const std::string& path, int client, bool parents, bool exist_ok) override;
  // Atomically points `to` at `from` (a file, or a directory with everything under it),
  // replacing what `to` held, and removes `from`, as rename(2): "ENOENT" when `from` or the
  // directory of `to` does not exist; a directory replaces only an empty directory
  // ("ENOTEMPTY"), never a file ("ENOTDIR"); a file never replaces a directory ("EISDIR"); a
  // directory cannot move under itself ("EINVAL"), and the mount point can neither move nor be
  // replaced ("EBUSY").
  FsError rename(const std::string& from, const std::string& to, int client) override;
  FsError unlink(const std::string& path, int client) override;
  // Reads `from` and writes it to `to` (kTruncate) as `rank`: a copy of a torn file is torn.
  FsError copy(const std::string& from, const std::string& to, int client, int rank) override;
  // Writes what a read (of this or another mount) returned to `to` (kTruncate: open, write,
  // close) as `rank`, keeping the source's identity: the second half of a copy across mounts.
  FsError write_copy(const std::string& to, int client, int rank, const ReadResult& r) override;
  // Writes an archive of `members` (what reads returned) to `to` (open, write, close) as `rank`:
  // its length is theirs plus a 512-byte header each (tar), and it holds their file count. It is
  // torn if a member was.
  FsError write_archive(const std::string& to, int client, int rank, const std::vector<ReadResult>& members) override;
  // The file being written through `fd` holds `text` (its length must be the file's final
  // length). REQUIRES: fd is open.
  void set_text(int fd, std::string text) override;
  // Everything under directory `dir`, as shutil.copytree walks it: its subdirectories (parents
  // first) and its files, sorted. Costs one metadata operation per directory listed. Errors:
  // "ENOENT", "ENOTDIR".
  FsError tree(const std::string& dir, int client, std::vector<std::string>& dirs, std::vector<std::string>& files) override;
  // Removes an empty directory. Errors: "ENOENT", "ENOTEMPTY", "ENOTDIR", "EBUSY" (the mount point).
  FsError rmdir(const std::string& path, int client) override;
  // Reads the whole file as `client` sees it on open; costs the transfer of what it reads.
  // Errors: "ENOENT", "EIO" (a fault).
  kernel::Result<ReadResult> read(const std::string& path, int client) override;
  // flock(2) on `path` (which must exist): shared or exclusive, blocking (up to `timeout`) or
  // not (kWouldBlock). lustre noflock: kNoSys. lustre localflock: locks of different clients
  // do not see each other.
  FsError lock(const std::string& path, int client, bool exclusive, bool blocking,
               Time timeout = kernel::kTimeMax) override;
  FsError unlock(const std::string& path, int client) override;
  // What the kernel does when a process dies: its flocks are released and its open files closed
  // (a file it was writing stays as far as it got: torn).
  void release(const kernel::Process* p) override;
  static bool glob_match(std::string_view pattern, std::string_view name, bool hidden);

 private:
  // A glob's directory (before its last '/') and last component; false when it has no '/'
  // (then it matches nothing).
  static bool split_pattern(std::string_view pattern, std::string_view& dir, std::string_view& base);
  struct Inode {
    std::uint64_t ino = 0;
    Content content;
    std::uint64_t written = 0;  // the file's size as its writer's client knows it
    std::uint64_t flushed = 0;  // the size on the server (nfs: at fsync/close)
    int writers = 0;            // open write descriptors
    int writer_client = -1;     // the client of the last writer
    bool mixed = false;         // a copy of a torn or changing file
    // Bytes an older writer put there after a truncation (through a descriptor opened for an
    // earlier version), not yet rewritten by the current one: a mixture while not empty.
    ByteRanges foreign;
    bool mixture() const { return mixed || !foreign.empty(); }
    bool linked = true;         // a name points at it (its bytes count against the capacity)
    std::uint64_t charged = 0;  // bytes counted in used_ for it (reserved as each chunk starts)
    // With a page cache: its bytes its fsyncs wrote to the disk and those written through past
    // the dirty limit (the flusher's are the page cache's), since it was created or truncated;
    // and of its bytes, those on the disk when its last name went (their freeing costs
    // truncate_disk_bandwidth at its last close).
    std::uint64_t synced_to_disk = 0;
    std::uint64_t on_disk_at_unlink = 0;
    std::unique_ptr<WriteLock> write_lock;  // MountConfig::write_lock: made at its first write
    // Set while an open with O_TRUNC frees the file's bytes (free_bytes), null otherwise. Linux
    // holds the file's inode lock through a truncation (do_truncate) and a write(2) takes the
    // same lock, so the file's writers start no chunk until the freeing ends (wait_out_truncation).
    // Shared: a woken waiter holds it while the truncation resets the pointer.
    std::shared_ptr<kernel::Event> truncating;
  };
  struct Open {
    std::shared_ptr<Inode> inode;
    std::uint64_t offset = 0;
    std::uint64_t version = 0;  // the content version it was opened for (Content::version)
    const kernel::Process* owner = nullptr;
    int client = -1;
    std::string path;
  };
  class FileLock;
  struct CacheEntry {
    CacheLifetime life;
    FileView view;
  };
  struct DirCacheEntry {
    CacheLifetime life;
    std::vector<std::string> names;
  };

  // One metadata operation, by `client`; returns the time of it charged to the client's core
  // (0 without a CPU model or on a network mount).
  Time meta(MetaOp op, int client);
  // `t` of the kernel's work for `client` on a local file system (a system call, the freeing of
  // pages): on its node's cores with a CPU model (it keeps its core, or waits for one), else a
  // sleep. Returns the time run on a core (t or 0). REQUIRES: client >= 0, t >= 0.
  Time kernel_work(Time t, int client);
  // `t` of `client`'s time on this mount that is not a transfer (a metadata call, a file's fixed
  // cost): kernel_work on a local mount, a wait on the network on another.
  // Returns the time run on a core. REQUIRES: client >= 0, t >= 0.
  Time callers_time(Time t, int client);
  // A read's (`read`) or a write's fixed cost on `f` for `client` (MountConfig::read_overhead and
  // the others; a text's own), as callers_time; returns the time run on a core. REQUIRES: client >= 0.
  Time file_cost(const Inode& f, bool read, int client);
  // Moves `bytes` for `client`, chunk by chunk: through the page cache (`cached`) or at the
  // mount's shared bandwidth; a read (`read`) at the mount's read_bandwidth where it sets one,
  // sharing read_shared_bandwidth with the reads alone where it sets that, and at
  // read_amid_writes_bandwidth in its place for a chunk while a write copies into memory.
  // Returns the time its chunks ran on the client's cores (0 without a CPU model, or for bytes
  // that go to the disk or over the network). REQUIRES: client >= 0 (a node; it indexes the
  // per-client counts).
  Time transfer(std::uint64_t bytes, int client, bool cached, bool read = false);
  // A chunk's time factor: uniform in [1 - chunk_jitter, 1 + chunk_jitter) from the mount's
  // stream, or the run's policy's choice of the range's low end, middle or high end (a draw on the
  // tape). REQUIRES: config chunk_jitter > 0.
  double chunk_factor();
  // The bytes whose freeing costs time: in memory only (the page cache's pages, tmpfs's), at
  // truncate_bandwidth, and already written back to the disk behind a page cache, at
  // truncate_disk_bandwidth (their blocks too). Empty when the mount sets neither rate.
  struct Freed {
    std::uint64_t in_memory = 0;
    std::uint64_t on_disk = 0;
    explicit operator bool() const { return in_memory > 0 || on_disk > 0; }
  };
  // What freeing `f` costs time for now (its dirty bytes still in the page cache; an unlinked
  // file's split as it was when its last name went). Off the hot path: only where bytes go.
  Freed to_free(const Inode& f) const;
  // The bytes of `f` on the disk (fsynced, written through, written back by the flusher), at
  // most its size; 0 unless frees_disk_apart().
  std::uint64_t on_disk(const Inode& f) const;
  // Whether bytes on the disk are freed at a rate of their own (a page cache and
  // truncate_disk_bandwidth); only then does freeing ask the page cache what is on the disk.
  bool frees_disk_apart() const { return cache_ && config_.truncate_disk_bandwidth > 0; }
  // `client` frees `freed`: the kernel's work, its CPU time on its node's cores with a CPU
  // model, else a sleep. REQUIRES: client >= 0, freed not empty (from to_free).
  [[gnu::cold, gnu::noinline]] void free_bytes(Freed freed, int client);
  // The fault point fs.op (MountFaults::op), counting EIO.
  FsError op_faults() {
    const FsError e = faults_.op();
    if (e == FsError::kIo) ++stats_.eio_errors;
    return e;
  }
  // The caller's slow_storage factor (1 without one), drawn per metadata operation and transfer.
  double slowness() { return faults_.slowness(); }
  FsError do_create(const std::string& path, int client, int rank, OpenMode mode,
                    std::uint64_t final_length, int* fd);
  // Writes up to `bytes`; `done` receives what was written (less on ENOSPC).
  FsError do_write(int fd, std::uint64_t bytes, std::uint64_t* done = nullptr);
  // Frees the bytes an open with O_TRUNC emptied `f` of (free_bytes), holding its writers off
  // meanwhile (Inode::truncating). REQUIRES: freed not empty; no truncation of `f` under way.
  [[gnu::cold, gnu::noinline]] void free_truncated(std::shared_ptr<Inode> f, Freed freed, int client);
  // Waits while a truncation frees `f`'s bytes (Inode::truncating), as a write(2) waits for the
  // inode lock the truncation holds. ENSURES: f.truncating is null.
  [[gnu::cold, gnu::noinline]] void wait_out_truncation(Inode& f);
  // Waits for `f`'s write lock (made at its first use) and holds it in `turn` (write_lock.h).
  [[gnu::noinline]] void take_write_lock(Inode& f, std::optional<WriteLock::Hold>& turn);
  // Writes `bytes` to a file do_create opened and closes it, also after a failed write.
  FsError write_and_close(int fd, std::uint64_t bytes);
  // `bytes` written through `o` at its offset have landed: bytes of the file's current version,
  // or an older writer's in it (Inode::foreign).
  static void landed(const Open& o, std::uint64_t bytes);
  // Adds open file `fd` (to open_ and its owner's descriptors).
  void add_open(int fd, Open o);
  // Closes an open file: its inode has what was written, one writer less.
  void erase_open(std::map<int, Open>::iterator it);
  // Frees an inode's bytes when its last name goes. Returns the bytes whose pages go now (the
  // caller frees them: free_bytes): to_free of the file, unless a descriptor holds it open
  // (then its last close frees them).
  [[nodiscard]] Freed unlinked(Inode& f);
  FsError do_close(int fd);
  kernel::Result<ReadResult> do_read(const std::string& path, int client);
  FsError do_write_copy(const std::string& to, int client, int rank, const ReadResult& r);
  // nfs: whether `client` holds a fresh negative entry for `path` (a lookup found it missing
  // and its lifetime runs): an open of it fails ENOENT from the cache.
  bool negative_cached(const std::string& path, int client) const;
  FileView server_view(const std::string& path, int client) const;
  // The same for file `f` found already (a read's open looked it up).
  FileView server_view(const Inode& f, int client) const;
  FileLock& lock_of(const std::string& path, int client);
  void changed_dir(const std::string& path, int client);  // the client's own namespace change
  static std::string parent(const std::string& path);

  kernel::Simulation& sim_;
  std::string name_;
  MountConfig config_;
  FsStats stats_;
  PathIndex<std::shared_ptr<Inode>> names_;  // files and directories
  // Open files by descriptor (a reference stays valid while others open files) and each
  // owner's descriptors, in the order it opened them, so that release() of one process does not
  // walk every open file of the run.
  std::map<int, Open> open_;
  absl::flat_hash_map<const kernel::Process*, boost::container::small_vector<int, 2>> open_by_owner_;
  int next_fd_ = 3;
  std::uint64_t next_ino_ = 1;
  std::uint64_t next_version_ = 1;
  kernel::RandomStream jitter_;
  kernel::RandomStream write_turns_;  // draws whether a writer keeps a file's write lock (write_lock.h)
  kernel::RandomStream chunk_jitter_;  // draws each chunk's factor (MountConfig::chunk_jitter)
  // Transfers in progress: all of them, and per client (indexed by client, grown on first use:
  // clients are nodes, so at most one entry per rank). A flat array rather than a map: a chunk
  // reads its client's count, and at thousands of ranks a map node is a cold line per chunk.
  int active_transfers_ = 0;
  std::vector<int> client_transfers_;
  int cache_transfers_ = 0;
  std::vector<int> client_cache_transfers_;
  // The reads among them that share read_shared_bandwidth: of the mount, and of each client
  // through its cache.
  int active_reads_ = 0;
  std::vector<int> client_cache_reads_;
  // Writes of the mount's files copying into memory (the page cache, a local mount without one)
  // now, counted where the mount sets read_amid_writes_bandwidth: the reads beside them take it.
  int memory_writes_ = 0;
  // The count of reads a transfer through the cache (`cached`) of client `at`, or not, shares
  // with: by index each time, as another client's first transfer may grow the array.
  // REQUIRES: at < client_cache_reads_.size() when cached.
  int& reads_of(bool cached, std::size_t at) { return cached ? client_cache_reads_[at] : active_reads_; }
  std::unique_ptr<PageCache> cache_;  // when config_.page_cache_bandwidth > 0
  std::map<std::pair<int, std::string>, CacheEntry> attr_cache_;  // nfs, per client
  // Set as the last stat or listing returns (after it blocked, if it did: the value is the
  // returning caller's).
  CacheUse last_cache_use_ = CacheUse::kNone;
  std::map<std::pair<int, std::string>, DirCacheEntry> dir_cache_;  // nfs, per client and pattern
  std::map<std::pair<int, std::string>, std::unique_ptr<FileLock>> locks_;
  MountFaults faults_;
  std::function<host::CpuScheduler*(int client)> cpu_of_;  // set_cpus; empty: no CPU model
  std::unique_ptr<MetadataServer> mds_;  // when config_.metadata.threads > 0
  std::uint64_t used_ = 0;
};

}  // namespace racesim::storage
