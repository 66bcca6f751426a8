// Whole-or-absent output files (see output_file.h).
#include "src/report/output_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace racesim::report {

bool write_output_file(const std::string& path, const std::string& text, std::string& error) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) {
    error = "cannot write " + tmp + ": " + std::strerror(errno);
    return false;
  }
  int err = 0;
  if (std::fwrite(text.data(), 1, text.size(), f) != text.size()) err = errno;
  if (err == 0 && std::fflush(f) != 0) err = errno;
  if (err == 0 && fsync(fileno(f)) != 0) err = errno;
  if (std::fclose(f) != 0 && err == 0) err = errno;
  if (err != 0) {
    error = "cannot write " + tmp + ": " + std::strerror(err);
    std::remove(tmp.c_str());
    return false;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    error = "cannot rename " + tmp + " to " + path + ": " + std::strerror(errno);
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace racesim::report
