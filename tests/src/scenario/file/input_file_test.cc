// The one bounded reader of input files: regular files only, a size bound, errors that say which.
#include "src/scenario/file/input_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;

std::string temp_dir() {
  const auto dir = std::filesystem::temp_directory_path() / ("racesim_input_file_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir.string();
}

std::string write(const std::string& name, const std::string& text) {
  const std::string path = temp_dir() + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(InputFileTest, ReadsARegularFileWhole) {
  const std::string text = std::string("a: 1\n") + '\0' + "b";
  EXPECT_EQ(*read_input_file(write("ok.txt", text), 100, "a test file"), text);
  EXPECT_EQ(*read_input_file(write("empty.txt", ""), 100, "a test file"), "");
  EXPECT_EQ(*read_input_file(write("exact.txt", std::string(100, 'x')), 100, "a test file"), std::string(100, 'x'));
}

// A directory, a device and a pipe used to read as an empty input (and /dev/zero to 2 GB).
TEST(InputFileTest, RefusesWhatIsNotARegularFileSayingWhich) {
  EXPECT_EQ(read_input_file(temp_dir(), 100, "a test file").message(), "a directory, not a test file");
  EXPECT_EQ(read_input_file("/dev/zero", 100, "a test file").message(),
            "not a regular file (a device, a pipe or a socket), not a test file");
  const std::string fifo = temp_dir() + "/fifo";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Opened without waiting for a writer, then refused.
  EXPECT_THAT(read_input_file(fifo, 100, "a test file").message(), HasSubstr("not a regular file"));
  EXPECT_THAT(read_input_file(temp_dir() + "/none", 100, "a test file").message(),
              HasSubstr("cannot open it (No such file or directory)"));
}

TEST(InputFileTest, AFileOverTheBoundIsRefusedOrCutOneBytePastIt) {
  const std::string big = write("big.txt", std::string(3 << 20, 'y'));
  EXPECT_EQ(read_input_file(big, 1 << 20, "a test file").message(), "larger than 1 MiB, not a test file");
  EXPECT_EQ(read_input_file(big, 1000, "a test file").message(), "larger than 1000 bytes, not a test file");
  const auto first = read_input_file(big, 1 << 20, "a test file", Oversize::kFirstBytes);
  ASSERT_TRUE(first.is_ok());
  EXPECT_EQ(first->size(), (1u << 20) + 1);
}

TEST(InputFileTest, AnExcerptIsCutAndEscaped) {
  EXPECT_EQ(excerpt("plain"), "plain");
  EXPECT_EQ(excerpt(std::string("a\0b\n\x7f", 5)), "a\\x00b\\x0a\\x7f");
  EXPECT_EQ(excerpt(std::string(100, 'z'), 10), std::string(10, 'z') + "...");
}

}  // namespace
}  // namespace racesim::scenario
