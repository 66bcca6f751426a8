// The host family: each node's host memory (sim/device/host_memory.h), pinned and pageable
// buffers a rank allocates by name, and host<->device copies into and out of them: the
// mechanism of async checkpoint saves (a device-to-host copy into pinned staging buffers that a
// background writer drains) and of the host OOMs they cause when staging outgrows the node.
//
//   platform.host: {memory: 512GiB, pin_bandwidth: 10GB/s, pageable_bandwidth: 10GB/s}
//   host_alloc: {name: N, bytes: B, pinned: true}   a buffer on the rank's node (pinning takes time)
//   host_free: N
//   d2h: {bytes: B, into: N}   h2d: {bytes: B, from: N}   a copy over the device's link
#include <cassert>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/device/host_memory.h"
#include "src/scenario/primitives/host.h"
#include "sim/kernel/bytes.h"
#include "src/scenario/compile/compiler.h"
#include "src/scenario/compile/registry.h"
#include "src/scenario/execute/draw.h"
#include "src/scenario/execute/run_state.h"
#include "src/scenario/language/platform.h"

namespace racesim::scenario {

namespace {

using kernel::Time;

// Every node's host memory and every rank's named buffers in one run.
class HostRuntime final : public ModelState {
 public:
  explicit HostRuntime(RunState& run)
      : config_(run.platform().section<device::HostConfig>("host")),
        ranks_per_node_(run.platform().ranks_per_node > 0 ? run.platform().ranks_per_node : run.world()),
        buffers_(static_cast<std::size_t>(run.world())) {}

  struct Buffer {
    std::uint64_t handle = 0;
    std::uint64_t bytes = 0;
    bool pinned = false;
  };
  const device::HostConfig& config() const { return config_; }
  // The host memory of `rank`'s node, made on first use.
  device::HostMemory& node_of(int rank) {
    const int node = rank / ranks_per_node_;
    auto& m = nodes_[node];
    if (!m) m = std::make_unique<device::HostMemory>(node, config_);
    return *m;
  }
  std::map<std::string, Buffer>& buffers(int rank) { return buffers_.at(static_cast<std::size_t>(rank)); }
  void copied(std::uint64_t bytes) { copied_bytes_ += static_cast<double>(bytes); }

  // host.peak_bytes and host.pinned_peak_bytes: the most any node held at once; host.bytes_copied
  // over the links, summed.
  void metrics(std::map<std::string, double>& out) const override {
    double peak = 0, pinned = 0;
    for (const auto& [node, m] : nodes_) {
      peak = std::max(peak, static_cast<double>(m->peak_bytes()));
      pinned = std::max(pinned, static_cast<double>(m->pinned_peak_bytes()));
    }
    out["host.peak_bytes"] = peak;
    out["host.pinned_peak_bytes"] = pinned;
    out["host.bytes_copied"] = copied_bytes_;
  }
  // A rank that dies (a crash) leaves its memory to the process's end: the OS frees it.
  void release(const kernel::Process*, int rank) override {
    auto& mine = buffers(rank);
    for (const auto& [name, b] : mine) node_of(rank).free(b.handle, b.pinned);
    mine.clear();
  }
  void explain(std::vector<std::string>& lines) const override {
    for (const auto& [node, m] : nodes_) {
      lines.push_back("host memory on node " + std::to_string(node) + ": " + kernel::format_bytes(m->used_bytes()) +
                      " in use (" + kernel::format_bytes(m->pinned_bytes()) + " pinned)");
    }
  }

