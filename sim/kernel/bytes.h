// Byte counts as people read them in diagnoses: "512 B", "48 MiB", "1.5 GiB".
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

namespace racesim::kernel {

inline std::string format_bytes(std::uint64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, v == std::floor(v) ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

}  // namespace racesim::kernel
