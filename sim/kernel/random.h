// Seeded random streams, portable across standard libraries.
//
// Generator: xoshiro256** 1.0 (Blackman & Vigna, 2018), state seeded by splitmix64. A stream is
// derived from (seed, stream name): the name is hashed with 64-bit FNV-1a and mixed with the seed,
// so adding a component with a new stream name never shifts another component's draws.
//
// Distributions are implemented here, never with std::*_distribution, whose output differs
// between standard libraries. They use only IEEE-exact operations plus std::log/std::exp/
// std::sqrt, so results are identical on every glibc-based platform we build on; the tests pin
// exact values so an accidental change of algorithm is caught.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace racesim::kernel {

// splitmix64 step: advances `state` and returns the next output.
std::uint64_t splitmix64(std::uint64_t& state);

// 64-bit FNV-1a of `text`.
std::uint64_t fnv1a64(std::string_view text);

class RandomStream {
 public:
  // A stream seeded directly from one 64-bit value (through splitmix64).
  explicit RandomStream(std::uint64_t seed);
  // The stream named `name` of the run seeded `seed`.
  RandomStream(std::uint64_t seed, std::string_view name);
  // The same with the name given by its hash (fnv1a64(name)): RandomStream(seed, name) equals
  // RandomStream(seed, fnv1a64(name), kHashed) for every seed and name.
  enum Hashed { kHashed };
  RandomStream(std::uint64_t seed, std::uint64_t name_hash, Hashed);

  // A stream with the given raw xoshiro256** state (tests against the reference vectors).
  static RandomStream from_state(std::uint64_t s0, std::uint64_t s1, std::uint64_t s2,
                                 std::uint64_t s3) {
    RandomStream r(0);
    r.s_[0] = s0;
    r.s_[1] = s1;
    r.s_[2] = s2;
    r.s_[3] = s3;
    return r;
  }

  std::uint64_t next_u64();
  // Uniform integer in [0, bound). REQUIRES: bound > 0. Unbiased (Lemire's method).
  std::uint64_t uniform_u64(std::uint64_t bound);
  // Uniform double in [0, 1) with 53 random bits.
  double uniform01();
  // Uniform double in [lo, hi). REQUIRES: lo <= hi.
  double uniform(double lo, double hi);
  // Exponential with the given mean. REQUIRES: mean >= 0.
  double exponential(double mean);
  // Normal (Marsaglia polar method). REQUIRES: sigma >= 0.
  double normal(double mean, double sigma);
  // Lognormal given by its median and the sigma of the underlying normal:
  // median * exp(sigma * N(0, 1)). REQUIRES: median > 0, sigma >= 0.
  double lognormal(double median, double sigma);
  // True with probability p (clamped to [0, 1]).
  bool bernoulli(double p);
  // Index i with probability weights[i] / sum(weights). REQUIRES: weights non-empty, all >= 0,
  // sum > 0.
  std::size_t weighted_choice(std::span<const double> weights);

  // The seed it was made from (0 for from_state): a value drawn once per run or per rank is a
  // stream of its own derived from the run's seed (scenario/language/distribution.h).
  std::uint64_t seed() const { return seed_; }

 private:
  std::uint64_t s_[4];
  std::uint64_t seed_ = 0;
};

}  // namespace racesim::kernel
