// One rank's side of loading a model's parameters into DTensor shards, operation by operation, as
// VeOmni's rank0_load_and_broadcast_weights and _dispatch_parameter do them (veomni/models/
// module_utils.py) on top of torch.distributed.tensor. A scenario composes the operations (the
// primitives for_each_param, read_param, broadcast_metadata, broadcast_param, p2p_param,
// slice_experts, distribute_tensor, to_local_chunk, copy_param), so a fix is a different
// composition, not a different C++ code path.
//
// State: the current parameter (in checkpoint order) and its working tensor: its rows along
// dim 0 (after expert slicing), whether it is on the device, the device buffers it holds, and
// `prep`, the device work still queued before its data is ready (the slicing), which delays the
// next collective that reads it (collective::CommQueue's ready_after).
//
// The operations and what they cost (fp32 parameters, a bf16 checkpoint by default):
//   to_empty            allocates every parameter's local shard on the device (model.to_empty)
//   read(bw)            rank 0 reads the full tensor from the checkpoint: full*ckpt_bytes / bw
//   broadcast_metadata  broadcast_object_list on world: 1 KiB, and the host waits for it
//   broadcast_tensor    a receive buffer of full*ckpt_bytes on the device; broadcast on world
//                       from rank 0, enqueued (the host goes on)
//   p2p_tensor          the same data by point-to-point: rank 0 enqueues a send to every other
//                       rank in rank order, each on its own pair communicator; the others a
//                       receive from 0
//   slice_experts       parallel_plan.shard_tensor: an expert parameter keeps this rank's
//                       experts (rows / ep), sliced expert by expert on the device: `prep` grows
//                       by one sampled duration per local expert
//   distribute_tensor   DTensor's factory. src_data_rank 0: tensor.to(dtype) on the device
//                       (a buffer of the local rows at param_bytes), then a scatter over the
//                       parameter's group (its ep group's fsdp communicator for experts, world
//                       otherwise) from its rank 0, enqueued behind `prep` (hidden when the group
//                       is not world); `wait`: the host waits for it (a coordinated order).
//                       src_data_rank None: each rank takes its own shard locally, no collective.
//                       Either way the local shard is DTensor's.
//   to_local_chunk      PR 642's bypass: torch.chunk(rows, group size)[mesh coordinate], with the
//                       whole tensor converted on the device first (`on_host` false: a buffer of
//                       the local rows) or the chunk taken on the host first (`on_host`: only the
//                       chunk reaches the device). torch.chunk returns fewer chunks than the group
//                       when rows are few (60 over 16 gives 15): the coordinate past the end is an
//                       IndexError (check shards_correct), and the rank goes on with no shard.
//   copy_into_param     copy_ into the parameter's local shard: a working tensor whose rows differ
//                       from DTensor's shard is a shape error (shards_correct); frees the buffers.
//   sync                the host waits for the collectives enqueued so far (exec timeout: the
//                       collective config's, as HCCL_EXEC_TIMEOUT).
//
// Every allocation beyond the device's capacity is an OOM (check no_oom). Operations REQUIRE the
// rank's simulated process; each returns the problem it found, if any, and leaves the state
// consistent so a rank whose check is off goes on as the real program would.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/collective/comm_queue.h"
#include "sim/collective/engine.h"
#include "sim/device/device.h"
#include "sim/kernel/simulation.h"
#include "sim/runtime/dtensor.h"

