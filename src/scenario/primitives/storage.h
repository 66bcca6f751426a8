// Storage primitives: the steps that use the file-system models of sim/storage/ (create, write,
// close, rename, lock, load_model, ...), the file conditions (exists, glob) that `if` and
// `poll_until` test, and the storage fault kinds; the mounts they act on in a run are
// StorageRuntime (storage_runtime.h).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "sim/storage/files.h"
#include "src/scenario/file/diagnostics.h"
#include "src/scenario/primitives/storage_runtime.h"
#include "src/scenario/compile/step.h"
#include "src/scenario/compile/text.h"

namespace racesim::scenario {

class Compiler;

// An error of the storage model as diagnoses print it: "ENOENT", "EIO (injected fault)",
// "ENOSPC (the mount's capacity is used up)".
std::string fs_error_text(storage::FsError e);

// for_each: {var: V, listing: PATTERN, index: I, do: [steps]}: the steps once per path a
// listing of PATTERN (a glob, as `if: {glob: ...}` takes) gives at one instant, as glob.glob
// does, sorted; V (a text local) holds each path in turn and I (a number local) its position.
// Run, not unrolled: the listing is taken when the step starts. `for_each` (control.cc) hands
// a `listing:` here. nullptr (reported) on error.
std::unique_ptr<Step> compile_listing_loop(const Value& args, Compiler& c);

// File conditions for `if` and `poll_until`: exists: PATH (stat through the rank's caches),
// glob: PATTERN (a listing that matches something) or text: {path: P, equals: TEXT} (the file,
// read through the rank's client, holds that text).
struct FileCondition {
  enum class Kind : std::uint8_t { kExists, kGlob, kText };
  Kind kind = Kind::kExists;
  Text path;
  Text equals;  // kText: the file reads as this text (a missing file reads as no text)
  Location where;
  // Whether it holds now. With `cache`, also how the mount answered an exists or glob lookup
  // (storage::CacheUse: hit or miss on nfs, none elsewhere; none for a text condition).
  bool eval(RankContext& ctx, const char** cache = nullptr) const;
  // "exists /ckpt/latest", "glob /cache/*.om", "text /ckpt/latest == step5".
  std::string describe(const RankContext& ctx) const;
};

}  // namespace racesim::scenario
