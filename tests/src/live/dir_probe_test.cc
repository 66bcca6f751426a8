// The probe of a live run's directory: each operation a run makes, tried once, nothing left.
#include "src/live/dir_probe.h"

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace racesim::live {
namespace {

using ::testing::HasSubstr;

TEST(DirProbeTest, AWritableDirectoryPassesAndKeepsNothing) {
  const auto dir = std::filesystem::temp_directory_path() / ("racesim_probe_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  EXPECT_EQ(probe_dir(dir.string()), "");
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

TEST(DirProbeTest, NamesTheOperationThatFails) {
  EXPECT_THAT(probe_dir("/proc"), HasSubstr("cannot create a directory in /proc ("));
  const auto file = std::filesystem::temp_directory_path() / ("racesim_probe_file_" + std::to_string(::getpid()));
  std::ofstream(file) << "x";
  EXPECT_THAT(probe_dir(file.string()), HasSubstr("cannot create a directory in " + file.string() + " (Not a directory)"));
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace racesim::live
