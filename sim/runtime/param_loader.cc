// One rank's parameter loading into DTensor shards (see param_loader.h).
#include "sim/runtime/param_loader.h"

#include <algorithm>
#include <cassert>

namespace racesim::runtime {

std::uint64_t ParamLoader::row_elems() const { return row_elems_; }

collective::Communicator& ParamLoader::group() const {
  return param().expert ? env_.expert_group : env_.world;
}

std::int64_t ParamLoader::dtensor_rows() const {
  const ParamSpec& p = param();
  const std::int64_t rows = p.expert && env_.ep > 1 ? p.shape[0] / env_.ep : p.shape[0];
  return dtensor_shard_size(rows, group().size(), coord());
}

MaybeIssue ParamLoader::alloc(std::uint64_t bytes, const char* what, bool kept) {
  device::Device& dev = env_.device;
  if (bytes > dev.config().memory - dev.used()) {
    // The description is built only for the error.
    auto h = dev.alloc(bytes, param().name + what);
    assert(!h);
    return LoadIssue{"no_oom", h.message()};
  }
  const std::uint64_t handle = *dev.alloc(bytes, std::string());
  if (!kept) buffers_.push_back(handle);
  return std::nullopt;
}

void ParamLoader::free_buffers() {
  for (std::uint64_t h : buffers_) env_.device.free(h);
  buffers_.clear();
}

MaybeIssue ParamLoader::wait_for(const collective::Communicator* comm) {
  const kernel::Status st = env_.queue.sync(comm, env_.exec_timeout);
  if (st.is_ok()) return std::nullopt;
  return LoadIssue{"no_deadlock", st.message()};
}

MaybeIssue ParamLoader::to_empty() {
  const int pbytes = env_.model.param_bytes;
  // Bounded by the number of parameters.
  for (std::size_t i = 0; i < env_.params.size(); ++i) {
    current_ = i;
    row_elems_ = static_cast<std::uint64_t>(numel(param().shape) / param().shape[0]);
    const std::int64_t rows = dtensor_rows();
    const auto bytes = static_cast<std::uint64_t>(rows) * row_elems() * static_cast<std::uint64_t>(pbytes);
    if (auto issue = alloc(bytes, "", /*kept=*/true)) return issue;
  }
  current_ = 0;
  return std::nullopt;
}

void ParamLoader::begin_param(std::size_t i) {
  assert(i < env_.params.size());
  free_buffers();
  current_ = i;
  started_ = true;
  numel_ = static_cast<std::uint64_t>(numel(param().shape));
  row_elems_ = numel_ / static_cast<std::uint64_t>(param().shape[0]);
  rows_ = param().shape[0];
  sliced_ = false;
  local_rows_.reset();
  prep_ = 0;
  want_rows_ = dtensor_rows();
}

void ParamLoader::read(double bytes_per_s) {
  assert(started_ && bytes_per_s > 0);
  if (env_.rank != 0) return;
  const double bytes = static_cast<double>(numel_) * env_.model.checkpoint_bytes;
  env_.sim.sleep_for(kernel::transfer_time(bytes, bytes_per_s));
}

MaybeIssue ParamLoader::broadcast_metadata() {
  env_.queue.enqueue(env_.world, {collective::Op::kBroadcast, 1024, 0});  // broadcast_object_list
  return wait_for(&env_.world);
}

MaybeIssue ParamLoader::broadcast_tensor() {
  const auto bytes = numel_ * static_cast<std::uint64_t>(env_.model.checkpoint_bytes);
  if (auto issue = alloc(bytes, " (broadcast)")) return issue;
  env_.queue.enqueue(env_.world, {collective::Op::kBroadcast, bytes, 0});
  return std::nullopt;
}

MaybeIssue ParamLoader::p2p_tensor() {
  const auto bytes = numel_ * static_cast<std::uint64_t>(env_.model.checkpoint_bytes);
  if (auto issue = alloc(bytes, env_.rank == 0 ? " (send)" : " (recv)")) return issue;
  const int world = env_.world.size();
  if (env_.rank == 0) {
    // Bounded by the world size.
    for (int r = 1; r < world; ++r) {
      env_.queue.enqueue(env_.engine.communicator("p2p", {0, r}), {collective::Op::kSend, bytes, 0});
    }
  } else {
    env_.queue.enqueue(env_.engine.communicator("p2p", {0, env_.rank}), {collective::Op::kSend, bytes, 0});
  }
  return std::nullopt;
}

std::int64_t ParamLoader::begin_slicing() {
  const ParamSpec& p = param();
  sliced_ = p.expert && env_.ep > 1;
  if (!sliced_) return 0;
  rows_ = p.shape[0] / env_.ep;
  return rows_;  // bounded: one draw per local expert
}

MaybeIssue ParamLoader::distribute_tensor(bool src_data_rank_none, bool wait) {
  collective::Communicator& g = group();
  const int pbytes = env_.model.param_bytes;
  if (!src_data_rank_none) {
    const std::uint64_t local = static_cast<std::uint64_t>(rows_) * row_elems();
    if (auto issue = alloc(local * static_cast<std::uint64_t>(pbytes), " (tensor.to)")) return issue;
    const int k = g.size();
    const std::int64_t each = (rows_ + k - 1) / k;  // torch.chunk's chunk, padded to k equal parts
    const auto bytes = static_cast<std::uint64_t>(each * k) * row_elems() * static_cast<std::uint64_t>(pbytes);
    env_.queue.enqueue(g, {collective::Op::kScatter, bytes, 0}, prep_);
    prep_ = 0;
    if (&g != &env_.world) ++stats_.hidden_collectives;
  }
  local_rows_ = want_rows_;
  if (wait && !src_data_rank_none) return wait_for(&g);
  return std::nullopt;
}

MaybeIssue ParamLoader::to_local_chunk(bool on_host) {
  const collective::Communicator& g = group();
  const int k = g.size();
  const int coord = this->coord();
  const auto pbytes = static_cast<std::uint64_t>(env_.model.param_bytes);
  if (!on_host) {
    if (auto issue = alloc(static_cast<std::uint64_t>(rows_) * row_elems() * pbytes, " (tensor.to)")) return issue;
  }
  const std::int64_t chunks = torch_chunk_count(rows_, k);
  if (coord >= chunks) {
    ++stats_.index_errors;
    local_rows_ = 0;
    return LoadIssue{"shards_correct", "IndexError in " + param().name + " " + to_string(param().shape) +
                                           ": torch.chunk(" + std::to_string(rows_) + ", " + std::to_string(k) +
                                           ") gives " + std::to_string(chunks) + " chunks, mesh coordinate " +
                                           std::to_string(coord)};
  }
  const std::int64_t got = dtensor_shard_size(rows_, k, coord);
  local_rows_ = got;
  return alloc(static_cast<std::uint64_t>(got) * row_elems() * pbytes, " (chunk)");
}

MaybeIssue ParamLoader::copy_into_param() {
  const std::int64_t got = local_rows_.value_or(rows_);
  const std::int64_t want = want_rows_;
  free_buffers();
  ++stats_.params_loaded;
  if (got == want) return std::nullopt;
  return LoadIssue{"shards_correct", param().name + ": local shard has " + std::to_string(got) + " rows, DTensor's has " +
                                         std::to_string(want)};
}

MaybeIssue ParamLoader::sync(bool all) { return wait_for(all ? nullptr : &env_.world); }

}  // namespace racesim::runtime
