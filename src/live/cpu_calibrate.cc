// Calibration of the machine's CPUs (see cpu_calibrate.h).
#include "src/live/cpu_calibrate.h"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "sim/host/cpu_scheduler.h"
#include "src/live/gzip_text.h"

namespace racesim::live {

namespace {

std::string trimmed(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\n") - b + 1);
}

// A whole number of nanoseconds (a sched_*_ns file), or -1.
std::int64_t ns_in(const std::string& text) {
  const std::string t = trimmed(text);
  if (t.empty() || t.size() > 15 || !std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; })) return -1;
  return std::stoll(t);
}

std::string ms(std::int64_t ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g ms", static_cast<double>(ns) / 1e6);
  return buf;
}

// Two threads spin on the first CPU of the mask for `spin`; each notes when it was not running
// (a gap in the clock of more than 30 us between two of its reads). The runs between the gaps in
// which the other ran (runs_between_switches) are the slices the scheduler gave.
std::vector<std::int64_t> spinner_runs(std::chrono::milliseconds spin) {
  using Clock = std::chrono::steady_clock;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  int cpu = 0;
  if (::sched_getaffinity(0, sizeof mask, &mask) == 0) {
    while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &mask)) ++cpu;
  }
  std::vector<SpinGap> gaps[2];
  std::atomic<int> ready{0};
  const auto origin = Clock::now();
  const auto ns = [&](Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t - origin).count();
  };
  auto spinner = [&](int id) {
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    ::sched_setaffinity(0, sizeof one, &one);  // this thread only
    gaps[id].reserve(1 << 16);
    ++ready;
    while (ready.load() < 2) {
    }
    const auto begin = Clock::now();
    auto last = begin;
    // Bounded by `spin` of wall time, and the gaps kept by their reserve.
    while (last - begin < spin && gaps[id].size() < gaps[id].capacity()) {
      const auto t = Clock::now();
      if (t - last > std::chrono::microseconds(30)) gaps[id].push_back({ns(last), ns(t)});
      last = t;
    }
  };
  std::thread a(spinner, 0), b(spinner, 1);
  a.join();
  b.join();
  std::vector<std::int64_t> all = runs_between_switches(gaps[0], gaps[1]);
  const std::vector<std::int64_t> other = runs_between_switches(gaps[1], gaps[0]);
  all.insert(all.end(), other.begin(), other.end());
  return all;
}

// cores + 1 threads spin on the mask's CPUs for `spin`, each noting when sched_getcpu changes.
// With one more thread than cores one core has two and the others one each, and each move of a
// thread (after the first 50 ms: their placement at start) is the scheduler's balancing turning
// that around. Returns the gaps between consecutive moves of any of them.
std::vector<std::int64_t> migration_gaps(int cores, std::chrono::milliseconds spin) {
  using Clock = std::chrono::steady_clock;
  const int n = cores + 1;
  std::vector<std::vector<std::int64_t>> moves(static_cast<std::size_t>(n));
  std::atomic<int> ready{0};
  const auto settle = std::chrono::milliseconds(50);
  auto spinner = [&](int id) {
    ++ready;
    while (ready.load() < n) {
    }
    const auto begin = Clock::now();
    int cpu = ::sched_getcpu();
    // Bounded by `spin` of wall time.
    for (auto t = begin; t - begin < spin; t = Clock::now()) {
      const int now_on = ::sched_getcpu();
      if (now_on == cpu) continue;
      cpu = now_on;
      if (t - begin > settle) moves[static_cast<std::size_t>(id)].push_back((t - begin).count());
    }
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < n; ++i) threads.emplace_back(spinner, i);
  for (std::thread& t : threads) t.join();
  std::vector<std::int64_t> all;
  for (const auto& m : moves) all.insert(all.end(), m.begin(), m.end());
  std::sort(all.begin(), all.end());
  std::vector<std::int64_t> gaps;
  for (std::size_t i = 1; i < all.size(); ++i) {
    const auto gap = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::duration(all[i] - all[i - 1])).count();
    gaps.push_back(gap);
  }
  return gaps;
}

}  // namespace

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return in ? s.str() : std::string();
}

int cpu_list_count(const std::string& text) {
  const std::string t = trimmed(text);
  if (t.empty()) return -1;
  int count = 0;
  std::istringstream in(t);
  std::string part;
  // Bounded by the text's length.
  while (std::getline(in, part, ',')) {
    int lo = 0, hi = 0;
    char dash = 0, extra = 0;
    if (std::sscanf(part.c_str(), "%d%c%d%c", &lo, &dash, &hi, &extra) == 3 && dash == '-' && 0 <= lo && lo <= hi) {
      count += hi - lo + 1;
    } else if (std::sscanf(part.c_str(), "%d%c", &lo, &extra) == 1 && lo >= 0) {
      count += 1;
    } else {
      return -1;
    }
  }
  return count;
}

