// One process's torch as the device-guard recompile bug needs it (DeepLink DIPU with mock_cuda,
// the DeepLink-org/deeplink.framework issue on guard failures under mock_cuda): torch.device
// objects, the constructor a vendor mock installs, the default device that
// torch.set_default_device stores, and dynamo's compile cache with guards, its recompile limit and
// the eager fallback.
//
// Devices: torch.device is a (type, index); two are equal when both are (device.__eq__). The
// original constructor keeps the type it is given. Importing the vendor's module with mock_cuda
// replaces torch.device with a class whose constructor rewrites "cuda" to the vendor's type
// (torch_dipu's _DIPUDevice.__replacedipu), so after the import torch.device('cuda', 0) is
// xpu:0 and the repro t1 == t2 is False.
//
// Default device: set_default_device(spec) stores CURRENT_DEVICE = torch.device(spec) built by
// the constructor installed *at that moment* (torch/utils/_device.py). A mock that also routes
// set_default_device (a fix) rebuilds CURRENT_DEVICE with its own constructor when imported.
//
// Compile cache (torch/_dynamo: convert_frame, guards, cache_size): per function, a list of
// compiled entries, each with its guards, checked newest first on every call; checking costs
// `guard_check_cost` per entry checked. An entry's guards are recorded at compile time:
//   - the global CURRENT_DEVICE: `utils_device.CURRENT_DEVICE == device(type='T', index=I)` with
//     T, I its value then (or `CURRENT_DEVICE is None`); at check time `device(...)` is
//     evaluated by the torch.device installed *then*: under the mock, cuda becomes xpu, and a
//     CURRENT_DEVICE built by the original constructor never equals it;
//   - each argument's shape (static shapes), unless assume_static_by_default is off (dynamic
//     shapes, as mark_dynamic), which drops shape guards but not the global one.
// A call that passes some entry's guards runs compiled. Otherwise dynamo recompiles (a sampled
// compile time) and adds an entry, logging `Recompiling function F in FILE, triggered by the
// following guard failure: GUARD` (the newest entry's first failing guard), unless the function
// already has `recompile_limit` entries (torch._dynamo.config.cache_size_limit, 8 by default;
// also bounded by accumulated_recompile_limit, 256): then it falls back to eager for good (a
// warning), or, with fail_on_recompile_limit_hit, raises. With canonicalize_guard_devices (a
// fix in the guard), both sides of a device guard are compared after mapping cuda to the
// vendor's type.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "sim/kernel/time.h"

namespace racesim::runtime {

using kernel::Time;

// torch.device.
struct TorchDevice {
  std::string type;
  int index = 0;
  bool operator==(const TorchDevice&) const = default;
  // As dynamo prints it in a guard: "device(type='cuda', index=0)".
  std::string repr() const;
};

// torch._dynamo.config and the guard costs.
struct DynamoConfig {
  int recompile_limit = 8;                // cache_size_limit
  int accumulated_recompile_limit = 256;  // across a function's entries
  bool fail_on_recompile_limit_hit = false;
  bool canonicalize_guard_devices = false;  // a fix in the guard (not in torch)
  bool assume_static_by_default = true;     // false: compile with dynamic shapes (no shape guards)
  Time guard_check_cost = 2 * kernel::kMicrosecond;  // per entry checked per call
};

// What one call did.
struct CallOutcome {
  enum class Kind : std::uint8_t { kCompiled, kRecompiled, kCached, kEager, kLimitError };
  Kind kind = Kind::kCached;
  int entries_checked = 0;  // guard checks paid (each guard_check_cost)
  std::string message;      // kRecompiled: dynamo's recompile log line; kEager, kLimitError: why
};

// Counters of one process.
struct DynamoStats {
  std::uint64_t compiles = 0;        // first compiles and recompiles
  std::uint64_t recompiles = 0;      // compiles after a guard failure
  std::uint64_t guard_failures = 0;  // calls whose every entry failed its guards
  std::uint64_t eager_calls = 0;     // calls run eagerly after the limit
  std::uint64_t fallbacks = 0;       // functions sent to eager for good
};

class Torch {
 public:
  // `vendor_type`: the device type the vendor's mock rewrites cuda to ("xpu" for DIPU).
  explicit Torch(std::string vendor_type = "xpu");

