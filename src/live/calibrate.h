// Calibration of a real directory (`racesim live --calibrate`): measures what a mount model needs
// (write bandwidth of one stream and of several, metadata latency and its spread) and the
// machine's timer granularity, on real files, and writes them as overrides of a scenario's mount
// (`--set-file`), so the simulation can be run with the measured parameters; and the machine's
// CPUs for the host CPU model (cpu_calibrate.h).
//
// This is live code: it reads the wall clock (std::chrono::steady_clock) and makes real system
// calls. Nothing here runs inside a simulation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "src/live/cpu_calibrate.h"
#include "src/live/free_page_reporting.h"

namespace racesim::live {

struct CalibrateOptions {
  std::string dir;                       // an existing, writable directory: its file system is measured
  std::string mount;                     // the scenario's mount the override lines set (platform.storage.MOUNT)
  std::uint64_t stream_bytes = 64 << 20;  // written (then read) by each stream
  int streams = 4;                        // concurrent writers for the aggregate bandwidth
  int repeats = 5;                        // each bandwidth is the median of this many measurements
  int meta_samples = 200;                 // per metadata operation kind
  int timer_samples = 200;                // 1 us sleeps
  // The override file describes the directory as live runs at this --time-scale see it in their
  // virtual time (bandwidths x F, metadata latencies / F: real I/O is not scaled); 1: as measured.
  double time_scale = 1.0;
};

// A cost linear in the bytes: fixed_ns + bytes / bytes_per_s (a file's read or write as live runs
// do them: a fixed part, their buffers and the open, and each byte's copy and check).
struct LinearCost {
  std::int64_t fixed_ns = 0;
  double bytes_per_s = 0;  // 0: not measured
};

// The line through two sizes' times. REQUIRES: 0 < small_bytes < big_bytes, both times > 0.
// Noise can make them not rise with the bytes, or the line cross 0 below no bytes: then no fixed
// part, and big's own rate (a fixed part is never negative, the rate never infinite).
LinearCost fit_two_sizes(std::uint64_t small_bytes, std::int64_t small_ns, std::uint64_t big_bytes,
                         std::int64_t big_ns);

// The bytes' rate of `streams` writers at once, net of their fixed costs: `all_bytes_per_s` is
// their bytes over the slowest one's time, each having written `bytes` after a fixed cost of
// `fixed_ns` (LinearCost). The model charges the fixed cost apart and shares the rate among the
// copies running at once, so the fixed costs each core ran (streams / min(streams, cores); every
// stream on a core of its own when `cores` is 0) come off the time. With no fixed cost, or fixed
// costs that would take all of the time (noise), the rate as measured.
double net_of_fixed_costs(double all_bytes_per_s, std::uint64_t bytes, int streams, int cores,
                          std::int64_t fixed_ns);

// The rate of a copy's bytes on a core while other copies run on the other cores (the model's
// read_shared_bandwidth or bandwidth, over the copies running at once): the CPU time a copy of
// `bytes` took more beside others than alone (`beside_cpu_s`, `alone_cpu_s`) put on its bytes,
// whose rate alone is `alone_bytes_per_s`, so the model's copy of that size beside others costs
// what the measured one did. No slower beside others (noise), or not measured (0): the rate alone.
// The calibration gives it medians of reads; `live --fit-costs` the means of live calls.
// REQUIRES: alone_bytes_per_s > 0, bytes > 0, both times finite.
double rate_beside(double alone_bytes_per_s, double bytes, double alone_cpu_s, double beside_cpu_s);

// The spread of a copy's chunk times as MountConfig::chunk_jitter: each time over its kind's
// (writes', reads') median, pooled, and j such that uniform[1 - j, 1 + j) has the same 10th to
// 90th percentile range ((p90 - p10) / 1.6), at most 0.9; 0 with fewer than 10 times.
double fit_chunk_jitter(std::vector<std::int64_t> write_chunk_ns, std::vector<std::int64_t> read_chunk_ns);

struct Calibration {
  std::string fs_type;                  // from statfs(2): "ext4", "tmpfs", "nfs", "lustre", "0x..."
  double write_one_bytes_per_s = 0;     // one stream: write + fsync (the median of `repeats`)
  // `streams` streams at once, each in a process of its own (new buffers, as live workers'), over
  // the slowest's time (median)
  double write_all_bytes_per_s = 0;
  double read_cold_bytes_per_s = 0;     // one stream after posix_fadvise(DONTNEED)
  double read_warm_bytes_per_s = 0;     // one stream of a file just written (median of `repeats`)
  // A read of one stream's file in a process of its own, as a live worker reads (new buffers):
  // its CPU time alone, and with `streams` such reads at once of the files the writers at once
  // wrote: the medians of 4 x `repeats` rounds of each, in turn. A read beside
  // reads on other cores can cost more CPU: they share the node's memory. 0: not measured.
  std::int64_t read_alone_cpu_ns = 0, read_beside_cpu_ns = 0;
  // The same read, one at a time, while `streams` - 1 writers write new files of a stream's size
  // at once, each in a process of its own (median of 4 x `repeats` rounds, in turn with the
  // above): copies on the other cores contend for the node's memory. 0: not measured (one stream).
  std::int64_t read_amid_writes_cpu_ns = 0;
  // open(O_TRUNC) of a file just written, without fsync: its bytes over the time (median of
  // `repeats`). Every timed write goes into a new file, so none of them includes this.
  double truncate_bytes_per_s = 0;
  // On a write-back file system, the same of a file fsynced first: its blocks on the disk are
  // freed as well as its pages (truncate_disk_bandwidth). 0: not measured.
  double truncate_disk_bytes_per_s = 0;
  // The page cache (a write-back file system: not tmpfs, ramfs or nfs): one stream's writes
  // until the last write(2) returns, before its fsync, and the kernel's dirty-page limits
  // (/proc/sys/vm; a ratio is taken of MemFree + the file pages of /proc/meminfo, the memory
  // that can hold dirty pages).
  bool write_back = false;
  double write_cached_bytes_per_s = 0;      // one stream (the median of `repeats`)
  double write_cached_all_bytes_per_s = 0;  // `streams` at once, over the slowest's time (median)
  // The disk's part, the fsync after those writes: one stream (median), and `streams` at once
  // from the first one's last write to the last one's fsync (median).
  double flush_one_bytes_per_s = 0, flush_all_bytes_per_s = 0;
  std::uint64_t dirty_limit_bytes = 0, dirty_background_bytes = 0;
  std::int64_t dirty_expire_ns = 0;
  // Medians of each metadata operation (open(O_CREAT|O_EXCL)+close, stat, rename, unlink).
  std::int64_t create_ns_p50 = 0, stat_ns_p50 = 0, rename_ns_p50 = 0, unlink_ns_p50 = 0;
  // The model's metadata cost is latency + uniform[0, jitter): fitted to all samples as
  // latency = their 5th percentile, jitter = 2 x (median - 5th percentile).
  std::int64_t meta_latency_ns = 0, meta_jitter_ns = 0;
  std::int64_t timer_resolution_ns = 0;  // clock_getres(CLOCK_MONOTONIC)
  std::int64_t sleep_overshoot_ns_p50 = 0;  // a 1 us nanosleep takes this much longer (median)
  // Two writers of one file at once, as live runs write: their write(2)s hold the file's inode
  // lock in turns, so the order the writes return in is the order of the turns. Of the
  // consecutive returns while both still wrote, over `repeats` rounds: the same writer's again
  // (it kept the lock) and the other's (the lock was handed over). As the model's odds
  // (write_lock_keep): kept / (kept + handed).
  std::uint64_t write_turns_kept = 0, write_turns_handed = 0;
  std::uint64_t write_turns_bytes = 0;  // each writer's bytes per round
  // Until both were done (medians of the rounds): the two writers of one file, and of two files.
  std::int64_t write_turns_one_file_ns = 0, write_turns_two_files_ns = 0;
  // One writer alone, the same bytes (medians of the rounds): its bytes made for each write as
  // live runs make them, and made once (the copy into the file alone).
  std::int64_t write_one_made_ns = 0, write_one_copied_ns = 0;
  // A file's fixed cost and its bytes' rate, fitted to stream_bytes and an eighth of it (that one
  // measured 4 x repeats times; medians): reads as read_warm (read_overhead, read_bandwidth), and
  // writes before the fsync on a write-back file system (write_overhead,
  // page_cache_stream_bandwidth), else the whole write + fsync (write_overhead, client_bandwidth).
  // Not measured (bytes_per_s 0): the rates above, and no fixed cost.
  LinearCost read_cost, write_cost;
  // A small text's (a pointer's 5 bytes), medians of 4 x repeats: its read as a live reader reads
  // it, and the write(2) of its bytes (the open and close are metadata operations).
  // Every one of these reads and writes, and those of one stream above, starts with the process's
  // free memory given back, so its buffers are new memory, as a live worker's are in its first
  // read and write and in every load.
  std::int64_t text_read_ns = 0, text_write_ns = 0;
  // The spread of one stream's 4 MiB chunk times (its writes' write(2)s and its reads' chunks, not
  // a file's first): fit_chunk_jitter of them, and how many there were (0: not measured).
  double chunk_jitter = 0;
  std::size_t chunk_samples = 0;
  CpuCalibration cpu;  // the machine's cores and scheduler granularity (cpu_calibrate.h)
  FreePageReporting memory_reporting;  // whether the VM reports free memory (free_page_reporting.h)
};

// Validates `o` (a missing or unwritable directory, a mount name that is not a name, counts or
// sizes out of range: false with `error` saying which). Measures in a directory of its own under
// o.dir, removed at the end, also on failure; a failed system call is an error naming the call
// and the file.
bool calibrate(const CalibrateOptions& o, Calibration& out, std::string& error);

// The kernel's dirty-page limits from the text of /proc/sys/vm's dirty_bytes, dirty_ratio,
// dirty_background_bytes, dirty_background_ratio, dirty_expire_centisecs and of /proc/meminfo, as
// mm/page-writeback.c applies them (a *_bytes setting wins over its ratio). False with `error`
// when a value is missing or not a number.
struct VmFiles {
  std::string dirty_bytes, dirty_ratio, dirty_background_bytes, dirty_background_ratio, dirty_expire_centisecs,
      meminfo;
};
bool dirty_limits(const VmFiles& vm, Calibration& c, std::string& error);
// The override file: comments saying what was measured, where and how, then KEY=VALUE lines
// for platform.storage.MOUNT (kind local, meta_latency, meta_jitter, bandwidth, client_bandwidth, read_bandwidth,
// read_shared_bandwidth when reads at once were measured,
// truncate_bandwidth (and on a write-back file system truncate_disk_bandwidth), chunk_jitter when chunk times were measured, file_overhead (read, write, text_read,
// text_write) when the fixed costs were fitted;
// on a write-back file system also page_cache_bandwidth, page_cache_stream_bandwidth,
// disk_stream_bandwidth, dirty_limit, dirty_background and dirty_expire, and the bandwidths are the
// fsync part's: client_bandwidth and bandwidth the streams' at once, disk_stream_bandwidth one
// stream's) in units the
// scenario language reads (ns, B/s, B), scaled by o.time_scale; the writers' turns at one file's
// inode lock as a comment (the odds write_lock_keep would take; the lock is not set: the model's
// holds a chunk's making of its bytes too); then, when the CPUs were calibrated, platform.host's
// cores and scheduler granularity (format_cpu_overrides).
std::string format_overrides(const CalibrateOptions& o, const Calibration& c);

}  // namespace racesim::live
