// Seeds (see seed_range.h).
#include "src/run/seed_range.h"

#include <cassert>

namespace racesim::run {

std::string seed_text_error(std::string_view text) {
  const std::string expected = "expected a seed, a whole number from 0 to 18446744073709551615";
  if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos) {
    return expected + ", got '" + std::string(text.substr(0, 40)) + (text.size() > 40 ? "...'" : "'");
  }
  std::uint64_t v = 0;
  for (char c : text) {
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (v > (kMaxSeed - d) / 10) return expected + ", got " + std::string(text.substr(0, 40)) + (text.size() > 40 ? "..." : "");
    v = v * 10 + d;
  }
  return "";
}

std::string seed_range_error(std::uint64_t start, std::uint64_t count) {
  assert(count >= 1);
  if (count - 1 <= kMaxSeed - start) return "";
  return std::to_string(count) + " seeds from " + std::to_string(start) +
         " run past the largest seed, 18446744073709551615 (they would wrap to 0): start at most " +
         std::to_string(kMaxSeed - (count - 1));
}

}  // namespace racesim::run
