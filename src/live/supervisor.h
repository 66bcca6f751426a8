// The supervisor of live runs (`racesim live FILE -s STRATEGY --runs N --dir PATH`): for each
// seed it creates the run's board (board.h) and directory, starts one worker process per rank
// (fork + exec of racesim itself, worker.h), starts the clock once every worker is ready, waits for
// them within the scenario's time limit (scaled), and turns what they reported into the same record
// a simulated run gives (outcome, check, diagnosis, metrics) with mode "live".
//
// Nothing is left behind: the board and the run's directory are removed when a run ends, when it
// is interrupted (SIGINT, SIGTERM: the workers are killed first) and when a worker was killed; a
// worker dies with its supervisor (PR_SET_PDEATHSIG); boards and directories of a supervisor that
// itself died (named by its pid, which no longer runs) are removed by the next one (clean_stale).
//
// Judged as the simulation judges: a failed check fails the run (the first failure on the board
// wins); a worker that died or could not take part makes the run an error, never a pass; a run
// still going at the time limit is a timeout. Metrics: the ranks' series and counters merged and
// derived as RunState::metrics does, the mounts' counters summed over the ranks, what the mounts
// hold at the end measured on the real directory. Not measured live, so absent: a metadata
// server's queue (fs.M.mds_*), the trace hash (0), events (0).
#pragma once

#include <atomic>
#include <cstdint>
#include <ostream>
#include <string>

#include "src/run/runner.h"
#include "src/scenario/compile/compiler.h"
#include "src/scenario/file/diagnostics.h"

namespace racesim::live {

struct LiveOptions {
  std::string file;                   // the scenario file (the workers compile it again)
  std::vector<std::string> overrides; // --set / --set-file lines, in order
  std::string dir;                    // an existing directory; each run's files live under it
  double scale = 1.0;                 // real seconds per virtual second (> 0)
  std::string self;                   // the racesim executable the workers run
  const std::atomic<bool>* stop = nullptr;  // set by a signal handler: end the run under way
};

// Whether `program` can run live: every step's primitive has a live meaning, no fault can be
// active (a fault plan has no live meaning yet), at most Board::kMaxWorld ranks. Each problem is
// reported to `diags` at its location.
bool check_live(const scenario::CompiledProgram& program, scenario::Diagnostics& diags);

// One live run of `program` with `seed`. Progress and cleanup notes go to `log`. Throws LiveError
// when the harness fails, never the strategy: the run's directory or board cannot be made, a
// worker cannot be started or did not attach (with everything of the run cleaned up first).
run::RunRecord run_live(const scenario::CompiledProgram& program, std::uint64_t seed, const LiveOptions& options,
                        std::ostream& log);

// Removes boards (/dev/shm/racesim-live-PID-*) and run directories (DIR/racesim-live-PID) of
// supervisors that no longer run; returns how many it removed, naming each on `log`.
int clean_stale(const std::string& dir, std::ostream& log);

// The board and directory names of this process's run of `seed`.
std::string board_name(long pid, std::uint64_t seed);
std::string run_dir_name(long pid);

}  // namespace racesim::live
