// The calibration's override file: the measured values as the model's settings, as measured or as
// live runs at a time scale see the directory in their virtual time.
#include "src/live/calibrate.h"
#include "src/live/fs_type.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace racesim::live {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

Calibration measured() {
  Calibration c;
  c.fs_type = "tmpfs";
  c.write_one_bytes_per_s = 1e9;
  c.write_all_bytes_per_s = 4e9;
  c.read_warm_bytes_per_s = 3e9;
  c.truncate_bytes_per_s = 6e9;
  c.meta_latency_ns = 2000;
  c.meta_jitter_ns = 500;
  return c;
}

// Options for mount cache of /dev/shm, at time scale `f`.
CalibrateOptions shm(double f = 1.0) {
  CalibrateOptions o;
  o.dir = "/dev/shm";
  o.mount = "cache";
  o.time_scale = f;
  return o;
}

// ext4's: the page cache's copy rates, and the disk's (the fsync part).
void write_back(Calibration& c) {
  c.fs_type = "ext4";
  c.write_back = true;
  c.write_cached_bytes_per_s = 2e9;
  c.write_cached_all_bytes_per_s = 3e9;
  c.flush_one_bytes_per_s = 5e8;
  c.flush_all_bytes_per_s = 7e8;
}

TEST(CalibrateTest, OverridesAreTheMeasuredValues) {
  CalibrateOptions o;
  o.dir = "/dev/shm";
  o.mount = "cache";
  const std::string text = format_overrides(o, measured());
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.kind=local\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.meta_latency=2000ns\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.meta_jitter=500ns\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.client_bandwidth=1000000000B/s\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.bandwidth=4000000000B/s\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.read_bandwidth=3000000000B/s\n"))
      << "reads at the rate a live reader reads a file just written";
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.truncate_bandwidth=6000000000B/s\n"));
  EXPECT_THAT(text, HasSubstr("\n#   file, so none of them includes this): 5722 MiB/s (median of 5; truncate_bandwidth)\n"));
  EXPECT_THAT(text, testing::Not(HasSubstr("time-scale")));
  // Nothing measured (a calibration from before truncation was timed): no line, not a rate of 0.
  Calibration c = measured();
  c.truncate_bytes_per_s = 0;
  EXPECT_THAT(format_overrides(o, c), Not(HasSubstr("truncate")));
}

// Two writers of one file took turns at its inode lock: the odds that a writer kept it are the
// share of its writes that followed its own, said in a comment; the lock is not set (the model's
// holds the making of a chunk's bytes too); no turns measured, nothing is said.
TEST(CalibrateTest, TheWritersTurnsGiveTheWriteLocksOdds) {
  CalibrateOptions o;
  o.dir = "/dev/shm";
  o.mount = "cache";
  Calibration c = measured();
  EXPECT_THAT(format_overrides(o, c), testing::Not(HasSubstr("write_lock")));
  c.write_turns_kept = 60;
  c.write_turns_handed = 40;
  c.write_turns_bytes = 192 << 20;
  c.write_turns_one_file_ns = 310'000'000;
  c.write_turns_two_files_ns = 180'000'000;
  c.write_one_made_ns = 170'000'000;
  c.write_one_copied_ns = 60'000'000;
  const std::string text = format_overrides(o, c);
  EXPECT_THAT(text, HasSubstr("# two writers of one file at once (as live runs write, 192 MiB each in 4 MiB writes, 5 "
                              "rounds): of 100 writes that returned while both wrote, 60 followed the same writer's (it kept the file's "
                              "inode lock) and 40 the other's; both done in 310 ms (two files: 180 ms; one "
                              "writer alone: 170 ms, or 60 ms writing bytes made once; medians)\n"));
  EXPECT_THAT(text, HasSubstr("\n#   as the model's odds of keeping the lock: write_lock_keep 0.600; not set: "));
  EXPECT_THAT(text, testing::Not(HasSubstr("\nplatform.storage.cache.write_lock")));
}