 private:
  device::HostConfig config_;
  int ranks_per_node_;
  std::map<int, std::unique_ptr<device::HostMemory>> nodes_;
  std::vector<std::map<std::string, Buffer>> buffers_;  // by rank: name -> buffer
  double copied_bytes_ = 0;
};

// The rank's buffer `name`, for operation `op` of `step`; a name the rank has not allocated is
// an error naming it.
HostRuntime::Buffer& buffer_of(RankContext& ctx, const Step& step, const char* op, const std::string& name) {
  auto& mine = ctx.run.model<HostRuntime>().buffers(ctx.rank);
  auto it = mine.find(name);
  if (it == mine.end()) raise_step_error(ctx, step, "no_errors", std::string(op) + " " + name + ": no such buffer on this rank");
  return it->second;
}

void declare_host_metrics(Compiler& c) {
  for (const char* m : {"host.peak_bytes", "host.pinned_peak_bytes", "host.bytes_copied"}) c.declare_counter(m);
}

// ---- host_alloc / host_free ----

struct HostAllocStep final : Step {
  Text name;
  Distribution bytes;
  bool pinned = false;
  std::string describe(const RankContext& ctx) const override {
    return name.resolve(ctx) + (pinned ? " (pinned)" : " (pageable)");
  }
  void run(RankContext& ctx) const override {
    HostRuntime& host = ctx.run.model<HostRuntime>();
    const std::string n = name.resolve(ctx);
    auto& mine = host.buffers(ctx.rank);
    if (mine.count(n)) raise_step_error(ctx, *this, "no_errors", "host_alloc " + n + ": already allocated on this rank");
    const auto b = static_cast<std::uint64_t>(draw(bytes, ctx));
    device::HostMemory& mem = host.node_of(ctx.rank);
    auto h = mem.alloc(b, pinned, n);
    if (!h) raise_step_error(ctx, *this, "no_oom", h.message());
    mine[n] = {*h, b, pinned};
    if (pinned) host_work(ctx, mem.pin_time(b), on_cpu);  // page-locking, as cudaHostAlloc does: the host's CPU
  }
  bool on_cpu = false;  // host work on the node's cores (platform.host.cores)
};

std::unique_ptr<Step> compile_host_alloc(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"name", "bytes", "pinned"}, {"name", "bytes"}, "host_alloc")) return nullptr;
  auto n = c.text(args["name"], "host_alloc name");
  auto b = c.quantity(args["bytes"], Unit::kBytes, "host_alloc bytes");
  auto p = c.flag(args["pinned"], "host_alloc pinned", false);
  if (!n || !b || !p) return nullptr;
  auto s = std::make_unique<HostAllocStep>();
  s->name = *n;
  s->bytes = *b;
  s->pinned = *p;
  s->on_cpu = host_work_on_cpu(c);
  return s;
}

struct HostFreeStep final : Step {
  Text name;
  std::string describe(const RankContext& ctx) const override { return name.resolve(ctx); }
  void run(RankContext& ctx) const override {
    HostRuntime& host = ctx.run.model<HostRuntime>();
    const std::string n = name.resolve(ctx);
    const HostRuntime::Buffer b = buffer_of(ctx, *this, "host_free", n);
    host.node_of(ctx.rank).free(b.handle, b.pinned);
    host.buffers(ctx.rank).erase(n);
  }
};

std::unique_ptr<Step> compile_host_free(const Value& args, const Location&, Compiler& c) {
  auto n = c.text(args, "host_free");
  if (!n) return nullptr;
  auto s = std::make_unique<HostFreeStep>();
  s->name = *n;
  return s;
}

// ---- d2h / h2d ----

template <bool kToHost>
struct CopyStep final : Step {
  Text buffer;
  Distribution bytes;
  std::string describe(const RankContext& ctx) const override { return buffer.resolve(ctx); }
  void run(RankContext& ctx) const override {
    HostRuntime& host = ctx.run.model<HostRuntime>();
    const std::string n = buffer.resolve(ctx);
    const char* op = kToHost ? "d2h" : "h2d";
    const HostRuntime::Buffer& buf = buffer_of(ctx, *this, op, n);
    const auto b = static_cast<std::uint64_t>(draw(bytes, ctx));
    if (b > buf.bytes) {
      raise_step_error(ctx, *this, "no_errors", std::string(op) + " " + n + ": " + kernel::format_bytes(b) +
                                                    " do not fit its " + kernel::format_bytes(buf.bytes));
    }
    const device::DeviceConfig& dev = ctx.run.platform().device;
    const Time t = host.node_of(ctx.rank).copy_time(b, buf.pinned, kToHost ? dev.d2h_bandwidth : dev.h2d_bandwidth);
    host.copied(b);
    // From or to pageable memory the driver copies through a bounce buffer: the host's CPU.
    // A pinned buffer is the device's DMA: the host waits.
    host_work(ctx, t, on_cpu && !buf.pinned);
  }
  bool on_cpu = false;  // host work on the node's cores (platform.host.cores)
};

template <bool kToHost>
std::unique_ptr<Step> compile_copy(const Value& args, const Location&, Compiler& c) {
  const char* op = kToHost ? "d2h" : "h2d";
  const char* key = kToHost ? "into" : "from";
  if (!c.keys(args, {"bytes", key}, {"bytes", key}, op)) return nullptr;
  auto n = c.text(args[key], std::string(op) + " " + key);
  auto b = c.quantity(args["bytes"], Unit::kBytes, std::string(op) + " bytes");
  if (!n || !b) return nullptr;
  auto s = std::make_unique<CopyStep<kToHost>>();
  s->buffer = *n;
  s->bytes = *b;
  s->on_cpu = host_work_on_cpu(c);
  return s;
}

