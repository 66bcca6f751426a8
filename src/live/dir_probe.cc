// The probe of a live run's directory (see dir_probe.h).
#include "src/live/dir_probe.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace racesim::live {

namespace {

std::string failed(const std::string& what, const std::string& where) {
  return "cannot " + what + " in " + where + " (" + std::strerror(errno) + ")";
}

}  // namespace

std::string probe_dir(const std::string& dir) {
  const std::string probe = dir + "/racesim-probe-" + std::to_string(static_cast<long>(::getpid()));
  std::error_code ec;
  std::filesystem::remove_all(probe, ec);  // a probe of an earlier process with this pid
  if (::mkdir(probe.c_str(), 0700) != 0) return failed("create a directory", dir);
  const std::string a = probe + "/a", b = probe + "/b";
  std::string why;
  const int fd = ::open(a.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0) {
    why = failed("create a file", dir);
  } else {
    if (::write(fd, "x", 1) != 1) why = failed("write a file", dir);
    if (why.empty() && ::flock(fd, LOCK_EX | LOCK_NB) != 0) why = failed("lock a file (flock)", dir);
    ::close(fd);
    if (why.empty() && ::rename(a.c_str(), b.c_str()) != 0) why = failed("rename a file", dir);
    if (why.empty() && ::unlink(b.c_str()) != 0) why = failed("remove a file", dir);
  }
  if (::rmdir(probe.c_str()) != 0 && why.empty()) why = failed("remove a directory", dir);
  if (!why.empty()) std::filesystem::remove_all(probe, ec);
  return why;
}

}  // namespace racesim::live
