// The live board's count of copies running at once across the ranks: each copy's company is the
// most copies of its mount that ran at once while it ran (reads among reads, every copy for a
// write), whoever began or ended meanwhile.
#include "src/live/board.h"

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace racesim::live {
namespace {

class BoardCopiesTest : public testing::Test {
 protected:
  void SetUp() override { board_ = Board::create(segment_, 4, "{}"); }
  void TearDown() override { Board::remove(segment_); }
  const std::string segment_ = "racesim_board_test_" + std::to_string(::getpid());
  std::unique_ptr<Board> board_;
};

TEST_F(BoardCopiesTest, ACopyAloneHasOnlyItself) {
  const int t = board_->begin_copy("ckpt", true);
  const Board::CopyCompany c = board_->end_copy(t);
  EXPECT_EQ(c.reads, 1);
  EXPECT_EQ(c.copies, 1);
  const Board::CopyCompany w = board_->end_copy(board_->begin_copy("ckpt", false));
  EXPECT_EQ(w.reads, 0) << "a write counts no reads";
  EXPECT_EQ(w.copies, 1) << "the read before it had ended";
}

TEST_F(BoardCopiesTest, ACopysCompanyIsTheMostThatRanAtOnceWhileItRan) {
  const int write = board_->begin_copy("ckpt", false);
  const int read1 = board_->begin_copy("ckpt", true);
  const int elsewhere = board_->begin_copy("other", true);  // another mount's: no company
  const Board::CopyCompany r1 = board_->end_copy(read1);
  EXPECT_EQ(r1.reads, 1) << "no other read ran beside it";
  EXPECT_EQ(r1.copies, 2) << "the write ran beside it";
  // Two reads at once after read1 ended: the write saw three copies at no moment, two at most.
  const int read2 = board_->begin_copy("ckpt", true);
  const int read3 = board_->begin_copy("ckpt", true);
  const Board::CopyCompany r3 = board_->end_copy(read3);
  EXPECT_EQ(r3.reads, 2);
  EXPECT_EQ(r3.copies, 3);
  const Board::CopyCompany r2 = board_->end_copy(read2);
  EXPECT_EQ(r2.reads, 2) << "read3 began after it and ended before it";
  EXPECT_EQ(r2.copies, 3);
  const Board::CopyCompany w = board_->end_copy(write);
  EXPECT_EQ(w.copies, 3);
  EXPECT_EQ(w.reads, 0);
  const Board::CopyCompany e = board_->end_copy(elsewhere);
  EXPECT_EQ(e.reads, 1);
  EXPECT_EQ(e.copies, 1);
  // All ended: the next is alone again.
  EXPECT_EQ(board_->end_copy(board_->begin_copy("ckpt", true)).copies, 1);
}

TEST_F(BoardCopiesTest, AnotherProcessOfTheRunCountsToo) {
  const int mine = board_->begin_copy("ckpt", true);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // A worker's process: the board opened by name, one copy begun and ended.
    int code = 1;
    try {
      auto b = Board::open(segment_);
      const Board::CopyCompany c = b->end_copy(b->begin_copy("ckpt", true));
      code = c.reads == 2 && c.copies == 2 ? 0 : 2;
    } catch (...) {
      code = 3;
    }
    ::_exit(code);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the other process's read saw this one";
  EXPECT_EQ(board_->end_copy(mine).reads, 2);
}

TEST_F(BoardCopiesTest, MoreCopiesAtOnceThanTheLimitIsAClearError) {
  std::vector<int> tickets;
  for (int i = 0; i < Board::kMaxCopies; ++i) tickets.push_back(board_->begin_copy("ckpt", false));
  try {
    board_->begin_copy("ckpt", false);
    FAIL() << "no error past the limit";
  } catch (const LiveError& e) {
    EXPECT_STREQ(e.what(), "live run: more than 1024 copies of files running at once (a live run's limit)");
  }
  for (int t : tickets) board_->end_copy(t);
  EXPECT_EQ(board_->end_copy(board_->begin_copy("ckpt", false)).copies, 1);
}

}  // namespace
}  // namespace racesim::live
