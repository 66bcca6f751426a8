// The parameter loader (sim/runtime/param_loader.h) on 4 ranks of a [ep, fsdp] mesh: what each
// operation enqueues, allocates and checks.
#include "sim/runtime/param_loader.h"

#include <memory>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace racesim::runtime {
namespace {

using ::testing::HasSubstr;

// Four ranks with their devices, comm queues and loaders; `ep` splits them into ep groups.
struct Cluster {
  Cluster(int ep, ModelConfig m, device::DeviceConfig dc = {}) : model(m), params(model_params(model)), engine(sim, {}) {
    const std::vector<int> all = {0, 1, 2, 3};
    collective::Communicator& world = engine.communicator("world", all);
    const DeviceMesh mesh({{"ep", ep}, {"fsdp", 4 / ep}});
    for (int r = 0; r < 4; ++r) {
      devices.push_back(std::make_unique<device::Device>(sim, "rank " + std::to_string(r), dc));
      queues.push_back(std::make_unique<collective::CommQueue>(sim, engine, r));
      std::vector<int> g = mesh.group(r, 1);
      collective::Communicator& group = static_cast<int>(g.size()) == 4 ? world : engine.communicator("fsdp", g);
      loaders.push_back(std::make_unique<ParamLoader>(LoaderEnv{
          .sim = sim, .device = *devices.back(), .queue = *queues.back(), .engine = engine, .world = world,
          .expert_group = group, .rank = r, .ep = ep, .model = model, .params = params}));
    }
  }
  // Runs body(rank, loader) on every rank.
  template <typename Body>
  kernel::RunResult run(Body body) {
    for (int r = 0; r < 4; ++r) {
      sim.spawn("rank " + std::to_string(r), [this, r, body] { body(r, *loaders[static_cast<std::size_t>(r)]); });
    }
    return sim.run();
  }
  kernel::Simulation sim;
  ModelConfig model;
  std::vector<ParamSpec> params;
  collective::Engine engine;
  std::vector<std::unique_ptr<device::Device>> devices;
  std::vector<std::unique_ptr<collective::CommQueue>> queues;
  std::vector<std::unique_ptr<ParamLoader>> loaders;
};

ModelConfig small(int experts = 4) {
  ModelConfig m;
  m.layers = 1;
  m.hidden = 64;
  m.intermediate = 32;
  m.experts = experts;
  m.vocab = 128;
  m.heads = 4;
  m.kv_heads = 2;
  return m;
}

// The index of the first expert parameter.
std::size_t first_expert(const std::vector<ParamSpec>& params) {
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (params[i].expert) return i;
  }
  return 0;
}

TEST(ParamLoaderTest, DistributeScattersAnExpertOverItsSubGroupAndCountsItHidden) {
  Cluster c(2, small());
  const std::size_t e = first_expert(c.params);
  std::vector<MaybeIssue> issues(4);
  auto res = c.run([&](int r, ParamLoader& l) {
    l.begin_param(e);
    EXPECT_FALSE(l.broadcast_tensor());
    l.slice_experts([] { return kernel::Time{1000}; });
    EXPECT_FALSE(l.distribute_tensor(false, true));
    issues[static_cast<std::size_t>(r)] = l.copy_into_param();
  });
  EXPECT_EQ(res.outcome, kernel::RunOutcome::kCompleted);
  for (const auto& i : issues) EXPECT_FALSE(i) << i->message;
  for (const auto& l : c.loaders) EXPECT_EQ(l->stats().hidden_collectives, 1u);
  // One broadcast on world, one scatter on each of the two fsdp groups.
  EXPECT_EQ(c.engine.stats().collectives, 3u);
}

TEST(ParamLoaderTest, LocalSplitIssuesNoCollectiveAndGivesDTensorsShard) {
  Cluster c(2, small());
  std::vector<MaybeIssue> issues(4);
  c.run([&](int r, ParamLoader& l) {
    for (std::size_t i = 0; i < l.param_count(); ++i) {
      l.begin_param(i);
      l.slice_experts([] { return kernel::Time{0}; });
      EXPECT_FALSE(l.distribute_tensor(true, false));
      if (auto issue = l.copy_into_param()) issues[static_cast<std::size_t>(r)] = issue;
    }
  });
  for (const auto& i : issues) EXPECT_FALSE(i) << i->message;
  EXPECT_EQ(c.engine.stats().collectives, 0u);
  EXPECT_EQ(c.loaders[0]->stats().params_loaded, c.params.size());
}

TEST(ParamLoaderTest, ChunkingPastTorchChunksEndIsAnIndexError) {
  // A router gate [6, 64] over 4 ranks: torch.chunk gives 3 chunks of 2; rank 3 has none.
  Cluster c(1, small(6));
  std::size_t gate = 0;
  while (c.params[gate].name.find("mlp.gate.weight") == std::string::npos) ++gate;
  std::vector<MaybeIssue> issues(4);
  c.run([&](int r, ParamLoader& l) {
    l.begin_param(gate);
    issues[static_cast<std::size_t>(r)] = l.to_local_chunk(true);
  });
  for (int r = 0; r < 3; ++r) EXPECT_FALSE(issues[static_cast<std::size_t>(r)]);
  ASSERT_TRUE(issues[3]);
  EXPECT_EQ(issues[3]->check, "shards_correct");
  EXPECT_EQ(issues[3]->message, "IndexError in model.layers.0.mlp.gate.weight [6, 64]: torch.chunk(6, 4) gives 3 chunks, mesh coordinate 3");
  EXPECT_EQ(c.loaders[3]->stats().index_errors, 1u);
}

TEST(ParamLoaderTest, ChunkingOnTheDeviceFirstHoldsTheWholeConvertedTensor) {
  Cluster dev(1, small()), host(1, small());
  const std::size_t e = first_expert(dev.params);
  auto body = [e](bool on_host) {
    return [e, on_host](int, ParamLoader& l) {
      l.begin_param(e);
      EXPECT_FALSE(l.to_local_chunk(on_host));
    };
  };
  dev.run(body(false));
  host.run(body(true));
  // [4, 64, 64] fp32: 64 KiB converted whole on the device, on top of the 16 KiB chunk.
  EXPECT_EQ(dev.devices[0]->peak() - host.devices[0]->peak(), 64u * 1024);
}

TEST(ParamLoaderTest, AnAllocationBeyondTheDeviceIsAnOom) {
  device::DeviceConfig tiny;
  tiny.memory = 1024;
  Cluster c(1, small(), tiny);
  std::vector<MaybeIssue> issues(4);
  c.run([&](int r, ParamLoader& l) { issues[static_cast<std::size_t>(r)] = l.to_empty(); });
  ASSERT_TRUE(issues[0]);
  EXPECT_EQ(issues[0]->check, "no_oom");
  EXPECT_THAT(issues[0]->message, HasSubstr("out of device memory"));
}

}  // namespace
}  // namespace racesim::runtime
