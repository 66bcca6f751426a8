// A gzip-compressed text read whole (src/live/gzip_text.h), as live --calibrate reads
// /proc/config.gz: a kernel's configuration comes back as it was written, across many of the
// reader's buffers; an absent file is nothing to read; a file that is not gzip, a stream cut
// short and a text past the limit are errors naming the file.
#include "src/live/gzip_text.h"

#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/live/cpu_calibrate.h"

namespace racesim::live {
namespace {

using testing::HasSubstr;

std::string scratch(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(testing::TempDir()) / "gzip_text_test";
  std::filesystem::create_directories(dir);
  return (dir / name).string();
}

void write_gzip(const std::string& path, const std::string& text) {
  gzFile f = gzopen(path.c_str(), "wb9");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())), static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

void write_raw(const std::string& path, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(std::fwrite(bytes.data(), 1, bytes.size(), f), bytes.size());
  ASSERT_EQ(std::fclose(f), 0);
}

std::string read_raw(const std::string& path) {
  std::string bytes;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return bytes;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) bytes.append(buf, n);
  std::fclose(f);
  return bytes;
}

TEST(GzipTextTest, AKernelsConfigurationComesBackWhole) {
  // Some 300 KB, as a kernel's is: many of the reader's input and output buffers.
  std::string config = "#\n# Automatically generated file; DO NOT EDIT.\n#\n";
  for (int i = 0; config.size() < 300'000; ++i) config += "CONFIG_OPTION_" + std::to_string(i) + "=y\n";
  config += "CONFIG_HZ_250=y\nCONFIG_HZ=250\n";
  const std::string path = scratch("config.gz");
  write_gzip(path, config);
  std::string text, error;
  ASSERT_TRUE(read_gzip_text(path, text, error)) << error;
  EXPECT_EQ(error, "");
  EXPECT_EQ(text, config);
  // And the calibration takes its tick from it, naming where it was read.
  CpuCalibration cal;
  const SchedFiles files{"0-1\n", "", "", "", "", "", "6.18.44-fc\n", text, "/proc/config.gz"};
  ASSERT_TRUE(cpu_settings(files, 2, cal, error)) << error;
  EXPECT_EQ(cal.tick_ns, 4'000'000);
  EXPECT_EQ(cal.tick_from, "CONFIG_HZ=250 (/proc/config.gz)");
}

TEST(GzipTextTest, AnAbsentFileIsNothingToRead) {
  std::string text = "stale", error = "stale";
  EXPECT_FALSE(read_gzip_text(scratch("absent.gz"), text, error));
  EXPECT_EQ(text, "");
  EXPECT_EQ(error, "");
}

TEST(GzipTextTest, WhatIsNotAWholeGzipStreamIsAnErrorNamingTheFile) {
  std::string text, error;
  const std::string plain = scratch("plain.gz");
  write_raw(plain, "CONFIG_HZ=250\n");
  EXPECT_FALSE(read_gzip_text(plain, text, error));
  EXPECT_THAT(error, HasSubstr(plain + ": not a gzip stream (zlib: "));
  std::string config;
  for (int i = 0; i < 20'000; ++i) config += "CONFIG_X" + std::to_string(i * 7919 % 100'003) + "=m\n";
  const std::string whole = scratch("whole.gz");
  write_gzip(whole, config);
  const std::string bytes = read_raw(whole);
  ASSERT_GT(bytes.size(), 1000u);
  const std::string cut = scratch("cut.gz");
  write_raw(cut, bytes.substr(0, bytes.size() / 2));
  EXPECT_FALSE(read_gzip_text(cut, text, error));
  EXPECT_THAT(error, HasSubstr(cut + ": the gzip stream ends early, after "));
  EXPECT_EQ(text.size() < config.size(), true);
  EXPECT_EQ(text, "") << "what was decompressed before the cut is not kept";
}

TEST(GzipTextTest, ATextPastTheLimitIsRefused) {
  const std::string path = scratch("large.gz");
  write_gzip(path, std::string(kMostGzipTextBytes + 1, 'x'));  // some 16 KB compressed
  std::string text, error;
  EXPECT_FALSE(read_gzip_text(path, text, error));
  EXPECT_EQ(error, path + ": more than 16777216 bytes once decompressed");
  EXPECT_EQ(text, "");
  write_gzip(path, std::string(kMostGzipTextBytes, 'x'));
  EXPECT_TRUE(read_gzip_text(path, text, error)) << error;
  EXPECT_EQ(text.size(), kMostGzipTextBytes);
}

}  // namespace
}  // namespace racesim::live
