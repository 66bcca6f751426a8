#include "sim/kernel/random.h"

#include <cassert>
#include <cmath>

namespace racesim::kernel {

namespace {
inline std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::uint64_t fnv1a64(std::string_view text) {
  std::uint64_t h = 0xCBF29CE484222325ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 0x100000001B3ULL;
  }
  return h;
}

RandomStream::RandomStream(std::uint64_t seed) : seed_(seed) {
  std::uint64_t sm = seed;
  for (auto& w : s_) w = splitmix64(sm);
}

RandomStream::RandomStream(std::uint64_t seed, std::string_view name) : RandomStream(seed, fnv1a64(name), kHashed) {}

RandomStream::RandomStream(std::uint64_t seed, std::uint64_t name_hash, Hashed) : seed_(seed) {
  // Mix the seed first so that nearby seeds with the same name diverge immediately.
  std::uint64_t sm = seed;
  const std::uint64_t mixed_seed = splitmix64(sm);
  std::uint64_t state = mixed_seed ^ name_hash;
  for (auto& w : s_) w = splitmix64(state);
}

std::uint64_t RandomStream::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

std::uint64_t RandomStream::uniform_u64(std::uint64_t bound) {
  assert(bound > 0);
  unsigned __int128 m = static_cast<unsigned __int128>(next_u64()) * bound;
  std::uint64_t low = static_cast<std::uint64_t>(m);
  if (low < bound) {
    const std::uint64_t threshold = (0 - bound) % bound;
    // Bounded: each retry succeeds with probability > 1/2.
    while (low < threshold) {
      m = static_cast<unsigned __int128>(next_u64()) * bound;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

double RandomStream::uniform01() {
  return static_cast<double>(next_u64() >> 11) * 0x1.0p-53;
}

double RandomStream::uniform(double lo, double hi) {
  assert(lo <= hi);
  return lo + (hi - lo) * uniform01();
}

double RandomStream::exponential(double mean) {
  assert(mean >= 0);
  // 1 - u is in (0, 1], so the log is finite.
  return -mean * std::log(1.0 - uniform01());
}

double RandomStream::normal(double mean, double sigma) {
  assert(sigma >= 0);
  // Marsaglia polar method. Acceptance probability pi/4 per try, so the expected number of
  // tries is 1.27; a cap keeps the loop bounded (hitting it has probability (1-pi/4)^64 ~ 1e-43).
  for (int tries = 0; tries < 64; ++tries) {
    const double u = 2.0 * uniform01() - 1.0;
    const double v = 2.0 * uniform01() - 1.0;
    const double s = u * u + v * v;
    if (s > 0.0 && s < 1.0) {
      return mean + sigma * u * std::sqrt(-2.0 * std::log(s) / s);
    }
  }
  return mean;
}

double RandomStream::lognormal(double median, double sigma) {
  assert(median > 0 && sigma >= 0);
  return median * std::exp(normal(0.0, sigma));
}

bool RandomStream::bernoulli(double p) {
  if (p <= 0.0) return false;
  if (p >= 1.0) return true;
  return uniform01() < p;
}

std::size_t RandomStream::weighted_choice(std::span<const double> weights) {
  assert(!weights.empty());
  double total = 0;
  for (double w : weights) {
    assert(w >= 0);
    total += w;
  }
  assert(total > 0);
  const double x = uniform01() * total;
  double acc = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    acc += weights[i];
    if (x < acc) return i;
  }
  // Rounding can leave x == total; return the last index with a positive weight.
  for (std::size_t i = weights.size(); i-- > 0;) {
    if (weights[i] > 0) return i;
  }
  return weights.size() - 1;
}

}  // namespace racesim::kernel