// Live at F = 0.01, a real second of I/O is 100 virtual seconds: the model of the directory the
// live ranks see has 1/100 of the bandwidth and 100 times the metadata latency.
TEST(CalibrateTest, AtATimeScaleTheOverridesAreWhatLiveRunsSeeInVirtualTime) {
  const CalibrateOptions o = shm(0.01);
  const std::string text = format_overrides(o, measured());
  EXPECT_THAT(text, HasSubstr("# as live runs at --time-scale 0.01 see it"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.meta_latency=200000ns\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.meta_jitter=50000ns\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.client_bandwidth=10000000B/s\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.bandwidth=40000000B/s\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.read_bandwidth=30000000B/s\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.truncate_bandwidth=60000000B/s\n"));
}

// On a write-back file system the page cache's settings follow: its copy rate scaled like the
// other bandwidths, the dirty limits in bytes (not scaled), the expiry in virtual time.
TEST(CalibrateTest, AWriteBackFileSystemGetsItsPageCache) {
  CalibrateOptions o;
  o.dir = "/var/tmp";
  o.mount = "cache";
  o.time_scale = 0.01;
  Calibration c = measured();
  write_back(c);
  c.dirty_limit_bytes = 4000000000;
  c.dirty_background_bytes = 2000000000;
  c.dirty_expire_ns = 30'000'000'000;
  const std::string text = format_overrides(o, c);
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.page_cache_bandwidth=30000000B/s\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.page_cache_stream_bandwidth=20000000B/s\n"));
  // The disk's rates are the fsync part's: the copy is charged to the page cache. The node's
  // fsyncs share the disk's rate of the streams at once; one goes at one stream's.
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.client_bandwidth=7000000B/s\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.bandwidth=7000000B/s\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.disk_stream_bandwidth=5000000B/s\n"));
  EXPECT_THAT(text, Not(HasSubstr("truncate_disk_bandwidth"))) << "not measured";
  // A file fsynced first frees its blocks on the disk too, at a rate of its own.
  c.truncate_disk_bytes_per_s = 4e9;
  const std::string synced = format_overrides(o, c);
  EXPECT_THAT(synced, HasSubstr("\nplatform.storage.cache.truncate_disk_bandwidth=40000000B/s\n"));
  EXPECT_THAT(synced, HasSubstr("# truncate of a file fsynced first (its blocks on the disk freed too): 3814 MiB/s (median "
                                "of 5; truncate_disk_bandwidth)\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.dirty_limit=4000000000B\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.dirty_background=2000000000B\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.dirty_expire=3000000000000ns\n"));
  // tmpfs is the page cache itself: no write-back settings.
  const std::string tmpfs = format_overrides(o, measured());
  EXPECT_THAT(tmpfs, testing::Not(HasSubstr("page_cache_bandwidth")));
  EXPECT_THAT(tmpfs, testing::Not(HasSubstr("disk_stream_bandwidth")));
  EXPECT_THAT(tmpfs, HasSubstr("# no page cache model: tmpfs"));
}

// Two sizes' times on one line: its slope is the bytes' rate, its value at no bytes the fixed part.
TEST(CalibrateTest, AFilesFixedCostIsTheLineThroughTwoSizes) {
  constexpr std::uint64_t kMiB = 1 << 20;
  // 5 ms + 1 ms per MiB: 8 MiB in 13 ms, 64 MiB in 69 ms.
  const LinearCost k = fit_two_sizes(8 * kMiB, 13'000'000, 64 * kMiB, 69'000'000);
  EXPECT_NEAR(static_cast<double>(k.fixed_ns), 5e6, 1);
  EXPECT_NEAR(k.bytes_per_s, kMiB * 1000.0, 1);
  // Noise: times that do not rise with the bytes, or a line below 0 at no bytes. No fixed part,
  // and the big file's own rate.
  for (const LinearCost n : {fit_two_sizes(8 * kMiB, 70'000'000, 64 * kMiB, 69'000'000),
                             fit_two_sizes(8 * kMiB, 1'000'000, 64 * kMiB, 69'000'000)}) {
    EXPECT_EQ(n.fixed_ns, 0);
    EXPECT_NEAR(n.bytes_per_s, 64 * kMiB * 1e9 / 69e6, 1);
  }
}

// The fitted costs are the mount's file_overhead, in virtual time at a time scale, and the rates
// their slopes: read_bandwidth, and a write's (client_bandwidth, or with a page cache
// page_cache_stream_bandwidth, the fsync's rates staying the disk's).
TEST(CalibrateTest, TheFittedCostsAreTheFileOverheadAndTheRatesTheirSlopes) {
  const CalibrateOptions o = shm(0.01);
  Calibration c = measured();
  c.read_cost = {5'000'000, 3.5e9};
  c.write_cost = {1'200'000, 1.5e9};
  c.text_read_ns = 1'400'000;
  c.text_write_ns = 3'000;
  const std::string tmpfs = format_overrides(o, c);
  EXPECT_THAT(tmpfs, HasSubstr("\nplatform.storage.cache.file_overhead={read: 500000000ns, write: 120000000ns, text_read: 140000000ns, "
                               "text_write: 300000ns}\n"));
  EXPECT_THAT(tmpfs, HasSubstr("\nplatform.storage.cache.read_bandwidth=35000000B/s\n"));
  EXPECT_THAT(tmpfs, HasSubstr("\nplatform.storage.cache.client_bandwidth=15000000B/s\n"));
  EXPECT_THAT(tmpfs, HasSubstr("(medians of 5 and 20): a read 5000 us + 3337 MiB/s (file_overhead.read, read_bandwidth);"
                                " a write and its fsync 1200 us + 1430 MiB/s (file_overhead.write, client_bandwidth); a 5-byte text's read 1400 us, its "
                               "write(2) 3 us (medians of 20)\n"));
  write_back(c);
  const std::string ext4 = format_overrides(o, c);
  EXPECT_THAT(ext4, HasSubstr("\nplatform.storage.cache.page_cache_stream_bandwidth=15000000B/s\n"));
  // The streams at once (3 GB/s in all, 64 MiB each) net of their fixed costs (1.2 ms each, every
  // stream on a core of its own here): 3.04 GB/s.
  EXPECT_THAT(ext4, HasSubstr("\nplatform.storage.cache.page_cache_bandwidth=30407800B/s\n"));
  EXPECT_THAT(ext4, HasSubstr("\nplatform.storage.cache.disk_stream_bandwidth=5000000B/s\n"));
  EXPECT_THAT(ext4, HasSubstr(" a write before its fsync 1200 us + 1430 MiB/s (file_overhead.write, page_cache_stream_bandwidth)"));
  // Not fitted: no file_overhead line, and the rates measured on one size.
  EXPECT_THAT(format_overrides(o, measured()), Not(HasSubstr("file_overhead")));
}

// The writers at once share the mount's bandwidth net of their fixed costs, which the model
// charges apart: four streams of 64 MiB on two cores that took 107.3 ms in all (2,385 MiB/s), each
// after a fixed cost of 20.4 ms, ran two fixed costs per core, so their bytes went at
// 256 MiB / (107.3 - 40.7) ms = 3,844 MiB/s. Counted whole, the rate capped two writers on the
// two cores at 1,192 MiB/s each, under one stream's 1,576: a quarter too slow.
TEST(CalibrateTest, TheWritersAtOnceAreTakenNetOfTheirFixedCosts) {
  const double mib = 1024.0 * 1024.0;
  EXPECT_NEAR(net_of_fixed_costs(2385 * mib, 64 << 20, 4, 2, 20'369'000) / mib, 3844, 1);
  EXPECT_NEAR(net_of_fixed_costs(2385 * mib, 64 << 20, 4, 0, 20'369'000) / mib, 2944, 1)
      << "cores not known: every stream on a core of its own";
  EXPECT_EQ(net_of_fixed_costs(2385 * mib, 64 << 20, 4, 2, 0), 2385 * mib) << "no fixed cost";
  EXPECT_EQ(net_of_fixed_costs(2385 * mib, 64 << 20, 4, 2, 60'000'000), 2385 * mib)
      << "fixed costs longer than the whole: noise, the rate as measured";
  const CalibrateOptions o = shm(0.01);
  Calibration c = measured();
  c.write_all_bytes_per_s = 2385 * mib;
  c.write_cost = {20'369'000, 1576 * mib};
  c.cpu.cores = 2;
  const std::string text = format_overrides(o, c);
  EXPECT_THAT(text, HasSubstr("\n# writers at once, net of their fixed costs (4 streams on 2 cores, each core's streams' "
                              "20369 us apiece off the time): 3843 MiB/s in all (bandwidth)\n"));
  EXPECT_THAT(text, testing::ContainsRegex("\nplatform.storage.cache.bandwidth=4030[0-9]{4}B/s\n"));
}

// A read beside others: what it took more than alone, put on its bytes (1 s of bytes alone and
// 1 s more beside: half the rate); no slower beside others, or not measured: the rate alone.
TEST(CalibrateTest, AReadBesideOthersPaysWhatItTookMoreOnItsBytes) {
  EXPECT_DOUBLE_EQ(rate_beside(1e9, 1e9, 2.0, 3.0), 5e8);
  EXPECT_DOUBLE_EQ(rate_beside(1e9, 1e9, 2.0, 1.5), 1e9) << "faster beside: noise";
  EXPECT_DOUBLE_EQ(rate_beside(1e9, 1e9, 0, 3.0), 1e9) << "alone not measured";
}

// Reads at once: one read's rate on a core while the others read, times the reads that ran at
// once (the streams, at most the cores), is the rate reads share; not measured, no line. A read
// of 64 MiB at 3e9 B/s alone that took 86 ms alone and 120 ms beside others: 34 ms more on
// 22.4 ms of bytes, 1.19e9 B/s.
TEST(CalibrateTest, ReadsAtOnceGiveTheRateReadsShare) {
  const CalibrateOptions o = shm(0.01);
  Calibration c = measured();
  EXPECT_THAT(format_overrides(o, c), Not(HasSubstr("read_shared_bandwidth")));
  c.read_alone_cpu_ns = 86'000'000;
  c.read_beside_cpu_ns = 120'000'000;
  c.cpu.cores = 2;
  const std::string two = format_overrides(o, c);
  EXPECT_THAT(two, HasSubstr("\nplatform.storage.cache.read_shared_bandwidth=23810294B/s\n"));
  EXPECT_THAT(two, HasSubstr("# reads at once, each in a process of its own as live workers read (new buffers): a read "
                             "of 64 MiB took\n#   120.0 ms of CPU time with 4 at once (median of 80) and 86.0 ms alone "
                             "(median of 20, rounds in turn): what it took more, on its bytes,\n#   is 1135 MiB/s each while it has a "
                             "core (alone 2861 MiB/s), x 2 running at once (read_shared_bandwidth)\n"));
  c.cpu.cores = 8;
  EXPECT_THAT(format_overrides(o, c), HasSubstr("\nplatform.storage.cache.read_shared_bandwidth=47620588B/s\n"))
      << "four streams on eight cores: four at once";
}

// A read amid writers on the other cores: what it took more than alone, on its bytes, is the rate a
// read takes amid writes; not measured (one stream), no line. A read of 64 MiB at 3e9 B/s alone
// (22.4 ms of bytes) that took 86 ms alone and 100 ms amid three writers: 14 ms more, 1.845e9 B/s
// (18.45e6 B/s of virtual time at 0.01).
TEST(CalibrateTest, AReadAmidWritesGivesTheRateOfReadsAmidWrites) {
  const CalibrateOptions o = shm(0.01);
  Calibration c = measured();
  c.read_alone_cpu_ns = 86'000'000;
  EXPECT_THAT(format_overrides(o, c), Not(HasSubstr("read_amid_writes")));
  c.read_amid_writes_cpu_ns = 100'000'000;
  const std::string text = format_overrides(o, c);
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.read_amid_writes_bandwidth=18451900B/s\n"));
  EXPECT_THAT(text, HasSubstr("# a read amid writes (3 writers at once, each in a process of its own): it took 100.0 ms "
                              "of CPU time (median of 20) and 86.0 ms alone:\n#   what it took more, on its bytes, is "
                              "1759 MiB/s (read_amid_writes_bandwidth)\n"));
  // The overrides parse as a mount's: the key needs read_bandwidth, which the calibration sets.
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.read_bandwidth="));
}

// A chunk's times over their kind's median, pooled: uniform[1 - j, 1 + j) has its 10th and 90th
// percentiles 1.6 j apart. Writes of 10 ms +-5% and reads of 4 ms +-5% (evenly spread): j = 0.05
// whatever each kind's own time; too few times, nothing measured; at most 0.9.
TEST(CalibrateTest, ChunkJitterIsTheSpreadOfTheChunksTimesAroundTheirMedian) {
  std::vector<std::int64_t> writes, reads;
  for (int i = 0; i <= 100; ++i) {
    const double f = 0.95 + 0.1 * i / 100.0;
    writes.push_back(static_cast<std::int64_t>(10'000'000 * f));
    reads.push_back(static_cast<std::int64_t>(4'000'000 * f));
  }
  EXPECT_NEAR(fit_chunk_jitter(writes, reads), 0.05, 0.002);
  EXPECT_NEAR(fit_chunk_jitter(writes, {}), 0.05, 0.002) << "one kind alone";
  EXPECT_EQ(fit_chunk_jitter({1, 2, 3}, {4, 5}), 0) << "fewer than 10 times";
  std::vector<std::int64_t> wild;
  for (int i = 0; i < 20; ++i) wild.push_back(i < 15 ? 1 : 100);  // p90 100 times the median
  EXPECT_EQ(fit_chunk_jitter(wild, {}), 0.9);
  const CalibrateOptions o = shm();
  Calibration c = measured();
  EXPECT_THAT(format_overrides(o, c), Not(HasSubstr("chunk_jitter"))) << "not measured";
  c.chunk_jitter = 0.0437;
  c.chunk_samples = 150;
  const std::string text = format_overrides(o, c);
  EXPECT_THAT(text, HasSubstr("# a 4 MiB chunk's time, one stream's writes and reads (150 chunks, not a file's first)"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.chunk_jitter=0.044\n"));
}

// The limits as mm/page-writeback.c applies them: a *_bytes setting wins over its ratio; a ratio
// is of free memory plus file pages.
TEST(CalibrateTest, DirtyLimitsAreReadAsTheKernelAppliesThem) {
  const std::string meminfo =
      "MemTotal:       24000000 kB\nMemFree:         1000000 kB\nMemAvailable:   20000000 kB\n"
      "Active(file):    2000000 kB\nInactive(file):  7000000 kB\n";
  Calibration c;
  std::string error;
  ASSERT_TRUE(dirty_limits({"0\n", "20\n", "0\n", "10\n", "3000\n", meminfo}, c, error)) << error;
  EXPECT_EQ(c.dirty_limit_bytes, 10'000'000ull * 1024 / 100 * 20);  // 20% of 10,000,000 kB
  EXPECT_EQ(c.dirty_background_bytes, 10'000'000ull * 1024 / 100 * 10);
  EXPECT_EQ(c.dirty_expire_ns, 30'000'000'000);
  ASSERT_TRUE(dirty_limits({"1048576\n", "20\n", "0\n", "10\n", "500\n", meminfo}, c, error)) << error;
  EXPECT_EQ(c.dirty_limit_bytes, 1048576u);
  EXPECT_EQ(c.dirty_background_bytes, 524288u);  // the ratio's 1 GB is above the limit: half of it
  EXPECT_FALSE(dirty_limits({"0\n", "x\n", "0\n", "10\n", "3000\n", meminfo}, c, error));
  EXPECT_THAT(error, HasSubstr("/proc/sys/vm/dirty_bytes and _ratio: expected numbers"));
  EXPECT_FALSE(dirty_limits({"0\n", "20\n", "0\n", "10\n", "3000\n", "MemFree: 5 kB\n"}, c, error));
  EXPECT_THAT(error, HasSubstr("/proc/meminfo: expected MemFree"));
}

// The CPUs: the fewest of the affinity mask, the online list and the cgroup quota; the
// scheduler's granularity as the kernel shows it (EEVDF's base slice first, else CFS's three).
TEST(CpuCalibrateTest, CoresAndGranularityComeFromTheKernelsTexts) {
  EXPECT_EQ(cpu_list_count("0-7\n"), 8);
  EXPECT_EQ(cpu_list_count("0-3,8-11\n"), 8);
  EXPECT_EQ(cpu_list_count("0,2,4\n"), 3);
  EXPECT_EQ(cpu_list_count("7-3"), -1);
  EXPECT_EQ(cpu_list_count("zero"), -1);
  EXPECT_EQ(cgroup_cores("max 100000\n"), 0);
  EXPECT_EQ(cgroup_cores("250000 100000\n"), 3);
  EXPECT_EQ(cgroup_cores("100000"), -1);
  CpuCalibration eevdf;
  std::string error;
  ASSERT_TRUE(cpu_settings({"0-191\n", "max 100000\n", "", "", "", "3000000\n", "", "", ""}, 192, eevdf, error)) << error;
  EXPECT_EQ(eevdf.cores, 192);
  EXPECT_EQ(eevdf.scheduler, "eevdf");
  EXPECT_EQ(eevdf.base_slice_ns, 3'000'000);
  EXPECT_EQ(eevdf.tick_ns, 0) << "no configuration given: calibrate_cpu measures it";
  eevdf.tick_ns = 1'000'000;
  eevdf.tick_from = "CONFIG_HZ=1000 (the kernel's configuration)";
  const std::string text = format_cpu_overrides(eevdf, 0.01);
  EXPECT_THAT(text, HasSubstr("# cpus: 192 (affinity 192, online 0-191 (192), cgroup quota none)\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.host.cores=192\nplatform.host.scheduler=eevdf\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.host.sched_base_slice=300000000ns\n")) << "3 ms real is 300 ms at 0.01";
  EXPECT_THAT(text, HasSubstr("\nplatform.host.sched_tick=100000000ns\n"));
  EXPECT_THAT(text, Not(HasSubstr("sched_latency"))) << "CFS's settings are errors under EEVDF";
  // Not readable on a 6.6 or later kernel: EEVDF with Linux's default slice (0.7 ms x 2 on 2
  // CPUs), and the tick from the kernel's configuration.
  CpuCalibration release;
  ASSERT_TRUE(cpu_settings({"0-1\n", "", "", "", "", "", "6.18.44-fc\n", "CONFIG_HZ_250=y\nCONFIG_HZ=250\n", ""}, 2,
                           release, error))
      << error;
  EXPECT_EQ(release.scheduler, "eevdf");
  EXPECT_EQ(release.base_slice_ns, 1'400'000);
  EXPECT_EQ(release.tick_ns, 4'000'000);
  EXPECT_THAT(format_cpu_overrides(release, 1),
              HasSubstr("# scheduler: EEVDF, base slice 1.4 ms (Linux 6.18.44-fc (6.6 and later run EEVDF); "
                        "base_slice_ns not readable: Linux's default for 2 CPUs); tick 4 ms (CONFIG_HZ=250"));
  CpuCalibration old_kernel;
  ASSERT_TRUE(cpu_settings({"0-1\n", "", "", "", "", "", "6.5.13\n", "", ""}, 2, old_kernel, error));
  EXPECT_EQ(old_kernel.scheduler, "") << "CFS before 6.6, its settings not readable: measured";
  // The tick from a spinner's run: the slice rounded up to whole ticks.
  EXPECT_EQ(tick_for_run(1'400'000, 3'980'000), 4'000'000);
  EXPECT_EQ(tick_for_run(1'400'000, 2'010'000), 1'000'000) << "HZ=1000: two ticks";
  EXPECT_EQ(tick_for_run(2'800'000, 10'100'000), 10'000'000);
  EXPECT_THAT(text, HasSubstr("balancing not measured (192 CPUs: more than the measurement spins for): Linux's "
                              "default for 192 CPUs, 1.23e+04 ms\nplatform.host.run_queues=per_core\n"
                              "platform.host.sched_balance_interval=1228800000000ns\n"))
      << "64 ms a CPU, 12.3 s real, is 1229 s at 0.01";
  CpuCalibration cfs;
  ASSERT_TRUE(cpu_settings({"0-7\n", "200000 100000\n", "24000000\n", "3000000\n", "4000000\n", "", "", "", ""}, 8, cfs, error));
  EXPECT_EQ(cfs.cores, 2) << "the cgroup's quota allows two";
  EXPECT_EQ(cfs.scheduler, "cfs");
  EXPECT_EQ(cfs.min_granularity_ns, 3'000'000);
  EXPECT_THAT(format_cpu_overrides(cfs, 1), HasSubstr("\nplatform.host.sched_wakeup_granularity=4000000ns\n"));
  EXPECT_THAT(format_cpu_overrides(cfs, 1), HasSubstr("\nplatform.host.compute=sleep\n"))
      << "a live run sleeps through compute steps: the model beside it must too";
  cfs.balance_interval_ns = 150'000'000;
  cfs.measured_moves = 9;
  EXPECT_THAT(format_cpu_overrides(cfs, 0.01),
              HasSubstr("# run queues: one per core, as Linux keeps them; 3 threads spinning on 2 CPUs moved every 150 ms "
                        "(median of 9 moves): the balancing that turns around which of them has a core to itself\n"
                        "platform.host.run_queues=per_core\nplatform.host.sched_balance_interval=15000000000ns\n"));
  EXPECT_THAT(format_cpu_overrides(cfs, 0.01), HasSubstr("\nplatform.host.sched_load_half_life=3200000000ns\n"))
      << "Linux's 32 ms half-life of a task's load is 3.2 s at 0.01";
  CpuCalibration one;
  ASSERT_TRUE(cpu_settings({"0\n", "", "", "", "", "3000000\n", "", "", ""}, 1, one, error)) << error;
  EXPECT_THAT(format_cpu_overrides(one, 1), Not(HasSubstr("run_queues"))) << "one core: one queue either way";
  CpuCalibration none;
  ASSERT_TRUE(cpu_settings({"0-3\n", "", "", "", "", "", "", "", ""}, 4, none, error));
  EXPECT_EQ(none.cores, 4);
  EXPECT_EQ(none.scheduler, "") << "nothing readable: calibrate_cpu measures";
  EXPECT_FALSE(cpu_settings({"0-x\n", "", "", "", "", "", "", "", ""}, 4, none, error));
  EXPECT_THAT(error, HasSubstr("/sys/devices/system/cpu/online: expected a list of CPUs like 0-7, got '0-x'"));
  EXPECT_FALSE(cpu_settings({"0-3\n", "", "", "", "", "fast\n", "", "", ""}, 4, none, error));
  EXPECT_THAT(error, HasSubstr("base_slice_ns: expected a number of nanoseconds, got 'fast'"));
}

// Where nothing is readable (this machine's debugfs is root's), the slice is measured (before
// Linux 6.6) or the tick (EEVDF); whatever it finds, the settings are whole and positive, and
// the cores are at most the affinity mask's.
// Two spinners on one CPU take turns at each 4 ms tick; on a VM the host also takes the CPU for
// tens of microseconds, thousands of times a second, from both at once. Only a gap in which the
// other spinner ran is a switch: counting every gap, this VM's 4 ms slices measured 2.53 ms, and
// the tick came out as 1 ms where CONFIG_HZ is 250.
TEST(CpuCalibrateTest, ASpinnersRunEndsOnlyWhereTheOtherRan) {
  // Thread a runs [0, 4), [8, 12), [16, 20) ms; b in between. Both are off the CPU at 1.00-1.05
  // and 9.00-9.04 ms (the host's, while b waits), b at 5.00-5.03 ms (while a waits).
  constexpr std::int64_t ms = 1'000'000;
  const std::vector<SpinGap> a = {{1 * ms, 1 * ms + 50'000}, {4 * ms, 8 * ms}, {9 * ms, 9 * ms + 40'000},
                                  {12 * ms, 16 * ms}, {20 * ms, 24 * ms}};
  const std::vector<SpinGap> b = {{0, 4 * ms},  // b began after a's first run
                                  {5 * ms, 5 * ms + 30'000},
                                  {8 * ms, 12 * ms},
                                  {16 * ms, 20 * ms}};
  // a's runs: [8, 12) and [16, 20) whole, the host's gap at 9 ms inside the first; [0, 4) is the
  // first run, left out.
  EXPECT_EQ(runs_between_switches(a, b), (std::vector<std::int64_t>{4 * ms, 4 * ms}));
  // b's: [4, 8) across its own gap at 5 ms (a did not run then), and [12, 16).
  EXPECT_EQ(runs_between_switches(b, a), (std::vector<std::int64_t>{4 * ms, 4 * ms}));
  EXPECT_EQ(tick_for_run(1'400'000, 4 * ms), 4'000'000);
  // Counting every gap as a switch (no other spinner's times), a's runs are cut at the host's gaps.
  EXPECT_EQ(runs_between_switches(a, {}), (std::vector<std::int64_t>{4 * ms - 1 * ms - 50'000, 1 * ms,
                                                                       3 * ms - 40'000, 4 * ms}));
  EXPECT_TRUE(runs_between_switches({}, b).empty());
}

TEST(CpuCalibrateTest, TheMachineIsCalibrated) {
  CpuCalibration c;
  std::string error;
  ASSERT_TRUE(calibrate_cpu(c, error)) << error;
  EXPECT_GE(c.cores, 1);
  if (c.scheduler == "eevdf") {  // Linux 6.6 and later
    EXPECT_GT(c.base_slice_ns, 0);
    EXPECT_GE(c.tick_ns, 1'000'000) << "HZ 1000 at most";
    EXPECT_LE(c.tick_ns, 10'000'000) << "HZ 100 at least";
  } else {
    EXPECT_GT(c.latency_ns, 0);
    EXPECT_GT(c.min_granularity_ns, 0);
    EXPECT_GT(c.wakeup_granularity_ns, 0);
  }
  EXPECT_GT(c.balance_interval_ns, 0);
  EXPECT_FALSE(c.scheduler.empty());
}

// A VM whose balloon offers free page reporting (feature bit 5, as sysfs shows the bits) gets a
// comment saying a page-cache writer can stall and how to raise the reporting order; without
// the bit, or without a balloon, nothing.
TEST(FreePageReportingTest, TheBalloonsReportingBitAndOrderAreRead) {
  const std::string features = "0110010100000000000000000000000010000000\n";
  const FreePageReporting on = free_page_reporting(features, "9\n");
  EXPECT_TRUE(on.on);
  EXPECT_EQ(on.order, 9);
  EXPECT_THAT(format_free_page_reporting(on),
              HasSubstr("# memory: this VM reports free memory to its host (virtio-balloon free page reporting, order 9)"));
  const FreePageReporting off = free_page_reporting("0110000100000000\n", "9\n");
  EXPECT_FALSE(off.on) << "bit 5 clear";
  EXPECT_EQ(format_free_page_reporting(off), "");
  EXPECT_FALSE(free_page_reporting("", "").on) << "no balloon";
  EXPECT_EQ(free_page_reporting(features, "").order, -1);
  EXPECT_EQ(free_page_reporting(features, "nine").order, -1);
  EXPECT_THAT(format_free_page_reporting(free_page_reporting(features, "")), HasSubstr("order unknown"));
  EXPECT_THAT(format_free_page_reporting(on), HasSubstr("raise /sys/module/page_reporting/parameters/page_reporting_order"));
  EXPECT_THAT(format_free_page_reporting(free_page_reporting(features, "10\n")),
              AllOf(HasSubstr("order 10):\n#   at this order a writer filling the page cache did not stall"),
                    Not(HasSubstr("raise"))));
}

TEST(FsTypeTest, KindsAreNamedByTheirMagic) {
  EXPECT_EQ(file_system_kind(0x01021994), "tmpfs");
  EXPECT_EQ(file_system_kind(0xEF53), "ext4");
  EXPECT_EQ(file_system_kind(0x6969), "nfs");
  EXPECT_EQ(file_system_kind(0x0BD00BD0), "lustre");
  EXPECT_EQ(file_system_kind(0x1234), "fs-0x1234");
  EXPECT_EQ(file_system_name("/dev/shm"), "tmpfs");
  EXPECT_EQ(file_system_name("/no/such/directory"), "unknown");
}

}  // namespace
}  // namespace racesim::live