namespace racesim::runtime {

using kernel::Time;

// A problem an operation found: the check it breaks and a diagnosis without rank or time
// ("IndexError in ...", "exec timeout after 1836s in ...").
struct LoadIssue {
  std::string check;
  std::string message;
};
using MaybeIssue = std::optional<LoadIssue>;

// What one rank's loader acts on. REQUIRES: everything outlives the loader.
struct LoaderEnv {
  kernel::Simulation& sim;
  device::Device& device;
  collective::CommQueue& queue;
  collective::Engine& engine;
  collective::Communicator& world;
  // The rank's group along the fsdp dimension of the [ep, fsdp] mesh (world when ep is 1).
  collective::Communicator& expert_group;
  int rank = 0;
  int ep = 1;  // expert parallelism
  const ModelConfig& model;
  const std::vector<ParamSpec>& params;  // in checkpoint order
  Time exec_timeout = kernel::kTimeMax;  // the host's wait for collectives
};

// Counters a scenario reports (summed over ranks by the harness).
struct LoaderStats {
  std::uint64_t hidden_collectives = 0;  // collectives issued on a group other than world
  std::uint64_t index_errors = 0;        // torch.chunk indexed past its end
  std::uint64_t params_loaded = 0;       // copy_into_param calls
};

class ParamLoader {
 public:
  explicit ParamLoader(LoaderEnv env)
      : env_(env), world_coord_(env.world.group_rank(env.rank)), expert_coord_(env.expert_group.group_rank(env.rank)) {}
  ParamLoader(const ParamLoader&) = delete;
  ParamLoader& operator=(const ParamLoader&) = delete;

  const LoaderStats& stats() const { return stats_; }
  std::size_t param_count() const { return env_.params.size(); }
  // The current parameter. REQUIRES: begin_param was called.
  const ParamSpec& param() const { return env_.params.at(current_); }

  MaybeIssue to_empty();
  // Makes parameter `i` current with a fresh working tensor (on rank 0's host, not yet anywhere
  // else); any buffers of the previous one are freed. REQUIRES: i < param_count().
  void begin_param(std::size_t i);
  // REQUIRES: bytes_per_s > 0.
  void read(double bytes_per_s);
  MaybeIssue broadcast_metadata();
  MaybeIssue broadcast_tensor();
  MaybeIssue p2p_tensor();
  // `per_expert()` draws one expert's slicing time (a callable returning Time).
  template <typename F>
  void slice_experts(F&& per_expert) {
    for (std::int64_t e = begin_slicing(); e > 0; --e) prep_ = kernel::add_time(prep_, per_expert());
  }
  MaybeIssue distribute_tensor(bool src_data_rank_none, bool wait);
  MaybeIssue to_local_chunk(bool on_host);
  MaybeIssue copy_into_param();
  // all: every communicator; else world only.
  MaybeIssue sync(bool all);

 private:
  // Starts slice_experts: keeps this rank's experts; returns how many to slice (0: none).
  std::int64_t begin_slicing();
  // The working tensor's row size in elements (the product of the dims after the first).
  std::uint64_t row_elems() const;
  // The parameter's group: expert_group for experts, world otherwise.
  collective::Communicator& group() const;
  // DTensor's local rows of the current parameter on this rank.
  std::int64_t dtensor_rows() const;
  // This rank's coordinate in the current parameter's group.
  int coord() const { return param().expert ? expert_coord_ : world_coord_; }
  // Allocates `bytes` on the device, or reports the OOM. A buffer of the working tensor (freed
  // with it) unless `kept` (a parameter's own shard).
  MaybeIssue alloc(std::uint64_t bytes, const char* what, bool kept = false);
  void free_buffers();
  MaybeIssue wait_for(const collective::Communicator* comm);

  LoaderEnv env_;
  int world_coord_, expert_coord_;  // this rank's index in world and in its expert group
  LoaderStats stats_;
  std::size_t current_ = 0;
  bool started_ = false;
  std::uint64_t numel_ = 0;         // elements of the current parameter
  std::uint64_t row_elems_ = 1;     // elements per row (dims after the first)
  std::int64_t rows_ = 0;           // rows of the working tensor along dim 0
  bool sliced_ = false;             // slice_experts kept this rank's experts
  std::optional<std::int64_t> local_rows_;  // the shard this rank will copy (distribute/chunk)
  std::int64_t want_rows_ = 0;      // DTensor's shard of the current parameter
  Time prep_ = 0;                   // device work queued before the data is ready
  std::vector<std::uint64_t> buffers_;  // device allocations of the working tensor
};

}  // namespace racesim::runtime
