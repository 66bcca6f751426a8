// The shard a scheduler's variables give (scheduler_shard.h): Slurm job arrays that need not
// start at 0, Kubernetes Indexed Jobs, and every way the variables can be missing or disagree.
#include "src/run/scheduler_shard.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

namespace racesim::run {
namespace {

using ::testing::HasSubstr;

struct Env {
  std::map<std::string, std::string> vars;
  EnvLookup lookup() const {
    return [this](const char* name) -> const char* {
      auto it = vars.find(name);
      return it == vars.end() ? nullptr : it->second.c_str();
    };
  }
};

Env slurm(const std::string& id, const std::string& min, const std::string& max, const std::string& count) {
  return {{{"SLURM_ARRAY_TASK_ID", id}, {"SLURM_ARRAY_TASK_MIN", min}, {"SLURM_ARRAY_TASK_MAX", max},
           {"SLURM_ARRAY_TASK_COUNT", count}}};
}

TEST(SchedulerShardTest, ASlurmArrayNeedNotStartAtZero) {
  SchedulerShard s;
  std::string error;
  const Env e = slurm("6", "4", "7", "4");  // --array=4-7 (a %2 throttle sets nothing more)
  ASSERT_TRUE(scheduler_shard(e.lookup(), s, error)) << error;
  EXPECT_EQ(s.index, 2);
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(s.source, "SLURM_ARRAY_TASK_ID=6 of the array 4-7");
  const Env first = slurm("0", "0", "15", "16");
  ASSERT_TRUE(scheduler_shard(first.lookup(), s, error)) << error;
  EXPECT_EQ(s.index, 0);
  EXPECT_EQ(s.count, 16);
}

TEST(SchedulerShardTest, ASlurmArrayWithAStepOrAnIncompleteSetIsRefused) {
  SchedulerShard s;
  std::string error;
  EXPECT_FALSE(scheduler_shard(slurm("4", "0", "12", "4").lookup(), s, error));  // --array=0-12:4
  EXPECT_THAT(error, HasSubstr("an array with a step or a list"));
  EXPECT_THAT(error, HasSubstr("--array=0-3"));
  Env partial{{{"SLURM_ARRAY_TASK_ID", "3"}}};
  EXPECT_FALSE(scheduler_shard(partial.lookup(), s, error));
  EXPECT_THAT(error, HasSubstr("SLURM_ARRAY_TASK_MIN"));
  EXPECT_FALSE(scheduler_shard(slurm("9", "4", "7", "4").lookup(), s, error));
  EXPECT_THAT(error, HasSubstr("outside the array 4-7"));
  EXPECT_FALSE(scheduler_shard(slurm("x1", "4", "7", "4").lookup(), s, error));
  EXPECT_THAT(error, HasSubstr("SLURM_ARRAY_TASK_ID='x1': expected a whole number"));
  EXPECT_FALSE(scheduler_shard(slurm("-1", "0", "3", "4").lookup(), s, error));
  EXPECT_THAT(error, HasSubstr("SLURM_ARRAY_TASK_ID='-1'"));
}

TEST(SchedulerShardTest, AKubernetesIndexedJobTakesItsCountFromTheManifest) {
  SchedulerShard s;
  std::string error;
  Env e{{{"JOB_COMPLETION_INDEX", "3"}, {"RACESIM_SHARD_COUNT", "16"}}};
  ASSERT_TRUE(scheduler_shard(e.lookup(), s, error)) << error;
  EXPECT_EQ(s.index, 3);
  EXPECT_EQ(s.count, 16);
  Env no_count{{{"JOB_COMPLETION_INDEX", "3"}}};
  EXPECT_FALSE(scheduler_shard(no_count.lookup(), s, error));
  EXPECT_THAT(error, HasSubstr("RACESIM_SHARD_COUNT is not"));
  Env past{{{"JOB_COMPLETION_INDEX", "16"}, {"RACESIM_SHARD_COUNT", "16"}}};
  EXPECT_FALSE(scheduler_shard(past.lookup(), s, error));
  EXPECT_THAT(error, HasSubstr("not below RACESIM_SHARD_COUNT=16"));
}

TEST(SchedulerShardTest, NoSchedulerOrTwoAreErrorsNamingTheVariables) {
  SchedulerShard s;
  std::string error;
  EXPECT_FALSE(scheduler_shard(Env{}.lookup(), s, error));
  EXPECT_THAT(error, HasSubstr("SLURM_ARRAY_TASK_ID"));
  EXPECT_THAT(error, HasSubstr("JOB_COMPLETION_INDEX"));
  Env both = slurm("1", "0", "3", "4");
  both.vars["JOB_COMPLETION_INDEX"] = "1";
  EXPECT_FALSE(scheduler_shard(both.lookup(), s, error));
  EXPECT_THAT(error, HasSubstr("both"));
}

}  // namespace
}  // namespace racesim::run
