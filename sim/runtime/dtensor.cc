#include "sim/runtime/dtensor.h"

#include <algorithm>
#include <cassert>

namespace racesim::runtime {

std::int64_t numel(const Shape& s) {
  std::int64_t n = 1;
  for (std::int64_t d : s) {
    assert(d >= 0 && "a tensor's dimensions are never negative");
    n *= d;
  }
  return n;
}

std::string to_string(const Shape& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

std::int64_t torch_chunk_count(std::int64_t n, int k) {
  if (k <= 0 || n <= 0) return 0;
  const std::int64_t each = (n + k - 1) / k;
  return (n + each - 1) / each;
}

std::vector<std::int64_t> torch_chunk_sizes(std::int64_t n, int k) {
  std::vector<std::int64_t> out;
  const std::int64_t count = torch_chunk_count(n, k);
  out.reserve(static_cast<std::size_t>(count));
  // Bounded by k.
  for (std::int64_t c = 0; c < count; ++c) out.push_back(dtensor_shard_size(n, k, static_cast<int>(c)));
  assert(count <= k && "torch.chunk never makes more chunks than asked");
  return out;
}

std::vector<std::int64_t> dtensor_shard_sizes(std::int64_t n, int k) {
  std::vector<std::int64_t> out = torch_chunk_sizes(n, k);
  out.resize(static_cast<std::size_t>(std::max(k, 0)), 0);
  return out;
}

std::int64_t dtensor_shard_size(std::int64_t n, int k, int c) {
  if (k <= 0 || n <= 0 || c < 0 || c >= k) return 0;
  const std::int64_t each = (n + k - 1) / k;
  assert(each * k >= n && "k shards of ceil(n / k) cover the dimension");
  return std::clamp<std::int64_t>(n - static_cast<std::int64_t>(c) * each, 0, each);
}

std::string to_string(const Placement& p) {
  switch (p.kind) {
    case Placement::Kind::kShard: return "Shard(" + std::to_string(p.dim) + ")";
    case Placement::Kind::kReplicate: return "Replicate()";
    case Placement::Kind::kPartial: return "Partial()";
  }
  return "?";
}

DeviceMesh::DeviceMesh(std::vector<Dim> dims, int first_rank) : dims_(std::move(dims)), first_(first_rank) {}

int DeviceMesh::size() const {
  int n = 1;
  for (const Dim& d : dims_) n *= d.size;
  return n;
}

bool DeviceMesh::contains(int rank) const { return rank >= first_ && rank < first_ + size(); }

std::vector<int> DeviceMesh::coordinate(int rank) const {
  assert(contains(rank));
  std::vector<int> c(dims_.size());
  int r = rank - first_;
  for (std::size_t i = dims_.size(); i-- > 0;) {
    c[i] = r % dims_[i].size;
    r /= dims_[i].size;
  }
  return c;
}

std::vector<int> DeviceMesh::group(int rank, int dim) const {
  std::vector<int> c = coordinate(rank);
  std::vector<int> out;
  for (int v = 0; v < dims_[static_cast<std::size_t>(dim)].size; ++v) {
    c[static_cast<std::size_t>(dim)] = v;
    int r = 0;
    for (std::size_t i = 0; i < dims_.size(); ++i) r = r * dims_[i].size + c[i];
    out.push_back(first_ + r);
  }
  return out;
}

std::vector<PlannedCollective> distribute_plan(const Shape& shape, int elem_bytes, const DeviceMesh& mesh,
                                               const std::vector<Placement>& placements,
                                               bool src_data_rank_none) {
  std::vector<PlannedCollective> out;
  if (src_data_rank_none) return out;
  Shape current = shape;
  for (std::size_t i = 0; i < placements.size() && i < mesh.dims().size(); ++i) {
    const Placement& p = placements[i];
    const int k = mesh.dims()[i].size;
    const auto bytes = static_cast<std::uint64_t>(numel(current)) * static_cast<std::uint64_t>(elem_bytes);
    if (p.kind == Placement::Kind::kShard) {
      // The scatter sends padded shards: k times the largest.
      Shape padded = current;
      const std::int64_t rows = current[static_cast<std::size_t>(p.dim)];
      const std::int64_t each = (rows + k - 1) / k;
      padded[static_cast<std::size_t>(p.dim)] = each * k;
      out.push_back({static_cast<int>(i), collective::Op::kScatter,
                     static_cast<std::uint64_t>(numel(padded)) * static_cast<std::uint64_t>(elem_bytes)});
      current[static_cast<std::size_t>(p.dim)] = each;
    } else if (p.kind == Placement::Kind::kReplicate) {
      out.push_back({static_cast<int>(i), collective::Op::kBroadcast, bytes});
    }
  }
  return out;
}

std::optional<collective::Op> redistribute_op(const Placement& from, const Placement& to) {
  using K = Placement::Kind;
  if (from == to) return std::nullopt;
  if (from.kind == K::kShard && to.kind == K::kReplicate) return collective::Op::kAllGather;
  if (from.kind == K::kShard && to.kind == K::kShard) return collective::Op::kAllToAll;
  if (from.kind == K::kPartial && to.kind == K::kShard) return collective::Op::kReduceScatter;
  if (from.kind == K::kPartial && to.kind == K::kReplicate) return collective::Op::kAllReduce;
  return std::nullopt;  // Replicate -> Shard/Partial, Shard -> Partial: local
}

Shape local_shape(const Shape& shape, const DeviceMesh& mesh, const std::vector<Placement>& placements, int rank) {
  Shape out = shape;
  const std::vector<int> c = mesh.coordinate(rank);
  for (std::size_t i = 0; i < placements.size() && i < c.size(); ++i) {
    if (placements[i].kind != Placement::Kind::kShard) continue;
    const auto d = static_cast<std::size_t>(placements[i].dim);
    out[d] = dtensor_shard_sizes(out[d], mesh.dims()[i].size)[static_cast<std::size_t>(c[i])];
  }
  return out;
}

std::vector<ParamSpec> model_params(const ModelConfig& m) {
  std::vector<ParamSpec> out;
  const std::int64_t head_dim = m.hidden / std::max(1, m.heads);
  const std::int64_t kv = head_dim * m.kv_heads;
  out.push_back({"model.embed_tokens.weight", {m.vocab, m.hidden}, false});
  for (int l = 0; l < m.layers; ++l) {
    const std::string p = "model.layers." + std::to_string(l) + ".";
    out.push_back({p + "input_layernorm.weight", {m.hidden}, false});
    out.push_back({p + "self_attn.q_proj.weight", {m.hidden, m.hidden}, false});
    out.push_back({p + "self_attn.k_proj.weight", {kv, m.hidden}, false});
    out.push_back({p + "self_attn.v_proj.weight", {kv, m.hidden}, false});
    out.push_back({p + "self_attn.o_proj.weight", {m.hidden, m.hidden}, false});
    out.push_back({p + "self_attn.q_norm.weight", {head_dim}, false});
    out.push_back({p + "self_attn.k_norm.weight", {head_dim}, false});
    out.push_back({p + "post_attention_layernorm.weight", {m.hidden}, false});
    out.push_back({p + "mlp.gate.weight", {m.experts, m.hidden}, false});
    out.push_back({p + "mlp.experts.gate_up_proj", {m.experts, m.hidden, 2 * m.intermediate}, true});
    out.push_back({p + "mlp.experts.down_proj", {m.experts, m.intermediate, m.hidden}, true});
  }
  out.push_back({"model.norm.weight", {m.hidden}, false});
  out.push_back({"lm_head.weight", {m.vocab, m.hidden}, false});
  return out;
}

}  // namespace racesim::runtime
