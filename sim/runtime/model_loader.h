// A runtime's model loader as the compiled-model cache race needs it (ONNX Runtime's CANN EP
// loading an .om with aclmdlLoadFromFile, microsoft/onnxruntime#26778): it reads the model file
// and judges what it read by its content identity. A read of a file another rank is still
// writing (a prefix), a file rewritten or truncated while it was read (a mixture), or a file no
// rank wrote as a model is not a model. Without validation the loader takes whatever it read (the
// real one fails to load it, or runs with garbage); with validation (a length and checksum
// trailer the writer appends) it detects a torn read and reads again every `retry` until
// `timeout` has passed since the first read.
//
// Costs are the mount's (each read: an open's metadata round trip and the bytes at the mount's
// bandwidth) plus the retry delays; every read is traced as a "load" slice.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "sim/kernel/simulation.h"
#include "sim/storage/files.h"

namespace racesim::runtime {

// The counters load_model reports (ModelLoadOptions::count), one name each.
inline constexpr const char* kLoadsCounter = "loads";              // every read
inline constexpr const char* kTornReadsCounter = "torn_reads";     // every read that was no model
inline constexpr const char* kLoadRetriesCounter = "load_retries";  // every retry (validate)
inline constexpr const char* kModelLoadCounters[] = {kLoadsCounter, kTornReadsCounter, kLoadRetriesCounter};

struct ModelLoadOptions {
  bool validate = false;
  kernel::Time timeout = 300 * kernel::kSecond;  // since the first read (with validate)
  // The delay before the next read (with validate): called once per retry, so it may draw from a
  // random stream; values below 1 ns are taken as 1 ns, so the retries are bounded by `timeout`.
  std::function<kernel::Time()> retry_delay;
  // Called with each of kModelLoadCounters as it happens (a rank killed mid-load has counted
  // what it did). May be empty.
  std::function<void(const char* counter)> count;
};

struct ModelLoad {
  enum class Outcome : std::uint8_t {
    kLoaded,      // a whole model was read
    kTorn,        // not a model, and no validation: the caller loaded it anyway
    kStillTorn,   // validation still failed at the timeout
    kReadError,   // the read itself failed (ENOENT, EIO, ...): `error` says how
  };
  Outcome outcome = Outcome::kLoaded;
  storage::ReadResult last;  // the last read (not with kReadError)
  kernel::Time read_at = 0;  // when the last read began
  std::string error;         // kReadError: the read's error message
};

// Loads `path` from `mount` as `client` sees it. REQUIRES: called from a simulated process;
// with validate, a retry_delay.
ModelLoad load_model(kernel::Simulation& sim, storage::Files& mount, int client, const std::string& path,
                     const ModelLoadOptions& options);

// What a read that is not a model holds, for a diagnosis: "24 MiB of 180 MiB written by rank 0",
// "read 1.0 MiB while the file was truncated or rewritten", "0 B holding no model (no content
// identity)".
std::string describe_torn_read(const storage::ReadResult& r);

}  // namespace racesim::runtime