int cgroup_cores(const std::string& text) {
  std::istringstream in(trimmed(text));
  std::string quota;
  long long period = 0;
  if (!(in >> quota >> period) || period <= 0) return -1;
  if (quota == "max") return 0;
  const std::int64_t q = ns_in(quota);
  if (q <= 0) return -1;
  return static_cast<int>((q + period - 1) / period);
}

bool cpu_settings(const SchedFiles& files, int affinity_cpus, CpuCalibration& out, std::string& error) {
  int cores = affinity_cpus > 0 ? affinity_cpus : 0;
  out.cores_from = "affinity " + std::to_string(affinity_cpus);
  if (!files.online.empty()) {
    const int online = cpu_list_count(files.online);
    if (online <= 0) {
      error = "/sys/devices/system/cpu/online: expected a list of CPUs like 0-7, got '" + trimmed(files.online) + "'";
      return false;
    }
    cores = cores > 0 ? std::min(cores, online) : online;
    out.cores_from += ", online " + trimmed(files.online) + " (" + std::to_string(online) + ")";
  }
  if (!files.cpu_max.empty()) {
    const int quota = cgroup_cores(files.cpu_max);
    if (quota < 0) {
      error = "/sys/fs/cgroup/cpu.max: expected 'QUOTA PERIOD' or 'max PERIOD', got '" + trimmed(files.cpu_max) + "'";
      return false;
    }
    if (quota > 0) cores = cores > 0 ? std::min(cores, quota) : quota;
    out.cores_from += ", cgroup quota " + (quota > 0 ? std::to_string(quota) : std::string("none"));
  }
  if (cores <= 0) {
    error = "no CPU count: neither the affinity mask nor /sys/devices/system/cpu/online gives one";
    return false;
  }
  out.cores = cores;
  out.balance_interval_ns = host::CpuConfig{.cores = cores}.with_defaults().balance_interval;  // unless measured
  auto read_ns = [&](const std::string& text, const char* name, std::int64_t& v) {
    if (text.empty()) return true;
    v = ns_in(text);
    if (v > 0) return true;
    error = std::string(name) + ": expected a number of nanoseconds, got '" + trimmed(text) + "'";
    return false;
  };
  std::int64_t base = 0;
  if (!read_ns(files.base_slice_ns, "base_slice_ns", base)) return false;
  int major = 0, minor = 0;
  const bool eevdf_release = std::sscanf(files.osrelease.c_str(), "%d.%d", &major, &minor) == 2 &&
                             (major > 6 || (major == 6 && minor >= 6));
  if (base > 0 || eevdf_release) {
    const host::CpuConfig d = host::CpuConfig{.cores = cores, .policy = host::CpuPolicy::kEevdf}.with_defaults();
    out.scheduler = "eevdf";
    out.base_slice_ns = base > 0 ? base : d.base_slice;
    out.eevdf_from = base > 0 ? "base_slice_ns"
                              : "Linux " + trimmed(files.osrelease) + " (6.6 and later run EEVDF); base_slice_ns not "
                                "readable: Linux's default for " + std::to_string(cores) + " CPUs";
    std::istringstream config(files.kernel_config);
    std::string line;
    // Bounded by the text's length.
    while (std::getline(config, line)) {
      int hz = 0;
      char extra = 0;
      if (std::sscanf(line.c_str(), "CONFIG_HZ=%d%c", &hz, &extra) == 1 && hz > 0) {
        out.tick_ns = 1'000'000'000 / hz;
        const std::string from =
            files.kernel_config_from.empty() ? std::string("the kernel's configuration") : files.kernel_config_from;
        out.tick_from = "CONFIG_HZ=" + std::to_string(hz) + " (" + from + ")";
      }
    }
    return true;
  }
  std::int64_t latency = 0, min_gran = 0, wakeup = 0;
  if (!read_ns(files.latency_ns, "sched_latency_ns", latency) ||
      !read_ns(files.min_granularity_ns, "sched_min_granularity_ns", min_gran) ||
      !read_ns(files.wakeup_granularity_ns, "sched_wakeup_granularity_ns", wakeup)) {
    return false;
  }
  if (latency > 0 && min_gran > 0 && wakeup > 0) {
    out.scheduler = "cfs";
    out.latency_ns = latency;
    out.min_granularity_ns = min_gran;
    out.wakeup_granularity_ns = wakeup;
  }
  return true;
}

void measure_balancing(CpuCalibration& out) {
  out.balance_interval_ns = host::CpuConfig{.cores = out.cores}.with_defaults().balance_interval;
  out.measured_moves = 0;
  if (out.cores < 2 || out.cores > kMostCoresToBalance) return;
  std::vector<std::int64_t> gaps = migration_gaps(out.cores, std::chrono::milliseconds(1500));
  if (gaps.size() < 3) return;  // too few moves to say: Linux's default stays
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
  out.balance_interval_ns = gaps[gaps.size() / 2];
  out.measured_moves = static_cast<int>(gaps.size() + 1);
}

