// The board of one live run: a Boost.Interprocess managed shared-memory segment that the supervisor
// creates and every rank's worker process opens. It holds the run's task (what to run, as JSON),
// the start instant, the barriers, marks and version counter the ranks share, the first failure,
// a stop flag, and each rank's result (JSON). Every field is guarded by one interprocess mutex;
// waits are bounded (real-time timeouts) and the segment is removed by the supervisor (also after
// a worker was killed), or as stale by the next supervisor (see supervisor.h).
//
// It also counts the copies of each mount's files running at once across the ranks, so that each
// read and write of a file's bytes learns the company it had (`live --fit-costs` fits a copy's own
// cost from those that ran alone, and what copies at once cost more from the others).
//
// Limits (a clear error when reached): kMaxNames barriers, marks, semaphores and mounts per run,
// names of at most kNameBytes - 1 bytes, kMaxCopies copies running at once, a result of at most
// what the segment has left.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

namespace racesim::live {

// A live run's protocol broke (a name too long, a table full, a segment missing or malformed).
struct LiveError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Board {
 public:
  static constexpr int kMaxNames = 64;
  static constexpr int kNameBytes = 64;
  static constexpr int kMaxWorld = 256;  // ranks of one live run (one process each)
  static constexpr int kMaxCopies = 1024;  // copies running at once across the ranks

  // The company a copy had, from its begin_copy to its end_copy: the most reads and the most
  // copies (reads and writes) of its mount that ran at once, itself included (so at least 1; a
  // write's `reads` is 0).
  struct CopyCompany {
    int reads = 0;
    int copies = 0;
  };

  // Supervisor: creates segment `segment` (a name under /dev/shm) for `world` ranks holding
  // `task`. A segment of that name already there is replaced. Throws LiveError.
  static std::unique_ptr<Board> create(const std::string& segment, int world, const std::string& task);
  // Worker: opens an existing segment. Throws LiveError naming it.
  static std::unique_ptr<Board> open(const std::string& segment);
  // Removes segment `segment`; true when there was one.
  static bool remove(const std::string& segment);
  ~Board();
  Board(const Board&) = delete;
  Board& operator=(const Board&) = delete;

  const std::string& segment() const { return name_; }
  std::string task() const;
  int world() const;

  // A worker has opened the board and compiled its program.
  void attach();
  // Supervisor: waits up to `timeout_ns` (real) until `n` workers attached; returns how many did.
  int wait_attached(int n, std::int64_t timeout_ns);
  // Supervisor: virtual time 0 is monotonic instant `start_ns`; wakes the workers.
  void start(std::int64_t start_ns);
  // Worker: waits up to `timeout_ns` (real) for start(); its instant, or nullopt (timed out or stopped).
  std::optional<std::int64_t> wait_start(std::int64_t timeout_ns);

  // The run is over for everyone (a rank failed, a worker died, the supervisor stops it).
  void stop();
  bool stopped() const;

  // Content versions, 1, 2, ... in order of creation across the ranks (storage::Content::version).
  std::uint64_t next_version();

  // Barrier `name` of `parties` ranks (cyclic): arrive, and the generation to wait for.
  std::uint64_t arrive(const std::string& name, int parties);
  // True once barrier `name` has passed `generation`.
  bool passed(const std::string& name, std::uint64_t generation) const;
  void set_mark(const std::string& name);
  bool marked(const std::string& name) const;

  // Semaphore `name` (created at its first use with `permits`), entered in arrival order: a
  // rank takes a ticket and may enter once fewer than `permits` of the tickets before it are
  // still inside. `actual_permits` receives the semaphore's permits; when they are not
  // `permits`, no ticket was taken (the caller reports the mismatch).
  std::uint64_t take_ticket(const std::string& name, int permits, int& actual_permits);
  bool may_enter(const std::string& name, std::uint64_t ticket) const;
  // A holder of semaphore `name` leaves it.
  void leave(const std::string& name);

  // A copy of a file's bytes (a read when `read`, else a write) of mount `mount` starts; its
  // ticket for end_copy. Throws LiveError at a limit (kMaxNames mounts, kMaxCopies at once).
  int begin_copy(const std::string& mount, bool read);
  // Copy `ticket` (of begin_copy, not yet ended) ends: the company it had.
  CopyCompany end_copy(int ticket);

  // The first failure of the run wins; true when this one did. Stops the run.
  bool report_failure(int rank, const std::string& check, const std::string& diagnosis);
  struct Failure {
    int rank = -1;
    std::string check, diagnosis;
  };
  std::optional<Failure> failure() const;

  // Rank `rank`'s result (JSON), once per rank. Throws LiveError when the segment is full.
  void put_result(int rank, const std::string& json);
  std::optional<std::string> result(int rank) const;

 private:
  struct Impl;
  explicit Board(std::string name, std::unique_ptr<Impl> impl);
  std::string name_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace racesim::live
