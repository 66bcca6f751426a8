// Step footprints (see footprint.h).
#include "src/scenario/compile/footprint.h"

#include <algorithm>
#include <array>
#include <string>

#include "src/scenario/file/value.h"


namespace racesim::scenario {

namespace {

// FNV-1a: the same key for the same name in every run of the process.
std::uint64_t key_of(std::string_view family, std::string_view name) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&h](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
  };
  mix(family);
  mix(":");
  mix(name);
  return h;
}

Footprint nothing() { return {false, {}}; }
Footprint everything() { return {}; }

// A footprint keyed by a name written as a scalar (`mark: NAME`) or under `field`.
Footprint named(std::string_view family, const Value& args, const char* field, Access access) {
  // (A Value assigned to is the node it refers to: never reassign one that views `args`.)
  const Value n = args.is_map() ? args[field] : args;
  if (!n || !n.is_scalar()) return everything();
  const std::string& name = n.scalar();
  if (name.find("${") != std::string::npos) return everything();
  return {false, {{key_of(family, name), access}}};
}

// Every path a storage step names (a scalar, or path/from/to/dir, or a condition's exists/glob):
// a write of each one's mount.
Footprint on_mounts(const Value& args, const MountOf& mount_of, std::initializer_list<const char*> fields) {
  Footprint f = nothing();
  std::vector<Value> paths;
  if (args.is_scalar()) {
    paths.push_back(args);
  } else if (args.is_map()) {
    for (const char* field : fields) {
      if (const Value n = args[field]) paths.push_back(n);
    }
  }
  if (paths.empty()) return everything();
  for (const Value& n : paths) {
    if (!n.is_scalar()) return everything();
    const std::string mount = mount_of(n.scalar());
    if (mount.empty()) return everything();
    f.add({false, {{key_of("mount", mount), Access::kWrite}}});
  }
  return f;
}

// if and poll_until: by their condition.
Footprint condition(const Value& args, const MountOf& mount_of) {
  if (!args.is_map()) return everything();
  if (args["marked"]) return named("mark", args, "marked", Access::kRead);
  if (args["exists"] || args["glob"]) return on_mounts(args, mount_of, {"exists", "glob"});
  if (args["rank"] || args["chance"]) return nothing();
  return everything();
}

constexpr std::array<std::string_view, 12> kNothingShared = {
    "sleep", "compute", "count", "repeat", "for_each", "for_each_param", "slot", "use", "try", "fail", "join",
    "profiler_step"};
constexpr std::array<std::string_view, 21> kStorage = {
    "append", "close", "copy", "create", "fsync", "load_model", "lock", "mkdir", "move", "pack", "read",
    "rename", "rmtree", "unlink", "unlock", "wait_size_stable", "write", "write_file", "write_text",
    "profiler_save", "profiler_analyse"};

bool among(std::string_view name, const auto& list) {
  return std::find(list.begin(), list.end(), name) != list.end();
}

}  // namespace

bool Footprint::conflicts(const Footprint& other) const {
  if (everything || other.everything) return true;
  for (const Touch& a : touches) {
    for (const Touch& b : other.touches) {
      if (a.key != b.key) continue;
      const bool both_read = a.access == Access::kRead && b.access == Access::kRead;
      const bool both_set = a.access == Access::kSet && b.access == Access::kSet;
      if (!both_read && !both_set) return true;
    }
  }
  return false;
}

void Footprint::add(const Footprint& other) {
  everything = everything || other.everything;
  for (const Touch& t : other.touches) {
    if (std::find(touches.begin(), touches.end(), t) == touches.end()) touches.push_back(t);
  }
}

Footprint footprint_of(std::string_view primitive, const Value& args, const MountOf& mount_of) {
  if (among(primitive, kNothingShared)) return nothing();
  if (among(primitive, kStorage)) return on_mounts(args, mount_of, {"path", "from", "to", "dir"});
  if (primitive == "mark") return named("mark", args, "name", Access::kSet);
  if (primitive == "wait") return named("mark", args, "marked", Access::kRead);
  if (primitive == "barrier") return named("barrier", args, "name", Access::kWrite);
  if (primitive == "semaphore") return named("semaphore", args, "name", Access::kWrite);
  if (primitive == "if" || primitive == "poll_until") return condition(args, mount_of);
  return everything();
}

}  // namespace racesim::scenario
