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

// Writes `bytes` over the file at `path` from `offset` (another writer's bytes landing on it).
void overwrite(const std::string& path, std::uint64_t offset, const std::vector<char>& bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)), static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

storage::ReadResult read_up_to(const std::string& path, std::uint64_t limit, int* chunks,
                               std::uint64_t* checked = nullptr) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  int error = 0;
  const auto r = read_content(fd, limit, [chunks] { ++*chunks; }, &error, checked);
  ::close(fd);
  EXPECT_TRUE(r.has_value()) << error;
  return r.value_or(storage::ReadResult{});
}

// A file of 10 MiB, written whole by `writer` as version `version`, under the temporary
// directory: its path, and its content in `c`.
std::string whole_file(const std::string& name, int writer, std::uint64_t version, storage::Content& c) {
  const auto path = (std::filesystem::temp_directory_path() / (name + std::to_string(::getpid()))).string();
  c.writer = writer;
  c.version = version;
  c.length = 10u << 20;
  write_prefix(path, c, c.length);
  return path;
}

TEST(RealFilesTest, AReadStopsAtTheLengthItsReaderLearnedAtTheOpen) {
  storage::Content c;
  const std::string path = whole_file("racesim_read_", 3, 7, c);
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

// A torn read is checked to its end, as a whole one is: a file of 10 MiB whose bytes 4-8 MiB
// another version wrote (a later writer's, landed on an earlier one's) is read changed, and all
// 10 MiB were checked, not the 8 MiB up to the first wrong chunk, so the read costs what a whole
// read of 10 MiB does (the model charges every read alike, and the cost fit takes the reads' line
// from what the live reads cost).
TEST(RealFilesTest, ATornReadIsCheckedToItsEnd) {
  storage::Content c;
  const std::string path = whole_file("racesim_torn_", 1, 4, c);
  storage::Content later = c;
  later.writer = 2;
  later.version = 5;
  std::vector<char> middle(4u << 20);
  content_bytes(later, 4u << 20, middle.data(), middle.size());
  overwrite(path, 4u << 20, middle);
  int chunks = 0;
  std::uint64_t checked = 0;
  const auto torn = read_up_to(path, c.length, &chunks, &checked);
  EXPECT_TRUE(torn.changed);
  EXPECT_EQ(torn.bytes, c.length);
  EXPECT_EQ(torn.content.version, 4u);
  EXPECT_EQ(checked, c.length);
  // A whole read of the first writer's file checks as many bytes.
  write_prefix(path, c, c.length);
  std::uint64_t whole_checked = 0;
  const auto whole = read_up_to(path, c.length, &chunks, &whole_checked);
  EXPECT_FALSE(whole.changed);
  EXPECT_TRUE(whole.complete);
  EXPECT_EQ(whole_checked, checked);
  // One wrong byte, the last a read of 10 MiB - 3 bytes reads (past its last whole word), is found.
  std::vector<char> last(1);
  content_bytes(c, c.length - 4, last.data(), 1);
  last[0] = static_cast<char>(last[0] ^ 1);
  overwrite(path, c.length - 4, last);
  const auto one_byte = read_up_to(path, c.length - 3, &chunks);
  EXPECT_TRUE(one_byte.changed);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace racesim::live
