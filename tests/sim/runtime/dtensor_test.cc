// torch.chunk against DTensor's sharding, meshes, and the collectives each placement change and
// distribute_tensor issue.
#include "sim/runtime/dtensor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace racesim::runtime {
namespace {

using ::testing::ElementsAre;
using collective::Op;

TEST(DTensorTest, TorchChunkCanGiveFewerChunksThanDTensorShards) {
  // The table from the issue: 6 rows over 4 ranks is 3 chunks of 2 for torch.chunk.
  EXPECT_THAT(torch_chunk_sizes(6, 4), ElementsAre(2, 2, 2));
  EXPECT_THAT(dtensor_shard_sizes(6, 4), ElementsAre(2, 2, 2, 0));
  EXPECT_THAT(torch_chunk_sizes(7, 4), ElementsAre(2, 2, 2, 1));
  EXPECT_THAT(dtensor_shard_sizes(7, 4), ElementsAre(2, 2, 2, 1));
  EXPECT_THAT(torch_chunk_sizes(8, 4), ElementsAre(2, 2, 2, 2));
  EXPECT_THAT(torch_chunk_sizes(5, 4), ElementsAre(2, 2, 1));
  EXPECT_THAT(torch_chunk_sizes(2, 8), ElementsAre(1, 1));
  EXPECT_THAT(dtensor_shard_sizes(2, 8), ElementsAre(1, 1, 0, 0, 0, 0, 0, 0));
  EXPECT_THAT(torch_chunk_sizes(60, 16), ::testing::SizeIs(15));  // a router gate of 60 experts
  EXPECT_THAT(torch_chunk_sizes(0, 4), ElementsAre());
  // Whatever the sizes, DTensor's shards cover the rows exactly once.
  for (std::int64_t n = 0; n < 40; ++n) {
    for (int k = 1; k < 20; ++k) {
      const auto s = dtensor_shard_sizes(n, k);
      std::int64_t sum = 0;
      for (auto x : s) sum += x;
      EXPECT_EQ(sum, n);
      EXPECT_EQ(s.size(), static_cast<std::size_t>(k));
      for (int c = 0; c < k; ++c) EXPECT_EQ(dtensor_shard_size(n, k, c), s[static_cast<std::size_t>(c)]);
    }
  }
}

TEST(DTensorTest, TorchChunkCountMatchesTorchChunk) {
  // torch.chunk as its documentation puts it: chunks of ceil(n / k) rows until the rows run out.
  for (std::int64_t n = 0; n < 200; ++n) {
    for (int k = 1; k < 70; ++k) {
      std::int64_t chunks = 0;
      const std::int64_t each = (n + k - 1) / k;
      for (std::int64_t left = n; left > 0; left -= each) ++chunks;
      EXPECT_EQ(torch_chunk_count(n, k), chunks) << n << " rows over " << k;
      EXPECT_EQ(torch_chunk_sizes(n, k).size(), static_cast<std::size_t>(chunks)) << n << " rows over " << k;
    }
  }
  EXPECT_EQ(torch_chunk_count(6, 4), 3);
  EXPECT_EQ(torch_chunk_count(60, 16), 15);
  EXPECT_EQ(torch_chunk_count(5, 0), 0);
  EXPECT_EQ(torch_chunk_count(-1, 4), 0);
  // At 4,096 ranks: one chunk count per call, no table of 4,096.
  EXPECT_EQ(torch_chunk_count(6'000, 4'096), 3'000);
}

TEST(DTensorTest, MeshCoordinatesAndGroupsAreRowMajor) {
  const DeviceMesh m({{"ep", 2}, {"fsdp", 8}});
  EXPECT_EQ(m.size(), 16);
  EXPECT_THAT(m.coordinate(11), ElementsAre(1, 3));
  EXPECT_THAT(m.group(11, 1), ElementsAre(8, 9, 10, 11, 12, 13, 14, 15));
  EXPECT_THAT(m.group(11, 0), ElementsAre(3, 11));
  EXPECT_FALSE(m.contains(16));
  const DeviceMesh sub({{"efsdp", 8}}, 8);
  EXPECT_TRUE(sub.contains(8));
  EXPECT_FALSE(sub.contains(7));
  EXPECT_THAT(sub.coordinate(10), ElementsAre(2));
}

TEST(DTensorTest, RedistributeIssuesTheCollectiveOfEachTransition) {
  using P = Placement;
  EXPECT_EQ(redistribute_op(P::shard(0), P::replicate()), Op::kAllGather);
  EXPECT_EQ(redistribute_op(P::replicate(), P::shard(0)), std::nullopt);  // local chunk
  EXPECT_EQ(redistribute_op(P::shard(0), P::shard(1)), Op::kAllToAll);
  EXPECT_EQ(redistribute_op(P::partial(), P::shard(0)), Op::kReduceScatter);
  EXPECT_EQ(redistribute_op(P::partial(), P::replicate()), Op::kAllReduce);
  EXPECT_EQ(redistribute_op(P::shard(1), P::shard(1)), std::nullopt);
  EXPECT_EQ(to_string(P::shard(1)), "Shard(1)");
}

TEST(DTensorTest, DistributeTensorScattersOrBroadcastsFromGroupRankZeroUnlessSrcIsNone) {
  const DeviceMesh m({{"ep", 2}, {"fsdp", 4}});
  // [6, 10] fp32, Shard(0) over fsdp after Replicate over ep: a broadcast of the whole, then a
  // scatter of 4 padded shards of 2 rows.
  const auto plan = distribute_plan({6, 10}, 4, m, {Placement::replicate(), Placement::shard(0)}, false);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].op, Op::kBroadcast);
  EXPECT_EQ(plan[0].bytes, 240u);
  EXPECT_EQ(plan[1].mesh_dim, 1);
  EXPECT_EQ(plan[1].op, Op::kScatter);
  EXPECT_EQ(plan[1].bytes, 320u);  // padded to 8 rows
  EXPECT_TRUE(distribute_plan({6, 10}, 4, m, {Placement::replicate(), Placement::shard(0)}, true).empty());
  EXPECT_THAT(local_shape({6, 10}, m, {Placement::replicate(), Placement::shard(0)}, 7), ElementsAre(0, 10));
  EXPECT_THAT(local_shape({6, 10}, m, {Placement::replicate(), Placement::shard(0)}, 1), ElementsAre(2, 10));
}

TEST(DTensorTest, TheModelHasHundredsOfParametersIncludingSmallAndUnevenOnes) {
  const auto params = model_params({});
  EXPECT_EQ(params.size(), 3u + 24u * 11u);
  int experts = 0;
  for (const auto& p : params) experts += p.expert ? 1 : 0;
  EXPECT_EQ(experts, 48);
  EXPECT_EQ(params[9].name, "model.layers.0.mlp.gate.weight");
  EXPECT_THAT(params[9].shape, ElementsAre(60, 2048));
  EXPECT_THAT(params[6].shape, ElementsAre(128));  // q_norm: 128 rows
}

}  // namespace
}  // namespace racesim::runtime
