// The calibration's override file: the measured values as the model's settings, as measured or as
// live runs at a time scale see the directory in their virtual time.
#include "src/live/calibrate.h"
#include "src/live/fs_type.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace racesim::live {
namespace {

using ::testing::HasSubstr;

Calibration measured() {
  Calibration c;
  c.fs_type = "tmpfs";
  c.write_one_bytes_per_s = 1e9;
  c.write_all_bytes_per_s = 4e9;
  c.meta_latency_ns = 2000;
  c.meta_jitter_ns = 500;
  return c;
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
  EXPECT_THAT(text, testing::Not(HasSubstr("time-scale")));
}

// Live at F = 0.01, a real second of I/O is 100 virtual seconds: the model of the directory the
// live ranks see has 1/100 of the bandwidth and 100 times the metadata latency.
TEST(CalibrateTest, AtATimeScaleTheOverridesAreWhatLiveRunsSeeInVirtualTime) {
  CalibrateOptions o;
  o.dir = "/dev/shm";
  o.mount = "cache";
  o.time_scale = 0.01;
  const std::string text = format_overrides(o, measured());
  EXPECT_THAT(text, HasSubstr("# as live runs at --time-scale 0.01 see it"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.meta_latency=200000ns\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.meta_jitter=50000ns\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.client_bandwidth=10000000B/s\n"));
  EXPECT_THAT(text, HasSubstr("\nplatform.storage.cache.bandwidth=40000000B/s\n"));
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
