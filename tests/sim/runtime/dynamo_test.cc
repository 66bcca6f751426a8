// torch.device across the vendor mock, set_default_device, and dynamo's guarded compile cache:
// the guard failure on every call, the limit, the eager fallback, the fixes, the diagnosis text.
#include "sim/runtime/dynamo.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace racesim::runtime {
namespace {

using ::testing::HasSubstr;
using K = CallOutcome::Kind;

TEST(DynamoTest, ADeviceBuiltBeforeTheMockDiffersFromOneBuiltAfter) {
  // The seed's repro: t1 = torch.device('cuda', 0); import torch_dipu; t2 = ...; t1 == t2 -> False.
  Torch t;
  const TorchDevice t1 = t.make_device("cuda", 0);
  t.import_vendor(/*mock_cuda=*/true, false);
  const TorchDevice t2 = t.make_device("cuda", 0);
  EXPECT_EQ(t1, (TorchDevice{"cuda", 0}));
  EXPECT_EQ(t2, (TorchDevice{"xpu", 0}));
  EXPECT_NE(t1, t2);
  // Without mock_cuda the constructor keeps cuda.
  Torch plain;
  plain.import_vendor(false, false);
  EXPECT_EQ(plain.make_device("cuda", 0), t1);
}

// set_default_device("cuda") before the mock, then `calls` calls of f.
std::vector<CallOutcome> as_in_issue(Torch& t, int calls) {
  t.set_default_device("cuda", 0);
  t.import_vendor(true, false);
  std::vector<CallOutcome> out;
  for (int i = 0; i < calls; ++i) out.push_back(t.call("_is_fp16_bf16_tensor", "operations.py", 4));
  return out;
}

TEST(DynamoTest, DefaultDeviceSetBeforeTheMockRecompilesEveryCallThenFallsBackToEager) {
  Torch t;
  const auto calls = as_in_issue(t, 11);
  EXPECT_EQ(calls[0].kind, K::kCompiled);
  for (int i = 1; i < 8; ++i) EXPECT_EQ(calls[static_cast<std::size_t>(i)].kind, K::kRecompiled) << i;
  EXPECT_EQ(calls[1].message,
            "Recompiling function _is_fp16_bf16_tensor in operations.py, triggered by the following guard failure: "
            "utils_device.CURRENT_DEVICE == device(type='cuda', index=0)");
  // The 9th call finds 8 entries, all failing: the limit, eager for good.
  EXPECT_EQ(calls[8].kind, K::kEager);
  EXPECT_EQ(calls[8].entries_checked, 8);
  EXPECT_THAT(calls[8].message, HasSubstr("torch._dynamo hit config.cache_size_limit (8)"));
  EXPECT_EQ(calls[9].kind, K::kEager);
  EXPECT_EQ(calls[9].entries_checked, 0);
  EXPECT_EQ(t.stats().compiles, 8u);
  EXPECT_EQ(t.stats().recompiles, 7u);
  EXPECT_EQ(t.stats().fallbacks, 1u);
  EXPECT_EQ(t.stats().eager_calls, 3u);
  // Guards are checked newest first over every entry: the k-th recompile checked k entries.
  EXPECT_EQ(calls[7].entries_checked, 7);
}

TEST(DynamoTest, TheFixesReachASteadyStateAfterOneCompile) {
  auto steady = [](Torch& t) {
    for (int i = 0; i < 20; ++i) t.call("f", "m.py", 4);
    return t.stats();
  };
  Torch before;  // import the mock before torch sets the default device
  before.import_vendor(true, false);
  before.set_default_device("cuda", 0);
  Torch none;  // never set_default_device
  none.import_vendor(true, false);
  Torch routed;  // the mock rebuilds CURRENT_DEVICE with its constructor
  routed.set_default_device("cuda", 0);
  routed.import_vendor(true, true);
  Torch canon;  // the guard compares canonical devices
  canon.config().canonicalize_guard_devices = true;
  canon.set_default_device("cuda", 0);
  canon.import_vendor(true, false);
  for (Torch* t : {&before, &none, &routed, &canon}) {
    const DynamoStats s = steady(*t);
    EXPECT_EQ(s.compiles, 1u);
    EXPECT_EQ(s.guard_failures, 0u);
  }
  EXPECT_EQ(routed.current_device(), (TorchDevice{"xpu", 0}));
}

TEST(DynamoTest, RaisingTheLimitOnlyDelaysEager) {
  Torch t;
  t.config().recompile_limit = 64;
  const auto calls = as_in_issue(t, 70);
  EXPECT_EQ(t.stats().recompiles, 63u);
  EXPECT_EQ(calls[64].kind, K::kEager);
  // The accumulated limit bounds it too.
  Torch capped;
  capped.config().recompile_limit = 1000;
  capped.config().accumulated_recompile_limit = 16;
  as_in_issue(capped, 30);
  EXPECT_EQ(capped.stats().compiles, 16u);
}

TEST(DynamoTest, FailOnRecompileLimitHitRaisesInsteadOfFallingBack) {
  Torch t;
  t.config().fail_on_recompile_limit_hit = true;
  const auto calls = as_in_issue(t, 9);
  EXPECT_EQ(calls[8].kind, K::kLimitError);
  EXPECT_THAT(calls[8].message, HasSubstr("FailOnRecompileLimitHit: torch._dynamo hit config.cache_size_limit (8) "
                                          "function: '_is_fp16_bf16_tensor' (operations.py) last reason: "
                                          "utils_device.CURRENT_DEVICE == device(type='cuda', index=0)"));
  EXPECT_EQ(t.stats().fallbacks, 0u);
}

TEST(DynamoTest, DynamicShapesDropShapeGuardsButNotTheDeviceGuard) {
  Torch shapes;  // no mock: only shapes change
  for (std::int64_t s : {4, 8, 16}) shapes.call("f", "m.py", s);
  EXPECT_EQ(shapes.stats().recompiles, 2u);
  Torch dynamic;
  dynamic.config().assume_static_by_default = false;
  for (std::int64_t s : {4, 8, 16}) dynamic.call("f", "m.py", s);
  EXPECT_EQ(dynamic.stats().recompiles, 0u);
  Torch bug;  // dynamic shapes under the bug: still recompiles on the global
  bug.config().assume_static_by_default = false;
  as_in_issue(bug, 9);
  EXPECT_EQ(bug.stats().recompiles, 7u);
}

TEST(DynamoTest, ADefaultDeviceSetAfterCompilingFailsTheNoneGuard) {
  Torch t;
  EXPECT_EQ(t.call("f", "m.py", 4).kind, K::kCompiled);
  t.set_default_device("cuda", 0);
  const CallOutcome c = t.call("f", "m.py", 4);
  EXPECT_EQ(c.kind, K::kRecompiled);
  EXPECT_THAT(c.message, HasSubstr("guard failure: utils_device.CURRENT_DEVICE is None"));
}

// Functions found by a caller's numbering (one per run, shared by every rank's torch) behave
// as functions found by name: each keeps its own cache, and the listing is by name.
TEST(DynamoTest, FunctionsFoundBySlotKeepTheirOwnCachesAsByName) {
  Torch by_name, by_slot;
  for (Torch* t : {&by_name, &by_slot}) {
    t->set_default_device("cuda", 0);
    t->import_vendor(true, false);
  }
  std::vector<CallOutcome> named, slotted;
  for (int i = 0; i < 12; ++i) {
    // "zeta" is numbered first, "alpha" second; a device on an index of its own in between.
    named.push_back(by_name.call("zeta", "z.py", 4));
    named.push_back(by_name.call("alpha", "a.py", 4));
    slotted.push_back(by_slot.call(0, "zeta", "z.py", 4));
    slotted.push_back(by_slot.call(1, "alpha", "a.py", 4));
    if (i == 3) {
      by_name.set_default_device("npu", 1);
      by_slot.set_default_device("npu", 1);
    }
  }
  ASSERT_EQ(named.size(), slotted.size());
  for (std::size_t i = 0; i < named.size(); ++i) {
    EXPECT_EQ(named[i].kind, slotted[i].kind) << i;
    EXPECT_EQ(named[i].entries_checked, slotted[i].entries_checked) << i;
    EXPECT_EQ(named[i].message, slotted[i].message) << i;
  }
  // npu:1 is not mocked: once set, the next compile's entry passes its guards.
  EXPECT_EQ(by_slot.entries("zeta"), 5);
  EXPECT_EQ(by_slot.compiles_of("alpha"), 5u);
  EXPECT_EQ(by_slot.current_device(), (TorchDevice{"npu", 1}));
  EXPECT_EQ(by_slot.functions(), (std::vector<std::string>{"alpha", "zeta"}));
  EXPECT_EQ(by_name.functions(), by_slot.functions());
  // A slot far above those in use: the ones between stay unused and unlisted.
  Torch sparse;
  EXPECT_EQ(sparse.call(7, "late", "l.py", 4).kind, K::kCompiled);
  EXPECT_EQ(sparse.functions(), (std::vector<std::string>{"late"}));
  EXPECT_EQ(sparse.entries("late"), 1);
  EXPECT_EQ(sparse.entries(""), 0);
}

}  // namespace
}  // namespace racesim::runtime
