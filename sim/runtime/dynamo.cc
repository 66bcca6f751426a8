// torch.device under a vendor mock and dynamo's guarded compile cache (see dynamo.h).
#include "sim/runtime/dynamo.h"

#include <algorithm>
#include <cassert>

namespace racesim::runtime {

std::string TorchDevice::repr() const {
  return "device(type='" + type + "', index=" + std::to_string(index) + ")";
}

void Torch::import_vendor(bool mock_cuda, bool route_default_device) {
  if (mock_cuda) mocked_ = true;
  route_default_device_ = route_default_device;
  // The routed set_default_device rebuilds the stored default with the patched constructor.
  if (route_default_device_ && current_) current_ = make_device(current_->type, current_->index);
}

TorchDevice Torch::make_device(const std::string& type, int index) const {
  return {mocked_ && type == "cuda" ? vendor_type_ : type, index};
}

void Torch::set_default_device(const std::string& type, int index) { current_ = make_device(type, index); }

const std::string& Torch::guard_type(const std::string& type, bool now) const {
  const std::string& built = now && mocked_ && type == "cuda" ? vendor_type_ : type;
  return config_.canonicalize_guard_devices && built == "cuda" ? vendor_type_ : built;
}

Torch::Guard Torch::failing_guard(const Entry& e, std::int64_t shape) const {
  if (e.device) {
    // The guard's right side is evaluated now, by whatever torch.device is installed now.
    const bool equal = current_ && current_->index == e.device->index &&
                       guard_type(current_->type, false) == guard_type(e.device->type, true);
    if (!equal) return Guard::kDevice;
  } else if (current_) {
    return Guard::kDeviceIsNone;
  }
  if (e.shape && *e.shape != shape) return Guard::kShape;
  return Guard::kNone;
}

std::string Torch::guard_text(Guard g, const Entry& e, std::int64_t shape) const {
  switch (g) {
    case Guard::kNone:
      return "";
    case Guard::kDevice:
      return "utils_device.CURRENT_DEVICE == " + e.device->repr();
    case Guard::kDeviceIsNone:
      return "utils_device.CURRENT_DEVICE is None";
    case Guard::kShape:
      return "tensor 'L['x']' size mismatch at index 0. expected " + std::to_string(*e.shape) + ", actual " +
             std::to_string(shape);
  }
  return "";
}

CallOutcome Torch::call(const std::string& fn, const std::string& file, std::int64_t shape) {
  const bool dynamic = !config_.assume_static_by_default;
  Function& f = functions_[fn];
  if (f.eager) {
    ++stats_.eager_calls;
    return {CallOutcome::Kind::kEager, 0, ""};
  }
  int checked = 0;
  // Newest first, as dynamo's cache lookup; bounded by the entries (at most the limit).
  for (auto it = f.entries.rbegin(); it != f.entries.rend(); ++it) {
    ++checked;
    if (failing_guard(*it, shape) == Guard::kNone) return {CallOutcome::Kind::kCached, checked, ""};
  }
  std::string reason;
  if (!f.entries.empty()) {
    ++stats_.guard_failures;
    const Entry& newest = f.entries.back();
    reason = guard_text(failing_guard(newest, shape), newest, shape);
  }
  const int limit = std::min(config_.recompile_limit, config_.accumulated_recompile_limit);
  if (static_cast<int>(f.entries.size()) >= limit) {
    const std::string why = "torch._dynamo hit config.cache_size_limit (" + std::to_string(limit) +
                            ") function: '" + fn + "' (" + file + ") last reason: " + reason;
    if (config_.fail_on_recompile_limit_hit) {
      return {CallOutcome::Kind::kLimitError, checked, "FailOnRecompileLimitHit: " + why};
    }
    f.eager = true;
    ++stats_.fallbacks;
    ++stats_.eager_calls;
    return {CallOutcome::Kind::kEager, checked, why + "; running it eagerly from now on"};
  }
  f.entries.push_back({current_, dynamic ? std::nullopt : std::optional<std::int64_t>(shape)});
  ++f.compiles;
  ++stats_.compiles;
  if (reason.empty()) return {CallOutcome::Kind::kCompiled, checked, ""};
  ++stats_.recompiles;
  return {CallOutcome::Kind::kRecompiled, checked,
          "Recompiling function " + fn + " in " + file + ", triggered by the following guard failure: " + reason};
}

int Torch::entries(const std::string& fn) const {
  auto it = functions_.find(fn);
  return it == functions_.end() ? 0 : static_cast<int>(it->second.entries.size());
}

std::uint64_t Torch::compiles_of(const std::string& fn) const {
  auto it = functions_.find(fn);
  return it == functions_.end() ? 0 : it->second.compiles;
}

std::vector<std::string> Torch::functions() const {
  std::vector<std::string> out;
  for (const auto& [name, f] : functions_) out.push_back(name);
  return out;
}

}  // namespace racesim::runtime
