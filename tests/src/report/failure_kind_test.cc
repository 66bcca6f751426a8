// Failed runs by kind: a run's own figures masked, the names that say where kept, and one kind for
// what a model and a live run each describe in their own terms.
#include "src/report/failure_kind.h"

#include <gtest/gtest.h>

namespace racesim::report {
namespace {

run::RunRecord failed(run::Outcome outcome, const std::string& check,
                      const std::string& diagnosis) {
  run::RunRecord r;
  r.outcome = outcome;
  r.check = check;
  r.diagnosis = diagnosis;
  return r;
}

TEST(FailureKindTest, FiguresAreMaskedWithTheirUnitsAndNamesAreKept) {
  EXPECT_EQ(mask_figures("rank 8 loaded /ckpt/step1/shard1.pt at 26.7 s: 48 MiB of 64 MiB written "
                         "by rank 1 (x.yaml:46:40)"),
            "rank _ loaded /ckpt/step1/shard1.pt at _: _ of _ written by rank _ (x.yaml:46:40)");
  // Glued units, a count in parentheses, a sequence number, lists of ranks.
  EXPECT_EQ(
      mask_figures(
          "exec timeout after 1836s in broadcast #33 on world: waiting for ranks 0-4,7 (blocked in "
          "scatter #1 on fsdp{0-7})"),
      "exec timeout after _ in broadcast #_ on world: waiting for ranks _ (blocked in scatter #_ "
      "on fsdp{0-7})");
  EXPECT_EQ(mask_figures("still running at the time limit 400s (ranks 1, 2, 3)"),
            "still running at the time limit _ (ranks _)");
  EXPECT_EQ(mask_figures("0 B of 180 MiB; 12.5% in 3 ms, 2x"), "_ of _; _ in _, _");
  // A number inside a word, a quoted name or a location stays; so does a word that starts with
  // digits.
  EXPECT_EQ(mask_figures("barrier 'saved4' at x.yaml:81:52 on the 3rd try"),
            "barrier 'saved4' at x.yaml:81:52 on the 3rd try");
  EXPECT_EQ(mask_figures("7"), "_");
  EXPECT_EQ(mask_figures(""), "");
}

// Live, a read across a truncation holds no model's identity; the model names the truncation: one
// kind, the file and the step's location. Another file is another kind.
TEST(FailureKindTest, TornLoadsOfOneFileAtOneStepAreOneKindOnEverySide) {
  const std::string live =
      failure_kind(failed(run::Outcome::kFail, "model_loads_intact",
                          "rank 5 loaded /cache/model.om at 41.3 s: 12 MiB holding no model (no "
                          "content identity) (om.yaml:84:25)"));
  const std::string sim =
      failure_kind(failed(run::Outcome::kFail, "model_loads_intact",
                          "rank 2 loaded /cache/model.om at 39.0 s: read 48 MiB while the file was "
                          "truncated or rewritten (om.yaml:84:25)"));
  EXPECT_EQ(live, "model_loads_intact: /cache/model.om (om.yaml:84:25)");
  EXPECT_EQ(sim, live);
  EXPECT_NE(failure_kind(failed(run::Outcome::kFail, "model_loads_intact",
                                "rank 2 loaded /cache/other.om at 39.0 s: 0 B of 180 MiB written "
                                "by rank 0 (om.yaml:84:25)")),
            live);
  EXPECT_NE(failure_kind(failed(run::Outcome::kFail, "model_loads_intact",
                                "rank 2 loaded /cache/model.om at 39.0 s: 0 B of 180 MiB written "
                                "by rank 0 (om.yaml:97:15)")),
            live);
  // An error's code is part of what failed; a location must be FILE:LINE:COLUMN.
  EXPECT_EQ(
      failure_kind(failed(run::Outcome::kFail, "no_io_errors",
                          "rank 3: load_model /ckpt/model.pt: ENOENT at 12.0 s (c.yaml:78:13)")),
      "no_io_errors: /ckpt/model.pt ENOENT (c.yaml:78:13)");
  EXPECT_EQ(failure_kind(failed(run::Outcome::kFail, "no_io_errors",
                                "rank 3: copy /a to /b: EIO (retried)")),
            "no_io_errors: /a, /b EIO");
}

// A live run cannot tell a deadlock from work still running at its time limit.
TEST(FailureKindTest, EveryHangIsOneKindAndOtherTextIsMasked) {
  EXPECT_EQ(
      failure_kind(failed(run::Outcome::kDeadlock, "no_deadlock",
                          "rank 1: arrive on barrier 'saved4': waiting for rank 0 (restart 1)")),
      kHang);
  EXPECT_EQ(failure_kind(failed(run::Outcome::kTimeout, "no_timeout",
                                "still running at the time limit 400s (ranks 1, 2)")),
            kHang);
  EXPECT_EQ(
      failure_kind(failed(run::Outcome::kFail, "", "rank 4: device 0 out of memory at 3 GiB")),
      "fail: rank _: device _ out of memory at _");
  // A kind is one line, whatever a results file's diagnosis holds.
  EXPECT_EQ(failure_kind(failed(run::Outcome::kFail, "c", "two\nlines\r")), "c: two lines ");
}

}  // namespace
}  // namespace racesim::report