  // `import torch_dipu` (the vendor's module): with `mock_cuda`, torch.device is patched from now
  // on; with `route_default_device` the mock also rebuilds CURRENT_DEVICE with its constructor.
  void import_vendor(bool mock_cuda, bool route_default_device);
  bool mocked() const { return mocked_; }
  // torch.device(type=..., index=...) with the constructor installed now.
  TorchDevice make_device(const std::string& type, int index) const;
  // torch.set_default_device(type:index).
  void set_default_device(const std::string& type, int index);
  std::optional<TorchDevice> current_device() const;

  DynamoConfig& config() { return config_; }
  const DynamoStats& stats() const { return stats_; }

  // A call of the compiled function `fn` (source location `file`) with an argument of shape
  // `shape`. Decides, by the guards, what runs; the caller pays entries_checked *
  // guard_check_cost, a compile time when (re)compiled, and the compiled or eager run time.
  CallOutcome call(const std::string& fn, const std::string& file, std::int64_t shape);
  // The same for a caller that numbers its functions: `slot` is fn's number, the same on every
  // call of fn (dense, from 0; one numbering may serve many Torch objects). Finds the function
  // without reading its name: with thousands of ranks, each rank's cache is cold memory. Use
  // one form or the other on a Torch, not both. REQUIRES: slot < 65,536.
  CallOutcome call(std::size_t slot, const std::string& fn, const std::string& file, std::int64_t shape);
  // Entries in the cache of `fn` (0 when never called).
  int entries(const std::string& fn) const;
  // Compiles (first and re-) of `fn`.
  std::uint64_t compiles_of(const std::string& fn) const;
  // The functions called so far, sorted.
  std::vector<std::string> functions() const;

 private:
  // A device as a guard keeps it: the type as an index into types_ (the hot path compares
  // integers, not strings).
  struct Device {
    std::int32_t index = 0;
    std::uint16_t type = 0;
  };
  // 16 bytes: a function's eight entries (the limit) are two cache lines, all checked per call.
  struct Entry {
    std::int64_t shape = 0;          // the argument's shape (static shapes; has_shape)
    std::int32_t device_index = 0;   // CURRENT_DEVICE when compiled (has_device)
    std::uint16_t device_type = 0;
    bool has_device = false;
    bool has_shape = false;
  };
  static_assert(sizeof(Entry) == 16);
  // A function and its first eight entries (the default limit) live inside the Torch, and the
  // first two functions too: a call reads one block of memory, not a chain of three (with
  // thousands of ranks each link was a cold miss: 14% of device guards at 4,096 ranks).
  struct Function {
    std::string name;
    bool called = false;                               // a slot below one in use may not be (yet)
    boost::container::small_vector<Entry, 8> entries;  // oldest first
    bool eager = false;                                // sent to eager for good
    std::uint64_t compiles = 0;
  };
  enum class Guard : std::uint8_t { kNone, kDevice, kDeviceIsNone, kShape };
  static constexpr std::uint16_t kCuda = 0;  // types_[0]
  std::uint16_t intern(const std::string& type);
  Device build(std::uint16_t type, int index) const;
  const Function* find(const std::string& fn) const;
  // Which guard of `e` fails first now (kNone: all pass). Builds no text: a call checks up to
  // `recompile_limit` entries and most fail.
  Guard failing_guard(const Entry& e, std::int64_t shape) const;
  // Dynamo's text of that guard ("utils_device.CURRENT_DEVICE == device(type='cuda', index=0)").
  std::string guard_text(Guard g, const Entry& e, std::int64_t shape) const;
  // The type of a device a guard compares: `type` as the constructor installed now builds it
  // (`now`), then canonical if asked.
  std::uint16_t guard_type(std::uint16_t type, bool now) const;

  std::vector<std::string> types_;  // device types seen: "cuda" first, then the vendor's
  std::uint16_t vendor_ = 0;
  bool mocked_ = false;
  bool route_default_device_ = false;
  std::optional<Device> current_;
  DynamoConfig config_;
  DynamoStats stats_;
  boost::container::small_vector<Function, 2> functions_;  // by slot
};

}  // namespace racesim::runtime
