#include "src/scenario/language/platform.h"

#include <algorithm>
#include <functional>
#include <type_traits>

#include "src/scenario/file/quantity.h"
#include "src/scenario/compile/registry.h"
#include "src/scenario/file/value_reader.h"

namespace racesim::scenario {

namespace {
// The mount settings some kinds only take: on another the model would silently ignore them.
struct KindSetting {
  const char* key;
  const char* kinds;  // the kinds that take it, as the message names them
  bool local, nfs, lustre;
  const char* what;
};
constexpr KindSetting kKindOnly[] = {
    {"acregmin", "nfs", false, true, false, "the nfs client's attribute cache"},
    {"acregmax", "nfs", false, true, false, "the nfs client's attribute cache"},
    {"acdirmin", "nfs", false, true, false, "the nfs client's directory and negative-lookup cache"},
    {"acdirmax", "nfs", false, true, false, "the nfs client's directory and negative-lookup cache"},
    {"flock", "lustre (and nfs as flock: flock)", false, true, true, "the flock mount option"},
    {"write_lock", "local", true, false, false, "one node's inode lock on a file's writes"},
    {"write_lock_keep", "local", true, false, false, "one node's inode lock on a file's writes"},
    {"truncate_bandwidth", "local", true, false, false, "the freeing of a file's pages on one node"},
};
}  // namespace

bool mount_kind_takes(std::string_view kind, std::string_view key) {
  for (const KindSetting& k : kKindOnly) {
    if (key != k.key) continue;
    return kind == "local" ? k.local : kind == "nfs" ? k.nfs : kind == "lustre" ? k.lustre : true;
  }
  return true;
}

std::span<const std::string_view> mount_keys() {
  static constexpr std::string_view kKeys[] = {
      "kind", "mount", "meta_latency", "meta_jitter", "bandwidth", "client_bandwidth", "read_bandwidth", "chunk", "acregmin",
      "acregmax", "acdirmin", "acdirmax", "flock", "metadata", "capacity", "file_overhead", "page_cache_bandwidth",
      "page_cache_stream_bandwidth", "dirty_limit", "dirty_background", "dirty_expire", "write_lock", "write_lock_keep",
      "truncate_bandwidth", "chunk_jitter", "read_shared_bandwidth", "read_amid_writes_bandwidth",
      "disk_stream_bandwidth", "truncate_disk_bandwidth"};
  return kKeys;
}


PlatformReader::PlatformReader(const Scenario& sc, Diagnostics& diags) : sc_(sc), diags_(diags) {}

void PlatformReader::error(const std::string& key, const Value& node, const std::string& message) {
  diags_.error(sc_.where(key, node), key + ": " + message);
}

std::optional<double> PlatformReader::quantity(const std::string& key, const Value& node, Unit unit, double lo,
                                               double hi) {
  if (hi < 0) hi = max_of(unit);
  if (!node.is_scalar()) {
    error(key, node, std::string("expected a ") + to_string(unit) + " like " + example_of(unit) + ", got " +
                         kind_of(node));
    return std::nullopt;
  }
  auto v = parse_quantity(node.scalar(), unit);
  if (!v) {
    error(key, node, v.message());
    return std::nullopt;
  }
  if (*v < lo || *v > hi) {
    error(key, node, "expected " + format_quantity(lo, unit) + " to " + format_quantity(hi, unit) + ", got " +
                         node.scalar());
    return std::nullopt;
  }
  return *v;
}

std::optional<std::string> PlatformReader::choice(const std::string& key, const Value& node,
                                                  std::initializer_list<const char*> options) {
  std::string list;
  for (const char* o : options) {
    if (node.is_scalar() && node.scalar() == o) return node.scalar();
    list += (list.empty() ? "" : ", ") + std::string(o);
  }
  error(key, node, "expected one of " + list + ", got " + (node.is_scalar() ? "'" + node.scalar() + "'" : kind_of(node)));
  return std::nullopt;
}

void PlatformReader::keys(const std::string& key, const Value& node, const std::vector<std::string_view>& allowed) {
  for (const auto& kv : node.entries()) {
    const std::string k = kv.first.scalar();
    if (std::find(allowed.begin(), allowed.end(), k) != allowed.end()) continue;
    std::string list;
    for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    diags_.error(sc_.where(key + "." + k, kv.first), "unknown key '" + k + "' in " + key + " (expected one of: " + list + ")");
  }
}

bool PlatformReader::map(const std::string& key, const Value& node, std::span<const std::string_view> allowed) {
  if (!node.is_map()) {
    error(key, node, std::string("expected a map, got ") + kind_of(node));
    return false;
  }
  const std::size_t before = diags_.count();
  check_keys(node, allowed, key, sc_.file, diags_);
  return diags_.count() == before;
}

void PlatformReader::fields(const std::string& key, const Value& node, const std::vector<Field>& fields) {
  if (!node) return;
  std::vector<std::string_view> names;
  for (const Field& f : fields) names.push_back(f.name);
  if (!node.is_map()) {
    error(key, node, std::string("expected a map, got ") + kind_of(node));
    return;
  }
  keys(key, node, names);
  for (const Field& f : fields) {
    if (!f.set) continue;  // parsed by the caller
    if (const Value v = node[f.name]) {
      if (auto q = quantity(key + "." + f.name, v, f.unit, f.lo, f.hi)) f.set(*q);
    }
  }
}

const MountSpec* Platform::mount_for(const std::string& path) const {
  const MountSpec* best = nullptr;
  for (const MountSpec& m : mounts) {
    const bool under = path.size() > m.mount.size() && path.compare(0, m.mount.size(), m.mount) == 0 &&
                       (path[m.mount.size()] == '/' || m.mount.empty());
    if (under && (!best || m.mount.size() > best->mount.size())) best = &m;
  }
  return best;
}

const MountSpec* Platform::mount_of_written(const std::string& path) const {
  const std::string literal = path.substr(0, std::min(path.find("${"), path.find_first_of("*?[")));
  const MountSpec* m = mount_for(literal);
  if (m == nullptr || literal.size() == path.size()) return m;
  for (const MountSpec& other : mounts) {
    if (other.mount.size() > m->mount.size() && other.mount.compare(0, literal.size(), literal) == 0) return nullptr;
  }
  return m;
}

namespace {


// metadata: lustre (MetadataConfig::lustre()), or a map {threads: N, KIND: {latency: D,
// service: D}, ...} whose omitted fields keep the Lustre figures.
bool parse_metadata(PlatformReader& r, const std::string& key, const Value& node, storage::MetadataConfig& out) {
  out = storage::MetadataConfig::lustre();
  if (node.is_scalar() && node.scalar() == "lustre") return true;
  if (!node.is_map()) {
    r.error(key, node, std::string("expected lustre (the mdtest defaults) or a map {threads, create, stat, mkdir, unlink, "
                                   "rename, readdir}, got ") + kind_of(node));
    return false;
  }
  if (!r.map(key, node, {"threads", "create", "stat", "mkdir", "unlink", "rename", "readdir"})) return false;
  bool ok = true;
  if (const Value t = node["threads"]) {
    if (auto v = r.quantity(key + ".threads", t, Unit::kCount, 1, 4096)) {
      out.threads = static_cast<int>(*v);
    } else {
      ok = false;
    }
  }
  for (std::size_t i = 0; i < storage::kMetaOps; ++i) {
    const auto op = static_cast<storage::MetaOp>(i);
    const std::string name = storage::to_string(op);
    const Value n = node[name];
    if (!n) continue;
    const std::size_t before = r.errors();
    r.fields(key + "." + name, n,
             {{"latency", Unit::kDuration, 0, [&](double v) { out.of(op).latency = static_cast<kernel::Time>(v); }},
              {"service", Unit::kDuration, 0, [&](double v) { out.of(op).service = static_cast<kernel::Time>(v); }}});
    if (r.errors() != before) ok = false;
  }
  return ok;
}

// A local mount's page cache: page_cache_bandwidth, page_cache_stream_bandwidth, dirty_limit,
// dirty_background, dirty_expire, and the disk behind it: disk_stream_bandwidth,
// truncate_disk_bandwidth.
bool parse_page_cache(PlatformReader& r, const std::string& key, const Value& node, storage::MountConfig& c) {
  const Value rate = node["page_cache_bandwidth"];
  const char* const kDirty[] = {"page_cache_stream_bandwidth", "dirty_limit", "dirty_background", "dirty_expire",
                                "disk_stream_bandwidth", "truncate_disk_bandwidth"};
  if (!rate) {
    for (const char* d : kDirty) {
      if (node[d]) {
        r.error(key + "." + d, node[d], "set page_cache_bandwidth too: this setting belongs to a page cache");
        return false;
      }
    }
    return true;
  }
  if (c.kind != storage::MountKind::kLocal) {
    r.error(key + ".page_cache_bandwidth", rate,
            "a page cache is modelled on local mounts only (an nfs client's write-back is its close-to-open "
            "flush; a lustre client's cache is not modelled)");
    return false;
  }
  if (!node["dirty_limit"]) {
    r.error(key + ".page_cache_bandwidth", rate,
            "a page cache needs dirty_limit: the dirty bytes past which writers wait for the disk (vm.dirty_bytes, or "
            "vm.dirty_ratio of the memory that can hold them; racesim live --calibrate reads it)");
    return false;
  }
  const std::size_t before = r.errors();
  if (auto v = r.quantity(key + ".page_cache_bandwidth", rate, Unit::kBandwidth, 1)) c.page_cache_bandwidth = *v;
  if (const Value s = node["page_cache_stream_bandwidth"]) {
    if (auto v = r.quantity(key + ".page_cache_stream_bandwidth", s, Unit::kBandwidth, 1)) {
      c.page_cache_stream_bandwidth = *v;
    }
  }
  if (const Value s = node["disk_stream_bandwidth"]) {
    if (auto v = r.quantity(key + ".disk_stream_bandwidth", s, Unit::kBandwidth, 1)) c.disk_stream_bandwidth = *v;
  }
  if (const Value t = node["truncate_disk_bandwidth"]) {
    if (auto v = r.quantity(key + ".truncate_disk_bandwidth", t, Unit::kBandwidth, 1)) c.truncate_disk_bandwidth = *v;
  }
  if (auto v = r.quantity(key + ".dirty_limit", node["dirty_limit"], Unit::kBytes, 1)) {
    c.dirty_limit = static_cast<std::uint64_t>(*v);
  }
  if (const Value b = node["dirty_background"]) {
    if (auto v = r.quantity(key + ".dirty_background", b, Unit::kBytes, 1)) {
      c.dirty_background = static_cast<std::uint64_t>(*v);
      if (c.dirty_limit > 0 && c.dirty_background > c.dirty_limit) {
        r.error(key + ".dirty_background", b,
                "dirty_background (" + b.scalar() + ") is above dirty_limit (" + node["dirty_limit"].scalar() +
                    "): the flusher must start before writers are throttled");
      }
    }
  }
  if (const Value e = node["dirty_expire"]) {
    if (auto v = r.quantity(key + ".dirty_expire", e, Unit::kDuration, 0)) c.dirty_expire = static_cast<kernel::Time>(*v);
  }
  return r.errors() == before;
}

// A local mount's write lock: write_lock (true or false) and write_lock_keep (0 to 1, with
// write_lock: true only). The mount's kind is checked by the caller (kKindOnly).
bool parse_write_lock(PlatformReader& r, const std::string& key, const Value& node, storage::MountConfig& c) {
  const Value lock = node["write_lock"];
  const Value keep = node["write_lock_keep"];
  if (lock) {
    if (auto v = r.choice(key + ".write_lock", lock, {"true", "false"})) {
      c.write_lock = *v == "true";
    } else {
      return false;
    }
  }
  if (!keep) return true;
  if (!c.write_lock) {
    r.error(key + ".write_lock_keep", keep,
            "set write_lock: true too: write_lock_keep is the odds that a writer keeps a file's write lock between "
            "two chunks");
    return false;
  }
  auto v = r.quantity(key + ".write_lock_keep", keep, Unit::kNumber, 0, 1);
  if (!v) return false;
  c.write_lock_keep = *v;
  return true;
}

std::optional<MountSpec> parse_mount(PlatformReader& r, const std::string& name, const Value& node) {
  const std::string key = "platform.storage." + name;
  if (!node.is_map()) {
    r.error(key, node, std::string("expected a map {kind, mount, ...}, got ") + kind_of(node));
    return std::nullopt;
  }
  // Unknown keys are reported, and the known ones are still checked.
  bool ok = r.map(key, node, mount_keys());
  MountSpec m;
  m.name = name;
  if (!node["kind"] || !node["mount"]) {
    r.error(key, node, "a mount needs 'kind' (local, nfs or lustre) and 'mount' (a path like /cache)");
    return std::nullopt;
  }
  if (auto k = r.choice(key + ".kind", node["kind"], {"local", "nfs", "lustre"})) {
    m.config.kind = *k == "local" ? storage::MountKind::kLocal
                    : *k == "nfs" ? storage::MountKind::kNfs
                                  : storage::MountKind::kLustre;
  } else {
    ok = false;
  }
  // Settings of one kind only: on another they would be silently ignored by the model.
  if (ok) {
    const char* kind_name = m.config.kind == storage::MountKind::kLocal ? "local"
                            : m.config.kind == storage::MountKind::kNfs ? "nfs" : "lustre";
    for (const KindSetting& k : kKindOnly) {
      const Value v = node[k.key];
      if (!v) continue;
      const bool takes = m.config.kind == storage::MountKind::kLocal ? k.local
                         : m.config.kind == storage::MountKind::kNfs ? k.nfs : k.lustre;
      if (!takes) {
        r.error(key + "." + k.key, v, std::string(k.key) + " is " + k.what + ", a setting of " + k.kinds +
                                          " mounts; a " + kind_name + " mount has none");
        ok = false;
      }
    }
    // nfs: flock(2) goes to the server's lock manager, coherent across clients (local_lock=none,
    // nfs(5)'s default); the model has no other nfs lock mode.
    if (m.config.kind == storage::MountKind::kNfs && node["flock"] && node["flock"].scalar() != "flock") {
      r.error(key + ".flock", node["flock"], "an nfs mount's flock is coherent across clients (flock: flock, nfs(5)'s "
                                             "local_lock=none); localflock and noflock are lustre's mount options");
      ok = false;
    }
  }
  const Value mp = node["mount"];
  if (!mp.is_scalar() || mp.scalar().empty() || mp.scalar()[0] != '/') {
    r.error(key + ".mount", mp, "expected an absolute path like /cache");
    ok = false;
  } else {
    m.mount = mp.scalar();
    while (m.mount.size() > 1 && m.mount.back() == '/') m.mount.pop_back();
    if (m.mount == "/") m.mount.clear();
    m.config.root = m.mount;  // the directory that exists from the start
  }
  auto time_of = [&](const char* field, kernel::Time& out) {
    if (!node[field]) return;
    if (auto v = r.quantity(key + "." + field, node[field], Unit::kDuration, 0)) {
      out = static_cast<kernel::Time>(*v);
    } else {
      ok = false;
    }
  };
  auto rate_of = [&](const char* field, double& out) {
    if (!node[field]) return;
    if (auto v = r.quantity(key + "." + field, node[field], Unit::kBandwidth, 1)) {
      out = *v;
    } else {
      ok = false;
    }
  };
  time_of("meta_latency", m.config.meta_latency);
  time_of("meta_jitter", m.config.meta_jitter);
  time_of("acregmin", m.config.acregmin);
  time_of("acdirmin", m.config.acdirmin);
  time_of("acregmax", m.config.acregmax);
  time_of("acdirmax", m.config.acdirmax);
  // nfs(5): the attribute cache lifetime lies between min and max, so min above max is a typo.
  auto ordered = [&](const char* lo, const char* hi, kernel::Time a, kernel::Time b) {
    if (a <= b) return;
    const std::string where = node[hi] ? hi : lo;
    r.error(key + "." + where, node[where], std::string(lo) + " (" + format_quantity(static_cast<double>(a), Unit::kDuration) +
                                                ") is above " + hi + " (" +
                                                format_quantity(static_cast<double>(b), Unit::kDuration) + ")");
    ok = false;
  };
  ordered("acregmin", "acregmax", m.config.acregmin, m.config.acregmax);
  ordered("acdirmin", "acdirmax", m.config.acdirmin, m.config.acdirmax);
  rate_of("bandwidth", m.config.bandwidth);
  rate_of("client_bandwidth", m.config.client_bandwidth);
  rate_of("read_bandwidth", m.config.read_bandwidth);
  // Rates a read takes in place of read_bandwidth's or beside it: only where it has one.
  auto read_rate_of = [&](const char* name, double& into, const char* why) {
    const Value v = node[name];
    if (!v) return;
    if (!node["read_bandwidth"]) {
      r.error(key + "." + name, v, std::string("set read_bandwidth too: ") + why);
      ok = false;
    } else {
      rate_of(name, into);
    }
  };
  read_rate_of("read_shared_bandwidth", m.config.read_shared_bandwidth,
               "reads share this rate when they run at a rate of their own");
  read_rate_of("read_amid_writes_bandwidth", m.config.read_amid_writes_bandwidth,
               "a read beside writes takes this rate in place of its own");
  rate_of("truncate_bandwidth", m.config.truncate_bandwidth);
  if (node["chunk"]) {
    if (auto v = r.quantity(key + ".chunk", node["chunk"], Unit::kBytes, 1)) {
      m.config.chunk = static_cast<std::uint64_t>(*v);
    } else {
      ok = false;
    }
  }
  // file_overhead: one duration for every read and write, or {read, write, text_read, text_write}
  // (a small text's costs; not given: read's and write's).
  if (const Value fo = node["file_overhead"]; fo && fo.is_map()) {
    const std::size_t before = r.errors();
    std::optional<kernel::Time> text_read, text_write;
    auto time = [](double v) { return static_cast<kernel::Time>(v); };
    r.fields(key + ".file_overhead", fo,
             {{"read", Unit::kDuration, 0, [&](double v) { m.config.read_overhead = time(v); }},
              {"write", Unit::kDuration, 0, [&](double v) { m.config.write_overhead = time(v); }},
              {"text_read", Unit::kDuration, 0, [&](double v) { text_read = time(v); }},
              {"text_write", Unit::kDuration, 0, [&](double v) { text_write = time(v); }}});
    if (r.errors() != before) ok = false;
    m.config.text_read_overhead = text_read.value_or(m.config.read_overhead);
    m.config.text_write_overhead = text_write.value_or(m.config.write_overhead);
  } else {
    time_of("file_overhead", m.config.read_overhead);
    m.config.write_overhead = m.config.text_read_overhead = m.config.text_write_overhead = m.config.read_overhead;
  }
  if (const Value j = node["chunk_jitter"]) {
    if (auto v = r.quantity(key + ".chunk_jitter", j, Unit::kNumber, 0, 0.9)) {
      m.config.chunk_jitter = *v;
    } else {
      ok = false;
    }
  }
  if (node["capacity"]) {
    if (auto v = r.quantity(key + ".capacity", node["capacity"], Unit::kBytes, 1)) {
      m.config.capacity = static_cast<std::uint64_t>(*v);
    } else {
      ok = false;
    }
  }
  if (!parse_page_cache(r, key, node, m.config)) ok = false;
  if (!parse_write_lock(r, key, node, m.config)) ok = false;
  if (const Value md = node["metadata"]) {
    if (m.config.kind == storage::MountKind::kLocal) {
      r.error(key + ".metadata", md, "a local mount has no metadata server (it is one node's own file system)");
      ok = false;
    } else if (!parse_metadata(r, key + ".metadata", md, m.config.metadata)) {
      ok = false;
    }
  }
  if (node["flock"]) {
    if (auto f = r.choice(key + ".flock", node["flock"], {"flock", "localflock", "noflock"})) {
      m.config.flock = *f == "flock"        ? storage::FlockMode::kFlock
                       : *f == "localflock" ? storage::FlockMode::kLocalflock
                                            : storage::FlockMode::kNoflock;
    } else {
      ok = false;
    }
  }
  if (!ok) return std::nullopt;
  return m;
}


void parse_device(PlatformReader& r, const Value& node, device::DeviceConfig& d) {
  r.fields("platform.device", node,
               {{"memory", Unit::kBytes, 1, [&](double v) { d.memory = static_cast<std::uint64_t>(v); }},
                {"h2d_bandwidth", Unit::kBandwidth, 1, [&](double v) { d.h2d_bandwidth = v; }},
                {"d2h_bandwidth", Unit::kBandwidth, 1, [&](double v) { d.d2h_bandwidth = v; }},
                {"launch_latency", Unit::kDuration, 0, [&](double v) { d.launch_latency = static_cast<kernel::Time>(v); }}});
}

void parse_link(PlatformReader& r, const std::string& key, const Value& node, collective::Link& l) {
  r.fields(key, node,
               {{"bandwidth", Unit::kBandwidth, 1, [&](double v) { l.bandwidth = v; }},
                {"latency", Unit::kDuration, 0, [&](double v) { l.latency = static_cast<kernel::Time>(v); }}});
}

void parse_collective(PlatformReader& r, const Value& node, collective::Config& c) {
  if (!node) return;
  if (!r.map("platform.collective", node, {"mismatch", "exec_timeout", "intra", "inter"})) return;
  if (const Value m = node["mismatch"]) {
    if (auto v = r.choice("platform.collective.mismatch", m, {"hang", "error"})) c.mismatch_hangs = *v == "hang";
  }
  if (const Value t = node["exec_timeout"]) {
    if (t.is_scalar() && t.scalar() == "none") {
      c.exec_timeout = kernel::kTimeMax;
    } else if (auto v = r.quantity("platform.collective.exec_timeout", t, Unit::kDuration, 1)) {
      c.exec_timeout = static_cast<kernel::Time>(*v);
    }
  }
  parse_link(r, "platform.collective.intra", node["intra"], c.intra);
  parse_link(r, "platform.collective.inter", node["inter"], c.inter);
}

void parse_model(PlatformReader& r, const Value& node, runtime::ModelConfig& m) {
  // Dtypes first (not quantities): bf16, fp16 (2 bytes), fp32 (4).
  for (const char* key : {"checkpoint_dtype", "param_dtype"}) {
    if (!node || !node.is_map() || !node[key]) continue;
    if (auto v = r.choice(std::string("platform.model.") + key, node[key], {"bf16", "fp16", "fp32"})) {
      (key[0] == 'c' ? m.checkpoint_bytes : m.param_bytes) = *v == "fp32" ? 4 : 2;
    }
  }
  auto count = [](auto& target) { return [&target](double v) { target = static_cast<std::remove_reference_t<decltype(target)>>(v); }; };
  r.fields("platform.model", node,
  // Bounds beyond any real model, low enough that a parameter's bytes (experts x hidden x
  // intermediate x 4) and a rank's total fit in 64 bits.
               {{"layers", Unit::kCount, 1, count(m.layers), 100'000},
                {"hidden", Unit::kCount, 1, count(m.hidden), 1 << 20},
                {"intermediate", Unit::kCount, 1, count(m.intermediate), 1 << 22},
                {"experts", Unit::kCount, 1, count(m.experts), 1 << 14},
                {"vocab", Unit::kCount, 1, count(m.vocab), 1 << 24},
                {"heads", Unit::kCount, 1, count(m.heads), 1 << 16},
                {"kv_heads", Unit::kCount, 1, count(m.kv_heads), 1 << 16},
                {"checkpoint_dtype", Unit::kCount, 0, nullptr},
                {"param_dtype", Unit::kCount, 0, nullptr}});
}

}  // namespace

std::optional<Platform> parse_platform(const Scenario& sc, Diagnostics& diags, const Registry& registry) {
  Platform p;
  const Value root = sc.platform;
  if (!root || root.is_null()) return p;
  PlatformReader r(sc, diags);
  const std::size_t before = diags.count();
  std::vector<std::string_view> sections = {"ranks_per_node", "storage", "device", "collective", "mesh", "model"};
  for (const PlatformSection* sec : registry.all_sections()) sections.push_back(sec->name);
  if (!root.is_map()) {
    r.error("platform", root, std::string("expected a map, got ") + kind_of(root));
    return std::nullopt;
  }
  r.keys("platform", root, sections);
  if (const Value n = root["ranks_per_node"]) {
    if (auto v = r.quantity("platform.ranks_per_node", n, Unit::kCount, 1, 1 << 20)) {
      p.ranks_per_node = static_cast<int>(*v);
    }
  }
  p.collective.ranks_per_node = p.ranks_per_node;
  parse_device(r, root["device"], p.device);
  parse_collective(r, root["collective"], p.collective);
  parse_model(r, root["model"], p.model);
  if (const Value m = root["mesh"]; m && r.map("platform.mesh", m, {"ep"})) {
    if (m["ep"]) {
      if (auto v = r.quantity("platform.mesh.ep", m["ep"], Unit::kCount, 1, 1 << 20)) {
        p.mesh.ep = static_cast<int>(*v);
        if (sc.ranks % p.mesh.ep != 0) {
          r.error("platform.mesh.ep", m["ep"], "expected a divisor of ranks (" + std::to_string(sc.ranks) +
                                                   "), got " + m["ep"].scalar());
        }
      }
    }
  }
  if (const Value st = root["storage"]) {
    if (!st.is_map()) {
      r.error("platform.storage", st, std::string("expected a map of mount name: {kind, mount, ...}, got ") + kind_of(st));
    } else {
      for (const auto& kv : st.entries()) {
        const std::string name = kv.first.scalar();
        if (auto m = parse_mount(r, name, kv.second)) {
          for (const MountSpec& other : p.mounts) {
            if (other.mount == m->mount) {
              r.error("platform.storage." + name + ".mount", kv.second["mount"],
                      "mount point '" + m->mount + "' is already mount '" + other.name + "'");
            }
          }
          p.mounts.push_back(std::move(*m));
        }
      }
    }
  }
  // The families' own sections (registry.h), each parsed by its family, present or not.
  for (const PlatformSection* sec : registry.all_sections()) {
    p.sections_[sec->name] = sec->parse(r, "platform." + sec->name, root[sec->name]);
  }
  if (diags.count() != before) return std::nullopt;
  return p;
}

}  // namespace racesim::scenario
