// Seeds as every command takes them: a seed is a whole number from 0 to 2^64 - 1, written in
// decimal digits, and the seeds of a run, [start, start + count), never run past the last one
// (they would wrap to seed 0 and repeat runs silently).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace racesim::run {

inline constexpr std::uint64_t kMaxSeed = ~std::uint64_t{0};

// "" when `text` is a seed (digits only, at most kMaxSeed); else what was expected.
std::string seed_text_error(std::string_view text);

// "" when the `count` seeds from `start` are all seeds; else what was expected, naming the
// largest start that would fit. REQUIRES: count >= 1.
std::string seed_range_error(std::uint64_t start, std::uint64_t count);

}  // namespace racesim::run
