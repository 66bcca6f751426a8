// RealFiles: a mount of a live run (racesim live) as a real directory: the storage::Files
// operations (sim/storage/files.h) as the system calls they model, so the storage primitives run
// unchanged on real processes. open(2) with O_CREAT|O_TRUNC, O_EXCL, O_APPEND; write(2) in chunks;
// fsync(2); rename(2); unlink(2); mkdir(2); rmdir(2); flock(2); readdir(3).
//
// Content identity: a file written by size (write_file, create + write, copy, pack) begins with a
// 64-byte header (magic, writer rank, version, final length, member files) and its other bytes
// are a pattern of its version (8-byte words of splitmix64(version, offset)), so a reader judges
// what it read by the model's rule (ReadResult::intact): all `length` bytes, each the writer's.
// A prefix is short; bytes of another version (a truncation and rewrite while reading) are
// `changed`. A file with no header (a text: write_text; a file shorter than the header) carries
// no identity (content.writer -1): its bytes are its text, and load_model refuses it as no model.
// A read reads the length the file had when it was opened (fstat), as the model's reader does.
//
// Where it differs from the model (FileSystem): the real file system decides visibility, speed
// and lock semantics (the mount's kind, bandwidth and flock mode are not imposed); the mount has
// no metadata-server queue and no capacity of its own (ENOSPC is the real disk's); contents() is
// measured by the supervisor on the real directory, not here. After each
// call the rank's virtual clock catches up with the real one (scaled), so what a call really
// took shows in virtual time. A blocking flock blocks in flock(2) (on a helper thread, interrupted
// at its timeout or the run's end), so waiters are granted in the system's order.
//
// Company: with the run's board (board.h), each read and write of a file's bytes (a read of at
// least kCopyBytesMin, a write that is not a text's) is counted there while it runs, and its cost
// is recorded again apart by whether it ran alone or beside others (FsStats' *_alone_costs and
// *_beside_costs; a read with no other read but a write beside it, read_amid_writes_costs too),
// for `live --fit-costs`.
//
// Faults: the model's storage fault points (sim/storage/mount_faults.h) at the same operations:
// a latency spike and a writer stall sleep (paced: real time x the scale), eio and enospc fail the
// call as the model does (the real call is not made). slow_storage has no live meaning (a real
// transfer cannot be slowed by a factor) and is refused before a live run starts.
//
// Live code: real system calls and the real clock. REQUIRES: the calling simulated process.
#pragma once

#include <csignal>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sim/kernel/simulation.h"
#include "sim/storage/files.h"
#include "sim/storage/mount_faults.h"
#include "src/live/board.h"
#include "src/live/live_clock.h"

namespace racesim::live {

// The header of a file with a content identity.
inline constexpr std::uint64_t kHeaderBytes = 64;
// Fills `out` with bytes [offset, offset + n) of the file a writer of `c` writes (header, then
// the version's pattern). REQUIRES: c.length >= kHeaderBytes.
void content_bytes(const storage::Content& c, std::uint64_t offset, char* out, std::size_t n);
// The identity in a file's first `n` bytes, or nullopt when they hold none (too short, no magic).
std::optional<storage::Content> parse_header(const char* head, std::size_t n);

// Reads at most `limit` bytes of open file `fd` from its offset and judges them by the content
// identity (the model's rule, above), calling `after_chunk` after each read(2). nullopt, with the
// errno in `error`, when a read fails. The limit is the length a reader learned when it opened
// the file: bytes past it are not read, even when a writer has added them since. Every byte read
// of a file with an identity is checked against it, whatever the bytes before held (so a torn
// read costs what a whole one of its length does); `checked_bytes`, when given, is increased by
// the bytes checked.
std::optional<storage::ReadResult> read_content(int fd, std::uint64_t limit, const std::function<void()>& after_chunk,
                                               int* error, std::uint64_t* checked_bytes = nullptr);

// A read of at least this many bytes is counted as a copy on the board (a text's read, a
// pointer or a marker, is not: its size is known at the open, its kind only once read).
inline constexpr std::uint64_t kCopyBytesMin = 64 * 1024;

// The signal that interrupts a rank's flock(2) blocked on a helper thread (its default action,
// should it ever arrive unhandled, is to be ignored).
inline constexpr int kFlockInterruptSignal = SIGURG;

class RealFiles final : public storage::Files {
 public:
  // `config.root` is the mount point the program names ("/cache"); its files live under
  // `real_root` (an existing directory). `next_version` numbers new contents across the ranks.
  // With `board`, the copies are counted there (mount `name`), and `cpus` (>= 1: the CPUs the
  // ranks may run on) caps the copies that count as running at once.
  RealFiles(kernel::Simulation& sim, const LiveClock& clock, std::string name, storage::MountConfig config,
            std::string real_root, std::function<std::uint64_t()> next_version, Board* board = nullptr,
            int cpus = 1);
  ~RealFiles() override;

  const std::string& name() const override { return name_; }
  const storage::MountConfig& config() const override { return config_; }
  const storage::FsStats& stats() const override { return stats_; }
  const storage::MetadataServer* metadata_server() const override { return nullptr; }
  void set_faults(kernel::FaultSeam* seam, std::string mount) override { faults_.set(seam, std::move(mount)); }
  std::uint64_t used() const override { return 0; }
  storage::FsContents contents() const override { return {}; }

