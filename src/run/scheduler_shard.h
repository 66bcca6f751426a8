// Which shard of a sweep this process runs, from the cluster scheduler's own variables
// (`racesim run --shard auto`): a Slurm job array task or a Kubernetes Indexed Job pod.
//
// Slurm (sbatch --array): SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_MAX and
// SLURM_ARRAY_TASK_COUNT (sbatch(1), "OUTPUT ENVIRONMENT VARIABLES"). The array need not start
// at 0 (--array=4-7 is shards 0/4 to 3/4) and a `%` throttle changes nothing; an array with a
// step (--array=0-15:4) or a list has ids that are not one range, and is refused.
// Kubernetes (an Indexed Job): JOB_COMPLETION_INDEX, with the shard count in RACESIM_SHARD_COUNT,
// which the manifest sets to the Job's `completions`.
#pragma once

#include <functional>
#include <string>

namespace racesim::run {

struct SchedulerShard {
  int index = 0;
  int count = 1;
  std::string source;  // where it came from, as printed: "SLURM_ARRAY_TASK_ID=5 of 4-7"
};

// Reads a variable: its value, or nullptr when unset (std::getenv in the command line).
using EnvLookup = std::function<const char*(const char*)>;

// The shard the scheduler's variables give. False, with `error` naming the variables and what
// was expected, when none is set, a value is not a whole number, the Slurm variables disagree
// with each other, or both schedulers' variables are set.
bool scheduler_shard(const EnvLookup& env, SchedulerShard& shard, std::string& error);

}  // namespace racesim::run