std::vector<std::int64_t> runs_between_switches(const std::vector<SpinGap>& a, const std::vector<SpinGap>& b) {
  // Whether `b` ran at some time within (from, to): the gap is not inside one of b's.
  const auto b_ran = [&](const SpinGap& g) {
    auto it = std::upper_bound(b.begin(), b.end(), g.from_ns,
                               [](std::int64_t at, const SpinGap& x) { return at < x.from_ns; });
    if (it == b.begin()) return true;
    --it;  // the last of b's gaps that began at or before this one
    return it->to_ns < g.to_ns;
  };
  std::vector<std::int64_t> runs;
  std::int64_t run_start = -1;  // -1: the first run, from the spin's start, is left out
  for (const SpinGap& g : a) {
    assert(g.from_ns < g.to_ns && "a gap REQUIRES from_ns < to_ns");
    if (!b_ran(g)) continue;  // neither ran: the run goes on
    if (run_start >= 0) runs.push_back(g.from_ns - run_start);
    run_start = g.to_ns;
  }
  return runs;
}

std::int64_t tick_for_run(std::int64_t slice_ns, std::int64_t run_ns) {
  assert(slice_ns > 0 && run_ns > 0 && "tick_for_run REQUIRES a slice and a run");
  std::int64_t best = 0, off = 0;
  for (const std::int64_t hz : {100, 250, 300, 1000}) {
    const std::int64_t tick = 1'000'000'000 / hz;
    const std::int64_t ran = (slice_ns + tick - 1) / tick * tick;
    const std::int64_t miss = std::abs(ran - run_ns);
    if (best == 0 || miss < off) best = tick, off = miss;
  }
  return best;
}

bool calibrate_cpu(CpuCalibration& out, std::string& error) {
  SchedFiles f;
  f.online = read_text("/sys/devices/system/cpu/online");
  f.cpu_max = read_text("/sys/fs/cgroup/cpu.max");
  f.base_slice_ns = read_text("/sys/kernel/debug/sched/base_slice_ns");
  f.osrelease = read_text("/proc/sys/kernel/osrelease");
  if (!trimmed(f.osrelease).empty()) {
    f.kernel_config_from = "/boot/config-" + trimmed(f.osrelease);
    f.kernel_config = read_text(f.kernel_config_from);
  }
  std::string config_error;  // why the compressed configuration was not read, if it was there
  if (f.kernel_config.empty()) {
    f.kernel_config_from = "/proc/config.gz";
    read_gzip_text(f.kernel_config_from, f.kernel_config, config_error);  // no text where it fails
  }
  for (const std::string dir : {"/sys/kernel/debug/sched/", "/proc/sys/kernel/sched_"}) {
    if (f.latency_ns.empty()) f.latency_ns = read_text(dir + "latency_ns");
    if (f.min_granularity_ns.empty()) f.min_granularity_ns = read_text(dir + "min_granularity_ns");
    if (f.wakeup_granularity_ns.empty()) f.wakeup_granularity_ns = read_text(dir + "wakeup_granularity_ns");
  }
  cpu_set_t mask;
  CPU_ZERO(&mask);
  const int affinity = ::sched_getaffinity(0, sizeof mask, &mask) == 0 ? CPU_COUNT(&mask) : 0;
  if (!cpu_settings(f, affinity, out, error)) return false;
  measure_balancing(out);
  if (out.scheduler == "eevdf" && out.tick_ns == 0) {
    // The tick, measured: each spinner runs until the first tick after its slice is used.
    std::vector<std::int64_t> runs = spinner_runs(std::chrono::milliseconds(400));
    out.tick_ns = 4'000'000;  // HZ=250, most distributions' kernels', unless measured
    out.tick_from = "not measurable (the CPU was never shared): HZ=250";
    if (runs.size() >= 10) {
      std::nth_element(runs.begin(), runs.begin() + static_cast<std::ptrdiff_t>(runs.size() / 2), runs.end());
      out.measured_slice_ns = runs[runs.size() / 2];
      out.measured_runs = static_cast<int>(runs.size());
      out.tick_ns = tick_for_run(out.base_slice_ns, out.measured_slice_ns);
      out.tick_from = "measured";
    }
    out.tick_note = config_error;
  }
  if (!out.scheduler.empty()) return true;
  // Not readable: measured. Each thread's runs alternate with the other's on the one CPU.
  std::vector<std::int64_t> runs = spinner_runs(std::chrono::milliseconds(400));
  if (runs.size() < 10) {
    // The CPU was never shared (a scheduler that ran each spinner to the end): Linux's defaults.
    const host::CpuConfig d = host::CpuConfig{.cores = out.cores}.with_defaults();
    out.scheduler = "default";
    out.latency_ns = d.latency;
    out.min_granularity_ns = d.min_granularity;
    out.wakeup_granularity_ns = d.wakeup_granularity;
    return true;
  }
  std::nth_element(runs.begin(), runs.begin() + static_cast<std::ptrdiff_t>(runs.size() / 2), runs.end());
  out.measured_slice_ns = runs[runs.size() / 2];
  out.measured_runs = static_cast<int>(runs.size());
  out.scheduler = "measured";
  // Two tasks on a CPU each run one slice per period: the slice is what the model's period
  // gives two, and what it gives one task at least; a wake-up waits for it as well.
  out.latency_ns = 2 * out.measured_slice_ns;
  out.min_granularity_ns = out.measured_slice_ns;
  out.wakeup_granularity_ns = out.measured_slice_ns;
  return true;
}

