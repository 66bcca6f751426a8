// A group restart policy (platform.elastic), as torchrun's elastic agent applies one with
// `--max-restarts`: when a rank's process fails (a crash, an error it did not catch), the agent
// stops every rank's processes, and after a delay (its monitor interval, stopping the workers, a
// new rendezvous) starts every rank's program again from its first step, with communicators
// formed anew. What lived in the processes goes (device and host memory, communicators, marks
// and barriers, which stand for the rendezvous store); what lives outside them stays (the files
// on storage, as the failure left them, torn writes included). After `max_restarts` restarts, a
// further failure fails the run (check `elastic`). RunState applies it (group_failure); the elastic family parses it (primitives/elastic.cc).
#pragma once

#include "sim/kernel/time.h"

namespace racesim::scenario {

struct GroupRestartPolicy {
  int max_restarts = 0;  // 0: no policy (a failure fails the run, a crash restarts only its rank if it says so)
  kernel::Time restart_after = 30 * kernel::kSecond;  // from the failure to the group's new start; > 0
  bool on() const { return max_restarts > 0; }
};

}  // namespace racesim::scenario
