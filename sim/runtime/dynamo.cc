// torch.device under a vendor mock and dynamo's guarded compile cache (see dynamo.h).
#include "sim/runtime/dynamo.h"

#include <algorithm>
#include <cassert>

namespace racesim::runtime {

std::string TorchDevice::repr() const {
  return "device(type='" + type + "', index=" + std::to_string(index) + ")";
}

Torch::Torch(std::string vendor_type) : types_{"cuda"} { vendor_ = intern(vendor_type); }

std::uint16_t Torch::intern(const std::string& type) {
  for (std::size_t i = 0; i < types_.size(); ++i) {
    if (types_[i] == type) return static_cast<std::uint16_t>(i);
  }
  types_.push_back(type);  // bounded: the device types a scenario names
  return static_cast<std::uint16_t>(types_.size() - 1);
}

Torch::Device Torch::build(std::uint16_t type, int index) const {
  assert(type < types_.size() && vendor_ < types_.size() && "device types are interned");
  return {index, mocked_ && type == kCuda ? vendor_ : type};
}

void Torch::import_vendor(bool mock_cuda, bool route_default_device) {
  if (mock_cuda) mocked_ = true;
  route_default_device_ = route_default_device;
  // The routed set_default_device rebuilds the stored default with the patched constructor.
  if (route_default_device_ && current_) current_ = build(current_->type, current_->index);
}

TorchDevice Torch::make_device(const std::string& type, int index) const {
  return {mocked_ && type == "cuda" ? types_[vendor_] : type, index};
}

void Torch::set_default_device(const std::string& type, int index) { current_ = build(intern(type), index); }

std::optional<TorchDevice> Torch::current_device() const {
  if (!current_) return std::nullopt;
  return TorchDevice{types_[current_->type], current_->index};
}

std::uint16_t Torch::guard_type(std::uint16_t type, bool now) const {
  const std::uint16_t built = now && mocked_ && type == kCuda ? vendor_ : type;
  return config_.canonicalize_guard_devices && built == kCuda ? vendor_ : built;
}

Torch::Guard Torch::failing_guard(const Entry& e, std::int64_t shape) const {
  if (e.has_device) {
    // The guard's right side is evaluated now, by whatever torch.device is installed now.
    const bool equal = current_ && current_->index == e.device_index &&
                       guard_type(current_->type, false) == guard_type(e.device_type, true);
    if (!equal) return Guard::kDevice;
  } else if (current_) {
    return Guard::kDeviceIsNone;
  }
  if (e.has_shape && e.shape != shape) return Guard::kShape;
  return Guard::kNone;
}

std::string Torch::guard_text(Guard g, const Entry& e, std::int64_t shape) const {
  switch (g) {
    case Guard::kNone:
      return "";
    case Guard::kDevice:
      return "utils_device.CURRENT_DEVICE == " + TorchDevice{types_[e.device_type], e.device_index}.repr();
    case Guard::kDeviceIsNone:
      return "utils_device.CURRENT_DEVICE is None";
    case Guard::kShape:
      return "tensor 'L['x']' size mismatch at index 0. expected " + std::to_string(e.shape) + ", actual " +
             std::to_string(shape);
  }
  return "";
}

const Torch::Function* Torch::find(const std::string& fn) const {
  for (const Function& f : functions_) {
    if (f.called && f.name == fn) return &f;
  }
  return nullptr;
}

CallOutcome Torch::call(const std::string& fn, const std::string& file, std::int64_t shape) {
  const Function* f = find(fn);
  return call(f ? static_cast<std::size_t>(f - functions_.data()) : functions_.size(), fn, file, shape);
}

CallOutcome Torch::call(std::size_t slot, const std::string& fn, const std::string& file, std::int64_t shape) {
  assert(slot < 65'536 && "Torch::call: slot out of range");
  if (slot >= functions_.size()) functions_.resize(slot + 1);
  Function& f = functions_[slot];
  if (!f.called) {
    f.called = true;
    f.name = fn;
  }
  assert(f.name == fn && "Torch::call: one slot, one function");
  const bool dynamic = !config_.assume_static_by_default;
  if (f.eager) {
    assert(!config_.fail_on_recompile_limit_hit && "only a limit that falls back sends a function to eager");
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
  Entry e;
  if (current_) {
    e.has_device = true;
    e.device_index = current_->index;
    e.device_type = current_->type;
  }
  if (!dynamic) {
    e.has_shape = true;
    e.shape = shape;
  }
  f.entries.push_back(e);
  assert(static_cast<int>(f.entries.size()) <= limit && "a function's cache holds at most the limit's entries");
  ++f.compiles;
  ++stats_.compiles;
  if (reason.empty()) return {CallOutcome::Kind::kCompiled, checked, ""};
  ++stats_.recompiles;
  return {CallOutcome::Kind::kRecompiled, checked,
          "Recompiling function " + fn + " in " + file + ", triggered by the following guard failure: " + reason};
}

int Torch::entries(const std::string& fn) const {
  const Function* f = find(fn);
  return f == nullptr ? 0 : static_cast<int>(f->entries.size());
}

std::uint64_t Torch::compiles_of(const std::string& fn) const {
  const Function* f = find(fn);
  return f == nullptr ? 0 : f->compiles;
}

std::vector<std::string> Torch::functions() const {
  std::vector<std::string> out;
  for (const Function& f : functions_) {
    if (f.called) out.push_back(f.name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace racesim::runtime
