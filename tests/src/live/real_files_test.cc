// A live read judged by the model's rule: the bytes of a file with a content identity, read up to
// the length the reader learned when it opened the file.
#include "src/live/real_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace racesim::live {
namespace {

// A file at `path` holding the first `written` bytes of the content `c` (a writer part way).
void write_prefix(const std::string& path, const storage::Content& c, std::uint64_t written) {
  std::vector<char> bytes(written);
  content_bytes(c, 0, bytes.data(), bytes.size());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

storage::ReadResult read_up_to(const std::string& path, std::uint64_t limit, int* chunks) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  int error = 0;
  const auto r = read_content(fd, limit, [chunks] { ++*chunks; }, &error);
  ::close(fd);
  EXPECT_TRUE(r.has_value()) << error;
  return r.value_or(storage::ReadResult{});
}

TEST(RealFilesTest, AReadStopsAtTheLengthItsReaderLearnedAtTheOpen) {
  const auto path = (std::filesystem::temp_directory_path() / ("racesim_read_" + std::to_string(::getpid()))).string();
  storage::Content c;
  c.writer = 3;
  c.version = 7;
  c.length = 10u << 20;
  write_prefix(path, c, c.length);
  int chunks = 0;
  // A reader that opened the file when 6 MiB of it were there reads 6 MiB, torn, though the
  // writer has written all 10 MiB since.
  const auto early = read_up_to(path, 6u << 20, &chunks);
  EXPECT_EQ(early.bytes, 6u << 20);
  EXPECT_FALSE(early.complete);
  EXPECT_FALSE(early.changed);
  EXPECT_EQ(early.content.writer, 3);
  EXPECT_EQ(early.content.version, 7u);
  EXPECT_EQ(chunks, 2) << "a read(2) of at most 4 MiB at a time, each followed by the clock's catch-up";
  const auto whole = read_up_to(path, c.length, &chunks);
  EXPECT_EQ(whole.bytes, c.length);
  EXPECT_TRUE(whole.complete);
  // A file shorter now than at the open (truncated meanwhile) ends the read at its end.
  write_prefix(path, c, 1u << 20);
  const auto cut = read_up_to(path, c.length, &chunks);
  EXPECT_EQ(cut.bytes, 1u << 20);
  EXPECT_FALSE(cut.complete);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace racesim::live