std::string format_cpu_overrides(const CpuCalibration& c, double time_scale) {
  std::ostringstream s;
  s << "# cpus: " << c.cores << " (" << c.cores_from << ")\n";
  if (c.scheduler == "eevdf") {
    s << "# scheduler: EEVDF, base slice " << ms(c.base_slice_ns) << " (" << c.eevdf_from << "); tick "
      << ms(c.tick_ns) << " (";
    if (c.tick_from == "measured") {
      s << "two threads spinning on one CPU ran " << ms(c.measured_slice_ns) << " at a time, median of "
        << c.measured_runs << " runs: the slice rounded up to whole ticks";
    } else {
      s << c.tick_from;
    }
    if (!c.tick_note.empty()) s << "; the configuration not read: " << c.tick_note;
    s << ")\n";
  } else if (c.scheduler == "cfs") {
    s << "# scheduler: CFS, sched_latency_ns " << c.latency_ns << ", sched_min_granularity_ns " << c.min_granularity_ns
      << ", sched_wakeup_granularity_ns " << c.wakeup_granularity_ns << "\n";
  } else if (c.scheduler == "measured") {
    s << "# scheduler: settings not readable (debugfs is root's); two threads spinning on one CPU ran "
      << ms(c.measured_slice_ns) << " at a time (median of " << c.measured_runs
      << " runs): the model's slice for two, its minimum and wake-up granularity\n";
  } else {
    s << "# scheduler: settings not readable and not measurable; Linux's defaults for " << c.cores << " CPUs\n";
  }
  const double f = time_scale;
  const auto ns = [f](std::int64_t v) { return std::to_string(static_cast<std::int64_t>(static_cast<double>(v) / f)) + "ns"; };
  s << "platform.host.cores=" << c.cores << "\n";
  if (c.scheduler == "eevdf") {
    s << "platform.host.scheduler=eevdf\n"
      << "platform.host.sched_base_slice=" << ns(c.base_slice_ns) << "\n"
      << "platform.host.sched_tick=" << ns(c.tick_ns) << "\n";
  } else {
    s << "platform.host.sched_latency=" << ns(c.latency_ns) << "\n"
      << "platform.host.sched_min_granularity=" << ns(c.min_granularity_ns) << "\n"
      << "platform.host.sched_wakeup_granularity=" << ns(c.wakeup_granularity_ns) << "\n";
  }
  if (c.cores > 1) {
    if (c.measured_moves > 0) {
      s << "# run queues: one per core, as Linux keeps them; " << c.cores + 1 << " threads spinning on " << c.cores
        << " CPUs moved every " << ms(c.balance_interval_ns) << " (median of " << c.measured_moves
        << " moves): the balancing that turns around which of them has a core to itself\n";
    } else {
      s << "# run queues: one per core, as Linux keeps them; balancing not measured (" << c.cores
        << (c.cores > kMostCoresToBalance ? " CPUs: more than the measurement spins for" : " CPUs: too few moves seen")
        << "): Linux's default for " << c.cores << " CPUs, " << ms(c.balance_interval_ns) << "\n";
    }
    s << "platform.host.run_queues=per_core\n"
      << "platform.host.sched_balance_interval=" << ns(c.balance_interval_ns) << "\n"
      << "# load: the balancing weighs each task by its recent load, which halves every 32 ms (Linux's PELT,\n"
      << "#   LOAD_AVG_PERIOD: a constant of the kernel, not measured)\n"
      << "platform.host.sched_load_half_life=" << ns(kLoadHalfLifeNs) << "\n";
  }
  s
    << "# a live run sleeps through compute steps (scaled): so does the model; its cores run the storage copies\n"
    << "platform.host.compute=sleep\n";
  return s.str();
}

}  // namespace racesim::live
