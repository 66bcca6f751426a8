// The one bounded reader of input files (see input_file.h).
#include "src/scenario/file/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace racesim::scenario {

namespace {

std::string size_text(std::size_t bytes) {
  if (bytes >= (std::size_t{1} << 20) && bytes % (std::size_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

// Closes the descriptor on every path out.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

kernel::Result<std::string> read_input_file(const std::string& path, std::size_t max_bytes, std::string_view what,
                                            Oversize oversize) {
  assert(max_bytes > 0 && "read_input_file: a bound above 0");
  using R = kernel::Result<std::string>;
  const std::string not_one = ", not " + std::string(what);
  // Non-blocking, so opening a FIFO with no writer does not wait; the type is checked on the
  // opened file (fstat), so nothing can swap the path between the check and the read.
  Fd f{::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) return R::error("cannot open it (" + std::string(std::strerror(errno)) + ")");
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) return R::error("cannot read it (" + std::string(std::strerror(errno)) + ")");
  if (S_ISDIR(st.st_mode)) return R::error("a directory" + not_one);
  if (!S_ISREG(st.st_mode)) return R::error("not a regular file (a device, a pipe or a socket)" + not_one);
  std::string text;
  // Bounded: at most max_bytes + 1 bytes are read, in reads of at most 1 MiB.
  while (text.size() <= max_bytes) {
    const std::size_t want = std::min<std::size_t>(max_bytes + 1 - text.size(), std::size_t{1} << 20);
    const std::size_t had = text.size();
    text.resize(had + want);
    const ssize_t got = ::read(f.fd, text.data() + had, want);
    if (got < 0) {
      if (errno == EINTR) {
        text.resize(had);
        continue;
      }
      return R::error("cannot read it (" + std::string(std::strerror(errno)) + ")");
    }
    text.resize(had + static_cast<std::size_t>(got));
    if (got == 0) break;
  }
  if (text.size() > max_bytes && oversize == Oversize::kError) return R::error("larger than " + size_text(max_bytes) + not_one);
  return text;
}

std::string excerpt(std::string_view text, std::size_t max_chars) {
  std::string out;
  for (std::size_t i = 0; i < text.size() && i < max_chars; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return text.size() > max_chars ? out + "..." : out;
}

}  // namespace racesim::scenario
