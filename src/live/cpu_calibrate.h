// Calibration of the machine's CPUs for the host CPU model (sim/host/cpu_scheduler.h), as
// `racesim live --calibrate` writes it: the cores a live run's processes can use, and the
// scheduler's granularity. The cores are the fewest of the process's affinity mask
// (sched_getaffinity, what `nproc` says), the online CPUs and the cgroup's quota (cpu.max). The
// granularity is read where the kernel shows it: CFS's sched_latency_ns, min_granularity_ns and
// wakeup_granularity_ns (/proc/sys/kernel before Linux 5.13, /sys/kernel/debug/sched after), or
// EEVDF's base_slice_ns (Linux 6.6 and later: each task's slice, the model's scheduler: eevdf).
// Where none is readable (debugfs is root's) on a kernel before 6.6, it is measured: two
// threads spin on one CPU and the median of their uninterrupted runs is the slice.
// Linux 6.6 and later run EEVDF (its release, /proc/sys/kernel/osrelease, says so where the
// slice is not readable; its slice is then Linux's default for the CPUs), and EEVDF notices a
// used slice at the tick: CONFIG_HZ from the kernel's configuration (/boot/config-RELEASE, as
// distributions install it, else /proc/config.gz, as CONFIG_IKCONFIG_PROC shows it) where
// readable, else measured, the spinners' run being the slice rounded up to whole ticks
// (of 100, 250, 300 or 1000 Hz, the one that gives the run nearest to the measured one).
// The run queues are per core, as Linux keeps them, and their balancing is measured: cores + 1
// threads spin on every CPU, and the median time between two moves of any of them is the
// interval at which the balancing turns around which has a core to itself (up to
// kMostCoresToBalance CPUs; past that, or with too few moves seen, Linux's default). The
// half-life of a task's load, by which the balancing weighs work, is the kernel's constant.
//
// This is live code: it reads files, the wall clock and spins threads. Nothing here runs inside
// a simulation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace racesim::live {

// The texts of the files the settings come from ("" for a file that is absent or not readable).
struct SchedFiles {
  std::string online;   // /sys/devices/system/cpu/online: "0-7", "0-3,8-11"
  std::string cpu_max;  // /sys/fs/cgroup/cpu.max: "max 100000" or "200000 100000" (quota, period)
  std::string latency_ns, min_granularity_ns, wakeup_granularity_ns;  // CFS
  std::string base_slice_ns;                                           // EEVDF
  std::string osrelease;       // /proc/sys/kernel/osrelease: "6.18.44-..."
  std::string kernel_config;   // the kernel's configuration (CONFIG_HZ=250), "" where there is none
  std::string kernel_config_from;  // where it was read: /boot/config-RELEASE, else /proc/config.gz
};

struct CpuCalibration {
  int cores = 0;
  std::string cores_from;  // how it was decided: "affinity 8, online 0-7 (8), cgroup quota 2"
  std::string scheduler;   // "cfs" or "eevdf" (read), or "measured"
  std::int64_t latency_ns = 0, min_granularity_ns = 0, wakeup_granularity_ns = 0;  // CFS
  std::int64_t base_slice_ns = 0, tick_ns = 0;  // EEVDF
  std::string eevdf_from;  // how: "base_slice_ns" or "Linux 6.18.44 (6.6 and later run EEVDF)"
  std::string tick_from;   // how: "CONFIG_HZ=250 (/proc/config.gz)" or "measured" ("" until known)
  std::string tick_note;   // why a configuration that is there was not read ("" when it was, or is absent)
  std::int64_t measured_slice_ns = 0;  // the spinners' median run (0: not measured)
  int measured_runs = 0;
  std::int64_t balance_interval_ns = 0;  // between two moves of one task (Linux's default unless measured)
  int measured_moves = 0;                // the moves it is the median gap of (0: not measured)
};

// The most CPUs the balancing is measured on (it spins one thread more than there are).
inline constexpr int kMostCoresToBalance = 16;
// Linux's load tracking halves a task's load every 32 ms (kernel/sched/pelt.h, LOAD_AVG_PERIOD
// periods of 1024 us): a constant of the kernel, written as it is.
inline constexpr std::int64_t kLoadHalfLifeNs = 32'000'000;

// The whole of a small text file (a /proc or /sys entry), or "" when it cannot be read: the
// calibration reads the kernel's settings through it.
std::string read_text(const std::string& path);

// The number of CPUs in a list like /sys/devices/system/cpu/online's ("0-3,8-11" is 8), or -1
// when it is not such a list.
int cpu_list_count(const std::string& text);
// The cores a cgroup's cpu.max allows (quota / period, rounded up), 0 for "max" (no limit), or
// -1 when it is not "QUOTA PERIOD".
int cgroup_cores(const std::string& text);
// The settings from the files' texts and the affinity mask's count: the cores, and the
// scheduler's granularity when a file shows it (EEVDF's base slice first), and Linux's default
// balancing interval for the cores. False with `error` naming the file whose text is not what it
// holds. Leaves the granularity 0 when no file shows it.
bool cpu_settings(const SchedFiles& files, int affinity_cpus, CpuCalibration& out, std::string& error);
// Measures the balancing of `out.cores` CPUs into out.balance_interval_ns and measured_moves;
// leaves Linux's default for the core count where it does not measure.
void measure_balancing(CpuCalibration& out);
// A time a spinning thread did not run: its clock jumped from `from_ns` to `to_ns` between two of
// its reads (nanoseconds since the spin began).
struct SpinGap {
  std::int64_t from_ns = 0;
  std::int64_t to_ns = 0;
};
// The runs of thread `a` of two spinning on one CPU (wall time from the end of one of its gaps to
// the start of the next), from both threads' gaps in time order: a run ends at a gap of `a`'s in
// which `b` ran, a switch. A gap in which `b` did not run either (not inside one of `b`'s gaps:
// the host took the virtual CPU, or an interrupt ran) does not end a run: on a VM such gaps of
// 20-100 us come hundreds of times a second and would cut a 4 ms slice into pieces. The first
// run (from the spin's start) and the last (to its end) are left out. REQUIRES: each list in time
// order, every gap from_ns < to_ns.
std::vector<std::int64_t> runs_between_switches(const std::vector<SpinGap>& a, const std::vector<SpinGap>& b);
// The tick whose whole ticks, from a slice of `slice_ns`, come nearest to a run of `run_ns` (of
// HZ 100, 250, 300 and 1000). REQUIRES: both > 0.
std::int64_t tick_for_run(std::int64_t slice_ns, std::int64_t run_ns);
// Reads the files and the affinity mask; measures the slice where no setting is readable (the
// tick, under EEVDF), and the balancing.
bool calibrate_cpu(CpuCalibration& out, std::string& error);
// The override lines (platform.host.cores; sched_latency, sched_min_granularity and
// sched_wakeup_granularity, or scheduler=eevdf, sched_base_slice and sched_tick; with more than
// one core run_queues, sched_balance_interval and sched_load_half_life) with
// comments saying where each came from, the durations as live
// runs at `time_scale` see them in virtual time (a real slice of 3 ms is 300 ms at 0.01).
std::string format_cpu_overrides(const CpuCalibration& c, double time_scale);

}  // namespace racesim::live
