// The kernel benchmark workloads, defined once and used by racesim_bench and by the anchor
// comparison. bench/anchors/simgrid_workloads.cc implements the same three on SimGrid's S4U API;
// keep the two in step (same process counts, loop counts, sleep times and token rules).
//
//   W1 timers:  N processes; each loops K times sleep_for(d), d = 1 + (x >> 33) % 1000 seconds,
//               x a per-process 64-bit LCG (x = x * 6364136223846793005 + 1442695040888963407)
//               seeded with id * 0x9E3779B97F4A7C15 + 12345. Items: timer events (N * K).
//   W2 ring:    N processes in a ring pass one token M laps: receive on my channel, sleep 1 s,
//               send token + 1 to the next process's channel. Process 0 holds the token at the
//               start (skips its first receive); the very last send is not made (nobody would
//               receive it). Items: token hand-offs (N * M).
//   W3 barrier: N processes wait on one reusable barrier R times. Items: arrivals (N * R).
//
// K, M and R are parameters (defaults below). The with-creation figures use the defaults, where
// spawning N processes is a large part of the time; the steady-state figures run the same
// workload with a short and a long loop count and divide the extra items by the extra seconds,
// so creation and teardown cancel out (bench/kernel_bench.cc, bench/anchors/run_anchors.sh).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "sim/kernel/channel.h"
#include "sim/kernel/simulation.h"
#include "sim/kernel/sync.h"

namespace racesim::bench {

inline constexpr int kTimerLoops = 100;   // K
inline constexpr int kRingLaps = 10;      // M
inline constexpr int kBarrierRounds = 10; // R

inline std::uint64_t lcg_next(std::uint64_t& x) {
  x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}

struct WorkloadResult {
  std::uint64_t items = 0;
  kernel::RunResult run;
};

// Runs `sim` to its end: the result of a workload of `items` items.
inline WorkloadResult run_counting(kernel::Simulation& sim, std::uint64_t items) {
  WorkloadResult r;
  r.run = sim.run();
  r.items = items;
  return r;
}

// Each function builds the workload in `sim`, runs it, and returns the items it processed.
inline WorkloadResult run_timers(kernel::Simulation& sim, int n, int loops = kTimerLoops) {
  using kernel::kSecond;
  for (int id = 0; id < n; ++id) {
    sim.spawn("t", [&sim, id, loops] {
      std::uint64_t x = static_cast<std::uint64_t>(id) * 0x9E3779B97F4A7C15ULL + 12345;
      for (int k = 0; k < loops; ++k) {
        const std::uint64_t d = 1 + (lcg_next(x) >> 33) % 1000;
        sim.sleep_for(static_cast<kernel::Time>(d) * kSecond);
      }
    });
  }
  return run_counting(sim, static_cast<std::uint64_t>(n) * loops);
}

inline WorkloadResult run_ring(kernel::Simulation& sim, int n, int laps = kRingLaps) {
  using kernel::kSecond;
  std::vector<std::unique_ptr<kernel::Channel<std::int64_t>>> ch;
  ch.reserve(n);
  for (int i = 0; i < n; ++i) {
    ch.push_back(std::make_unique<kernel::Channel<std::int64_t>>(sim, "ring", 1));
  }
  for (int id = 0; id < n; ++id) {
    sim.spawn("r", [&sim, &ch, id, n, laps] {
      std::int64_t token = 0;
      for (int lap = 0; lap < laps; ++lap) {
        if (!(id == 0 && lap == 0)) ch[id]->recv(token);
        sim.sleep_for(kSecond);
        if (!(id == n - 1 && lap == laps - 1)) ch[(id + 1) % n]->send(token + 1);
      }
    });
  }
  return run_counting(sim, static_cast<std::uint64_t>(n) * laps);
}

inline WorkloadResult run_barrier(kernel::Simulation& sim, int n, int rounds = kBarrierRounds) {
  kernel::Barrier barrier(sim, "b", static_cast<std::size_t>(n));
  for (int id = 0; id < n; ++id) {
    sim.spawn("b", [&barrier, rounds] {
      for (int k = 0; k < rounds; ++k) barrier.arrive_and_wait();
    });
  }
  return run_counting(sim, static_cast<std::uint64_t>(n) * rounds);
}

// W1 and W3 with stackless processes (Simulation::spawn_stackless): the same events as on fibers
// (the trace hash is the same), without a stack per process. racesim only: the other engines'
// processes are what they are.
class StacklessTimer final : public kernel::Resumable {
 public:
  StacklessTimer(kernel::Simulation& sim, int id, int loops)
      : sim_(sim), x_(static_cast<std::uint64_t>(id) * 0x9E3779B97F4A7C15ULL + 12345), left_(loops) {}
  bool resume(kernel::WaitStatus status) override {
    if (status == kernel::WaitStatus::kKilled || left_-- == 0) return false;
    const std::uint64_t d = 1 + (lcg_next(x_) >> 33) % 1000;
    sim_.arm_sleep_until(sim_.deadline_after(static_cast<kernel::Time>(d) * kernel::kSecond));
    return true;
  }

 private:
  kernel::Simulation& sim_;
  std::uint64_t x_;
  int left_;
};

inline WorkloadResult run_timers_stackless(kernel::Simulation& sim, int n, int loops = kTimerLoops) {
  for (int id = 0; id < n; ++id) sim.spawn_stackless("t", std::make_unique<StacklessTimer>(sim, id, loops));
  return run_counting(sim, static_cast<std::uint64_t>(n) * loops);
}

class StacklessArrival final : public kernel::Resumable {
 public:
  StacklessArrival(kernel::Barrier& barrier, int rounds) : barrier_(barrier), left_(rounds) {}
  bool resume(kernel::WaitStatus status) override {
    if (status == kernel::WaitStatus::kKilled) return false;
    while (left_-- > 0) {
      if (barrier_.arrive(kernel::kTimeMax, generation_)) return true;
    }
    return false;
  }

 private:
  kernel::Barrier& barrier_;
  int left_;
  std::uint64_t generation_ = 0;
};

inline WorkloadResult run_barrier_stackless(kernel::Simulation& sim, int n, int rounds = kBarrierRounds) {
  kernel::Barrier barrier(sim, "b", static_cast<std::size_t>(n));
  for (int id = 0; id < n; ++id) sim.spawn_stackless("b", std::make_unique<StacklessArrival>(barrier, rounds));
  return run_counting(sim, static_cast<std::uint64_t>(n) * rounds);
}

// Resident set size of this process in bytes (from /proc/self/statm), or 0 if unreadable.
inline std::uint64_t resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long size = 0, resident = 0;
  const int got = std::fscanf(f, "%llu %llu", &size, &resident);
  std::fclose(f);
  return got == 2 ? resident * 4096ULL : 0;
}

}  // namespace racesim::bench