std::any parse_host(PlatformReader& r, const std::string& key, const Value& node) {
  device::HostConfig h;
  auto time = [](Time& out) { return [&out](double v) { out = static_cast<Time>(v); }; };
  r.fields(key, node,
           {{"memory", Unit::kBytes, 1, [&](double v) { h.memory = static_cast<std::uint64_t>(v); }},
            {"pin_bandwidth", Unit::kBandwidth, 1, [&](double v) { h.pin_bandwidth = v; }},
            {"pageable_bandwidth", Unit::kBandwidth, 1, [&](double v) { h.pageable_bandwidth = v; }},
            {"cores", Unit::kCount, 0, [&](double v) { h.cpu.cores = static_cast<int>(v); }, 4096},
            {"sched_latency", Unit::kDuration, 1, time(h.cpu.latency), static_cast<double>(kernel::kSecond)},
            {"sched_min_granularity", Unit::kDuration, 1, time(h.cpu.min_granularity), static_cast<double>(kernel::kSecond)},
            {"sched_wakeup_granularity", Unit::kDuration, 1, time(h.cpu.wakeup_granularity),
             static_cast<double>(kernel::kSecond)},
            {"sched_base_slice", Unit::kDuration, 1, time(h.cpu.base_slice), static_cast<double>(kernel::kSecond)},
            {"sched_tick", Unit::kDuration, 1, time(h.cpu.tick), static_cast<double>(kernel::kSecond)},
            {"scheduler", Unit::kCount, 0, nullptr},
            {"sched_balance_interval", Unit::kDuration, 2, time(h.cpu.balance_interval),
             static_cast<double>(kernel::kHour)},
            {"sched_load_half_life", Unit::kDuration, 1, time(h.cpu.load_half_life),
             static_cast<double>(kernel::kHour)},
            {"run_queues", Unit::kCount, 0, nullptr},
            {"compute", Unit::kCount, 0, nullptr}});
  if (const Value c = node["compute"]) {
    if (auto v = r.choice(key + ".compute", c, {"cores", "sleep"})) h.compute_sleeps = *v == "sleep";
  }
  if (const Value p = node["scheduler"]) {
    if (auto v = r.choice(key + ".scheduler", p, {"cfs", "eevdf"})) {
      h.cpu.policy = *v == "eevdf" ? host::CpuPolicy::kEevdf : host::CpuPolicy::kCfs;
    }
  }
  // Each scheduler's settings only with it: a setting the other one has would change nothing.
  for (const char* cfs : {"sched_latency", "sched_min_granularity", "sched_wakeup_granularity"}) {
    if (const Value v = node[cfs]; v && h.cpu.policy == host::CpuPolicy::kEevdf) {
      r.error(key + "." + cfs, v,
              "CFS's setting, and scheduler is eevdf: EEVDF's slice is sched_base_slice, its preemption "
              "the deadlines and sched_tick");
    }
  }
  for (const char* eevdf : {"sched_base_slice", "sched_tick"}) {
    if (const Value v = node[eevdf]; v && h.cpu.policy != host::CpuPolicy::kEevdf) {
      r.error(key + "." + eevdf, v, "EEVDF's setting: set scheduler: eevdf too (the default is cfs)");
    }
  }
  if (const Value q = node["run_queues"]) {
    if (auto v = r.choice(key + ".run_queues", q, {"shared", "per_core"})) h.cpu.per_core = *v == "per_core";
  }
  if (const Value b = node["sched_balance_interval"]; b && !h.cpu.per_core) {
    r.error(key + ".sched_balance_interval", b,
            "set run_queues: per_core too: the balancing interval is how often one core's queue gives work to "
            "another's");
  }
  if (const Value l = node["sched_load_half_life"]; l && !h.cpu.per_core) {
    r.error(key + ".sched_load_half_life", l,
            "set run_queues: per_core too: the load's half-life is what the balancing of per-core queues "
            "weighs their work by");
  }
  return h;
}

