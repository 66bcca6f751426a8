// The shard a cluster scheduler's variables give (scheduler_shard.h).
#include "src/run/scheduler_shard.h"

#include <charconv>
#include <limits>

namespace racesim::run {
namespace {

// A variable holding a whole number in [lo, hi]: 1 when it does, 0 when unset, -1 (with `error`
// saying so) when it holds anything else.
int whole(const EnvLookup& env, const char* name, long lo, long hi, long& out, std::string& error) {
  const char* v = env(name);
  if (v == nullptr) return 0;
  const std::string text = v;
  long n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size() || n < lo || n > hi) {
    error = std::string(name) + "='" + text + "': expected a whole number from " + std::to_string(lo) + " to " +
            std::to_string(hi);
    return -1;
  }
  out = n;
  return 1;
}

constexpr long kMaxShards = std::numeric_limits<int>::max();

}  // namespace

bool scheduler_shard(const EnvLookup& env, SchedulerShard& shard, std::string& error) {
  const bool slurm = env("SLURM_ARRAY_TASK_ID") != nullptr;
  const bool k8s = env("JOB_COMPLETION_INDEX") != nullptr;
  if (slurm && k8s) {
    error = "both SLURM_ARRAY_TASK_ID and JOB_COMPLETION_INDEX are set: one scheduler's variables, or --shard I/N";
    return false;
  }
  if (!slurm && !k8s) {
    error = "no scheduler's variables are set: expected SLURM_ARRAY_TASK_ID (a Slurm job array) or "
            "JOB_COMPLETION_INDEX with RACESIM_SHARD_COUNT (a Kubernetes Indexed Job); outside a scheduler, give "
            "--shard I/N";
    return false;
  }
  if (k8s) {
    long index = 0, count = 0;
    if (whole(env, "JOB_COMPLETION_INDEX", 0, kMaxShards - 1, index, error) < 0) return false;
    const int has = whole(env, "RACESIM_SHARD_COUNT", 1, kMaxShards, count, error);
    if (has < 0) return false;
    if (has == 0) {
      error = "JOB_COMPLETION_INDEX is set but RACESIM_SHARD_COUNT is not: set it in the Job's manifest to its "
              "completions";
      return false;
    }
    if (index >= count) {
      error = "JOB_COMPLETION_INDEX=" + std::to_string(index) + " is not below RACESIM_SHARD_COUNT=" +
              std::to_string(count);
      return false;
    }
    shard = {static_cast<int>(index), static_cast<int>(count),
             "JOB_COMPLETION_INDEX=" + std::to_string(index) + " of RACESIM_SHARD_COUNT=" + std::to_string(count)};
    return true;
  }
  long id = 0, min = 0, max = 0, count = 0;
  const struct {
    const char* name;
    long lo;
    long& out;
  } vars[] = {{"SLURM_ARRAY_TASK_ID", 0, id},
              {"SLURM_ARRAY_TASK_MIN", 0, min},
              {"SLURM_ARRAY_TASK_MAX", 0, max},
              {"SLURM_ARRAY_TASK_COUNT", 1, count}};
  for (const auto& v : vars) {
    const int has = whole(env, v.name, v.lo, kMaxShards, v.out, error);
    if (has < 0) return false;
    if (has == 0) {
      error = "SLURM_ARRAY_TASK_ID is set without SLURM_ARRAY_TASK_MIN, SLURM_ARRAY_TASK_MAX and "
              "SLURM_ARRAY_TASK_COUNT (sbatch --array sets all four)";
      return false;
    }
  }
  const std::string range = std::to_string(min) + "-" + std::to_string(max);
  if (max < min || max - min + 1 != count) {
    error = "the job array " + range + " has SLURM_ARRAY_TASK_COUNT=" + std::to_string(count) +
            " tasks, not one per id from SLURM_ARRAY_TASK_MIN to SLURM_ARRAY_TASK_MAX: an array with a step or a "
            "list is not one range of shards; submit --array=0-" + std::to_string(count - 1);
    return false;
  }
  if (id < min || id > max) {
    error = "SLURM_ARRAY_TASK_ID=" + std::to_string(id) + " is outside the array " + range;
    return false;
  }
  shard = {static_cast<int>(id - min), static_cast<int>(count),
           "SLURM_ARRAY_TASK_ID=" + std::to_string(id) + " of the array " + range};
  return true;
}

}  // namespace racesim::run
