// The probe `racesim live` makes of its --dir before any run: every run creates a directory,
// creates, writes, locks, renames and removes files in it, so a directory where one of these
// fails (a read-only mount, /sys, /proc, a directory of another user) is refused up front,
// naming the operation, instead of every run failing and the harness's failure being scored as
// each strategy's.
#pragma once

#include <string>

namespace racesim::live {

// "" when each operation a live run makes works in `dir`; otherwise what failed, e.g. "cannot
// create a directory in /sys (Operation not permitted)". Leaves nothing behind in `dir` (the
// probe's directory is named by this process's pid, racesim-probe-PID).
std::string probe_dir(const std::string& dir);

}  // namespace racesim::live
