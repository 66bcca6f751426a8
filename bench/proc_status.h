// A field of /proc/self/status in KiB ("VmRSS:", "VmHWM:"), for the benchmarks' memory figures.
// Header-only and free of racesim dependencies, so the SimGrid anchor uses it too.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace racesim::bench {

// The value of the line starting with `key`, or 0 if the file or the line is missing.
inline std::uint64_t status_kib(const char* key) {
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return 0;
  char line[256];
  std::uint64_t v = 0;
  const std::size_t klen = std::strlen(key);
  while (std::fgets(line, sizeof line, f)) {
    if (std::strncmp(line, key, klen) == 0) {
      v = std::strtoull(line + klen, nullptr, 10);
      break;
    }
  }
  std::fclose(f);
  return v;
}

}  // namespace racesim::bench