// Every node's CPU scheduler in one run, made on first use; its metrics: host.cpu_busy_s (core
// time that ran work, summed over nodes), host.cpu_wait_s (time work waited for a core, summed),
// host.cpu_preemptions, host.cpu_migrations (with a run queue per core: work that changed
// core, at a wake-up or a balancing), host.cpu_runnable_max (the most work runnable at once on a
// node).
class HostCpus final : public ModelState {
 public:
  explicit HostCpus(RunState& run) : run_(run), config_(run.platform().section<device::HostConfig>("host").cpu) {}
  host::CpuScheduler& node(int node) {
    auto& slot = nodes_[node];
    if (!slot) slot = std::make_unique<host::CpuScheduler>(run_.sim(), "node " + std::to_string(node), config_);
    return *slot;
  }
  void metrics(std::map<std::string, double>& out) const override {
    double busy = 0, wait = 0, preemptions = 0, migrations = 0, most = 0;
    for (const auto& [n, cpu] : nodes_) {
      busy += kernel::to_seconds(cpu->stats().busy);
      wait += kernel::to_seconds(cpu->stats().waited);
      preemptions += static_cast<double>(cpu->stats().preemptions);
      migrations += static_cast<double>(cpu->stats().migrations);
      most = std::max(most, static_cast<double>(cpu->stats().most_runnable));
    }
    out["host.cpu_busy_s"] = busy;
    out["host.cpu_wait_s"] = wait;
    out["host.cpu_preemptions"] = preemptions;
    out["host.cpu_migrations"] = migrations;
    out["host.cpu_runnable_max"] = most;
  }

 private:
  RunState& run_;
  host::CpuConfig config_;
  std::map<int, std::unique_ptr<host::CpuScheduler>> nodes_;
};

}  // namespace

bool host_cpus_on(const Platform& platform) {
  const auto* h = platform.find_section<device::HostConfig>("host");
  return h != nullptr && h->cpu.on();
}

host::CpuScheduler& node_cpu(RunState& run, int node) {
  assert(host_cpus_on(run.platform()) && "node_cpu REQUIRES platform.host.cores");
  return run.model<HostCpus>().node(node);
}

host::CpuScheduler& host_cpu(RunState& run, int rank) { return node_cpu(run, run.platform().node_of(rank)); }

bool compute_on_cpu(Compiler& c) {
  if (c.platform() == nullptr) return false;
  const auto* h = c.platform()->find_section<device::HostConfig>("host");
  return h != nullptr && !h->compute_sleeps && host_work_on_cpu(c);
}

bool host_work_on_cpu(Compiler& c) {
  if (c.platform() == nullptr || !host_cpus_on(*c.platform())) return false;
  for (const char* m :
       {"host.cpu_busy_s", "host.cpu_wait_s", "host.cpu_preemptions", "host.cpu_migrations", "host.cpu_runnable_max"}) {
    c.declare_counter(m);
  }
  return true;
}

void host_work(RankContext& ctx, Time t, bool on_cpu) {
  if (on_cpu) {
    host_cpu(ctx.run, ctx.rank).run(t);
  } else {
    ctx.sim.sleep_for(t);
  }
}

void register_host_family(Registry& r) {
  r.add_section({"host", "host: {memory: BYTES, pin_bandwidth: BW, pageable_bandwidth: BW, cores: N, "
                         "scheduler: cfs|eevdf, sched_latency: D, sched_min_granularity: D, "
                         "sched_wakeup_granularity: D, sched_base_slice: D, sched_tick: D, run_queues: shared|per_core, "
                         "sched_balance_interval: D, sched_load_half_life: D, compute: cores|sleep} - each node's host "
                         "memory, and its cores (Linux's fair scheduler for host work, CFS or EEVDF (6.6 and later); "
                         "off unless cores are set; run_queues: per_core gives each core its own queue, balanced by "
                         "load every sched_balance_interval, as Linux; compute: sleep keeps "
                         "compute steps off them, as live runs sleep through them)",
                 parse_host});
  r.add({"host_alloc",
         "host_alloc: {name: N, bytes: BYTES, pinned: true|false} - a buffer in the rank's node's host memory "
         "(pinned: page-locked at platform.host.pin_bandwidth); past the node's memory, no_oom",
         compile_host_alloc, declare_host_metrics});
  r.add({"host_free", "host_free: N - free the rank's buffer N", compile_host_free, declare_host_metrics});
  r.add({"d2h", "d2h: {bytes: BYTES, into: N} - copy from the device into the rank's buffer N (pinned: the link's "
                "rate; pageable: at most platform.host.pageable_bandwidth)",
         compile_copy<true>, declare_host_metrics});
  r.add({"h2d", "h2d: {bytes: BYTES, from: N} - copy the rank's buffer N to the device", compile_copy<false>, declare_host_metrics});
}

}  // namespace racesim::scenario
