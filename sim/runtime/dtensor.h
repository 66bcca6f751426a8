// Tensors and DTensor as the weight-loading bug needs them: shapes, device meshes, placements,
// torch.chunk against DTensor's sharding, the collectives distribute_tensor and redistribute
// issue, and a MoE model's parameter list.
//
// torch.chunk(n, k) splits n rows into chunks of ceil(n/k) rows, the last one smaller, and
// returns fewer than k chunks when n is small or uneven (6 rows over 4 gives 3 chunks of 2).
// DTensor's Shard uses the same split and then pads with empty shards up to k, so every mesh
// coordinate has a (possibly empty) shard. Code that indexes torch.chunk's result by the mesh
// coordinate raises IndexError where DTensor would give an empty shard.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/collective/engine.h"

namespace racesim::runtime {

using Shape = std::vector<std::int64_t>;
std::int64_t numel(const Shape& s);
std::string to_string(const Shape& s);  // "[60, 1024]"

// Sizes of torch.chunk(n rows, k): ceil(n/k) each, the last smaller; fewer than k if n is small.
std::vector<std::int64_t> torch_chunk_sizes(std::int64_t n, int k);
// How many chunks torch.chunk(n rows, k) gives (torch_chunk_sizes(n, k).size()), in O(1): a
// rank that needs only its own chunk does not build the table of k (at 4,096 ranks, k = 4,096
// per rank made loading quadratic in the ranks).
std::int64_t torch_chunk_count(std::int64_t n, int k);
// Sizes of DTensor's Shard over k: torch.chunk's, then empty shards up to k.
std::vector<std::int64_t> dtensor_shard_sizes(std::int64_t n, int k);
// The size of shard `c` of dtensor_shard_sizes(n, k), without building the table.
std::int64_t dtensor_shard_size(std::int64_t n, int k, int c);

struct Placement {
  enum class Kind : std::uint8_t { kShard, kReplicate, kPartial };
  Kind kind = Kind::kReplicate;
  int dim = 0;  // kShard
  static Placement shard(int d) { return {Kind::kShard, d}; }
  static Placement replicate() { return {Kind::kReplicate, 0}; }
  static Placement partial() { return {Kind::kPartial, 0}; }
  bool operator==(const Placement&) const = default;
};
std::string to_string(const Placement& p);  // "Shard(0)", "Replicate()", "Partial()"

// A device mesh over ranks first..first+prod(sizes)-1, row-major (the last dimension varies
// fastest), as init_device_mesh lays it out.
class DeviceMesh {
 public:
  struct Dim {
    std::string name;
    int size = 1;
  };
  DeviceMesh(std::vector<Dim> dims, int first_rank = 0);
  const std::vector<Dim>& dims() const { return dims_; }
  int size() const;
  bool contains(int rank) const;
  // REQUIRES: contains(rank).
  std::vector<int> coordinate(int rank) const;
  // The ranks that share every coordinate but `dim` with `rank` (its group along `dim`).
  std::vector<int> group(int rank, int dim) const;

 private:
  std::vector<Dim> dims_;
  int first_;
};

// One collective of a plan: along which mesh dimension, which op, how many bytes (the whole
// buffer, as collective::Call counts it).
struct PlannedCollective {
  int mesh_dim = 0;
  collective::Op op = collective::Op::kBroadcast;
  std::uint64_t bytes = 0;
};

// The collectives distribute_tensor(tensor, mesh, placements, src_data_rank) issues: with
// src_data_rank = 0, for each mesh dimension in order, a Shard scatters the current tensor over
// that dimension's group from its rank 0 and a Replicate broadcasts it (a Partial is not a
// valid input placement); with src_data_rank = None, none: every rank takes its own shard.
std::vector<PlannedCollective> distribute_plan(const Shape& shape, int elem_bytes, const DeviceMesh& mesh,
                                               const std::vector<Placement>& placements,
                                               bool src_data_rank_none);

// The collective that turns `from` into `to` on one mesh dimension (DTensor's redistribute):
// Shard -> Replicate all_gather; Replicate -> Shard none (a local chunk); Shard(i) -> Shard(j)
// all_to_all; Partial -> Shard reduce_scatter; Partial -> Replicate all_reduce; unchanged none.
// Replicate -> Partial and Shard -> Partial are local too (none).
std::optional<collective::Op> redistribute_op(const Placement& from, const Placement& to);

// The local shape of `shape` on `rank` under DTensor's placements.
Shape local_shape(const Shape& shape, const DeviceMesh& mesh, const std::vector<Placement>& placements, int rank);

// A MoE transformer's parameters, in checkpoint order.
struct ModelConfig {
  int layers = 24;
  std::int64_t hidden = 2048;
  std::int64_t intermediate = 768;   // per expert
  int experts = 60;
  std::int64_t vocab = 32000;
  int heads = 16;
  int kv_heads = 4;
  int checkpoint_bytes = 2;  // bf16 in the checkpoint
  int param_bytes = 4;       // fp32 parameters
};
struct ParamSpec {
  std::string name;
  Shape shape;
  bool expert = false;  // stacked experts [experts, ...]: sliced for expert parallelism first
};
std::vector<ParamSpec> model_params(const ModelConfig& config);

}  // namespace racesim::runtime