  kernel::Result<int> create(const std::string& path, int client, int rank, storage::OpenMode mode,
                             std::uint64_t final_length) override;
  storage::FsError write(int fd, std::uint64_t bytes, std::uint64_t* written = nullptr) override;
  storage::FsError fsync(int fd) override;
  storage::FsError close(int fd) override;
  void set_text(int fd, std::string text) override;
  storage::FileView stat(const std::string& path, int client) override;
  std::vector<std::string> list(const std::string& pattern, int client, bool hidden = false,
                                storage::FsError* error = nullptr) override;
  storage::FsError mkdir(const std::string& path, int client) override;
  storage::FsError makedirs(const std::string& path, int client, bool parents, bool exist_ok) override;
  storage::FsError rename(const std::string& from, const std::string& to, int client) override;
  storage::FsError unlink(const std::string& path, int client) override;
  storage::FsError copy(const std::string& from, const std::string& to, int client, int rank) override;
  storage::FsError write_copy(const std::string& to, int client, int rank, const storage::ReadResult& r) override;
  storage::FsError write_archive(const std::string& to, int client, int rank,
                                 const std::vector<storage::ReadResult>& members) override;
  storage::FsError tree(const std::string& dir, int client, std::vector<std::string>& dirs,
                        std::vector<std::string>& files) override;
  storage::FsError rmdir(const std::string& path, int client) override;
  kernel::Result<storage::ReadResult> read(const std::string& path, int client) override;
  storage::FsError lock(const std::string& path, int client, bool exclusive, bool blocking,
                        kernel::Time timeout = kernel::kTimeMax) override;
  storage::FsError unlock(const std::string& path, int client) override;
  void release(const kernel::Process* p) override;

  // The real path of a path the program names.
  std::string real(const std::string& path) const;

 private:
  struct Open {
    int fd = -1;
    std::string path;
    storage::Content content;
    std::uint64_t offset = 0;
    std::uint64_t synced = 0;  // the offset at its last fsync (what the next one writes begins there)
    bool identity = true;  // written with a header (false: a text, or shorter than the header)
  };
  void catch_up();  // the virtual clock to the real one
  // The thread's CPU time of a read or a write (`into`, in virtual time at the clock's scale),
  // from its construction to its end, less what catch_up spent meanwhile (the virtual clock's
  // wait and the other fibers it ran): the call's own work, as the model charges it.
  class CpuSpan {
   public:
    CpuSpan(RealFiles& files, kernel::Time& into);
    ~CpuSpan();
    CpuSpan(const CpuSpan&) = delete;
    CpuSpan& operator=(const CpuSpan&) = delete;
    // When the span ends, it is also one operation of `bytes` in `sums` (FsStats' costs).
    void count_in(storage::CostSums& sums, std::uint64_t bytes) {
      sums_ = &sums;
      bytes_ = bytes;
    }
    // The call is a copy (a read when `read`): counted on the board until the span ends, and
    // then, when it was counted in read_costs or write_costs, also in its company's sums.
    // REQUIRES: called at most once.
    void copy(bool read);

   private:
    RealFiles& files_;
    kernel::Time& into_;
    std::int64_t start_ns_, waited_ns_;
    storage::CostSums* sums_ = nullptr;
    std::uint64_t bytes_ = 0;
    int ticket_ = -1;  // on the board (-1: not a copy, or no board)
    bool read_ = false;
  };
  std::int64_t catch_up_cpu_ns_ = 0;  // the thread CPU time catch_up has spent
  // Blocks in flock(fd, op) until granted (0), the virtual `timeout` passes (ETIMEDOUT) or the
  // call fails (its errno); a stop of the run unwinds the caller with the call interrupted.
  // REQUIRES: op is LOCK_SH or LOCK_EX, without LOCK_NB.
  int wait_for_flock(int fd, int op, kernel::Time timeout);
  // The end of a system call that returned `r` (0: success) with errno `err`: the clock catches
  // up, and the call's result as the model's error.
  storage::FsError finish(int r, int err);
  storage::FsError finish(int r) { return finish(r, errno); }
  // The fault point fs.op at the start of an operation, counting EIO.
  storage::FsError op_faults() {
    const storage::FsError e = faults_.op();
    if (e == storage::FsError::kIo) ++stats_.eio_errors;
    return e;
  }
  // Writes `n` bytes of what the open file holds from its offset on; chunked, catching up.
  storage::FsError put(Open& f, std::uint64_t n, std::uint64_t* written);
  storage::FsError write_whole(const std::string& to, const storage::Content& c, std::uint64_t bytes,
                               bool identity, bool garble);

  kernel::Simulation& sim_;
  const LiveClock& clock_;
  std::string name_;
  storage::MountConfig config_;
  std::string real_root_;
  std::function<std::uint64_t()> next_version_;
  storage::FsStats stats_;
  std::map<int, Open> open_;
  std::map<std::string, int> locks_;  // path -> the descriptor holding its flock
  storage::MountFaults faults_;
  Board* board_ = nullptr;
  int cpus_ = 1;
};

}  // namespace racesim::live
