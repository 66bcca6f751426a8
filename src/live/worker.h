// The worker of a live run: one OS process per rank, started by the supervisor (supervisor.h) as
// `racesim live --worker SEGMENT --rank R`. It opens the run's board (board.h), compiles the same
// study the supervisor names in the board's task (the one pipeline, study.h), waits for the start,
// and runs its rank's program in a one-rank simulation paced by the real clock (live_clock.h), its
// mounts real directories (real_files.h), its barriers and marks on the board. At the end it puts
// its result on the board: how it ended, its series, counters and mount counters (JSON).
//
// The task (JSON): {"file", "overrides": [...], "strategy", "point", "seed", "scale", "root"}.
#pragma once

#include <string>

namespace racesim::live {

// Runs rank `rank` of the live run on board `segment`; the process's exit code (0: it ran and
// reported, whatever the outcome; 3: it could not take part, and said why on stderr and, when it
// could, on the board).
int worker_main(const std::string& segment, int rank);

}  // namespace racesim::live
