// The kernel benchmark workloads of bench/workloads.h on SimGrid's S4U API, for side-by-side
// ratios (bench/anchors/run_anchors.sh). SimGrid's engine can be built once per OS process, so
// this program runs one workload per invocation and prints one JSON line:
//   simgrid_workloads timers|ring|barrier N [LOOPS]
//   {"engine":"simgrid","workload":"timers","n":1000,"items":100000,"seconds":0.41,
//    "items_per_second":243902,"bytes_per_process":9421}
// Time is wall time around Engine::run() plus actor creation (as racesim's figure includes
// spawning); memory is the growth of the peak resident set (VmHWM) from just before the actors
// are created, divided by N. LOOPS replaces the workload's loop count (K, M or R; defaults as in
// workloads.h); the steady-state rate comes from a short and a long run (run_anchors.sh).
#include <simgrid/s4u.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/proc_status.h"

namespace sg4 = simgrid::s4u;
using racesim::bench::status_kib;

namespace {

constexpr int kTimerLoops = 100;
constexpr int kRingLaps = 10;
constexpr int kBarrierRounds = 10;

std::uint64_t lcg_next(std::uint64_t& x) {
  x = x * 6364136223846793005ULL + 1442695040888963407ULL;
  return x;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: %s timers|ring|barrier N [LOOPS]\n", argv[0]);
    return 2;
  }
  const std::string workload = argv[1];
  const int n = std::atoi(argv[2]);
  const int loops = argc == 4 ? std::atoi(argv[3])
                    : workload == "timers" ? kTimerLoops
                    : workload == "ring"   ? kRingLaps
                                           : kBarrierRounds;
  if (n < 2 || loops < 1 || (workload != "timers" && workload != "ring" && workload != "barrier")) {
    std::fprintf(stderr, "usage: %s timers|ring|barrier N [LOOPS] (N >= 2, LOOPS >= 1)\n", argv[0]);
    return 2;
  }
  int sg_argc = 2;
  char arg0[] = "simgrid_workloads";
  char quiet[] = "--log=root.thres:critical";
  char* sg_argv[] = {arg0, quiet, nullptr};
  sg4::Engine engine(&sg_argc, sg_argv);
  // One host with an instantaneous loopback link, so communications cost only the engine's own
  // work (racesim's channels have no network model either).
  auto* zone = sg4::create_full_zone("zone");
  sg4::Host* host = zone->create_host("host", 1e9);
  sg4::Link* lo = zone->create_link("lo", 1e15)->set_latency(0);
  zone->add_route(host->get_netpoint(), host->get_netpoint(), nullptr, nullptr,
                  {sg4::LinkInRoute(lo)}, true);
  zone->seal();

  const std::uint64_t rss_before_kib = status_kib("VmRSS:");
  const auto start = std::chrono::steady_clock::now();
  std::uint64_t items = 0;
  std::vector<sg4::Mailbox*> boxes;
  sg4::BarrierPtr barrier;
  if (workload == "timers") {
    items = static_cast<std::uint64_t>(n) * loops;
    for (int id = 0; id < n; ++id) {
      sg4::Actor::create("t", host, [id, loops] {
        std::uint64_t x = static_cast<std::uint64_t>(id) * 0x9E3779B97F4A7C15ULL + 12345;
        for (int k = 0; k < loops; ++k) {
          const std::uint64_t d = 1 + (lcg_next(x) >> 33) % 1000;
          sg4::this_actor::sleep_for(static_cast<double>(d));
        }
      });
    }
  } else if (workload == "ring") {
    items = static_cast<std::uint64_t>(n) * loops;
    for (int i = 0; i < n; ++i) boxes.push_back(sg4::Mailbox::by_name("ring" + std::to_string(i)));
    for (int id = 0; id < n; ++id) {
      sg4::Actor::create("r", host, [id, n, loops, &boxes] {
        long token = 0;
        for (int lap = 0; lap < loops; ++lap) {
          if (!(id == 0 && lap == 0)) {
            long* t = boxes[id]->get<long>();
            token = *t;
            delete t;
          }
          sg4::this_actor::sleep_for(1.0);
          if (!(id == n - 1 && lap == loops - 1)) {
            boxes[(id + 1) % n]->put(new long(token + 1), 0);
          }
        }
      });
    }
  } else {
    items = static_cast<std::uint64_t>(n) * loops;
    barrier = sg4::Barrier::create(static_cast<unsigned>(n));
    for (int id = 0; id < n; ++id) {
      sg4::Actor::create("b", host, [&barrier, loops] {
        for (int k = 0; k < loops; ++k) barrier->wait();
      });
    }
  }
  engine.run();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::uint64_t hwm_kib = status_kib("VmHWM:");
  const double bytes_per_process =
      hwm_kib > rss_before_kib ? (hwm_kib - rss_before_kib) * 1024.0 / n : 0.0;
  std::printf(
      "{\"engine\":\"simgrid\",\"workload\":\"%s\",\"n\":%d,\"loops\":%d,\"items\":%llu,\"seconds\":%.6f,"
      "\"items_per_second\":%.1f,\"bytes_per_process\":%.1f}\n",
      workload.c_str(), n, loops, static_cast<unsigned long long>(items), seconds, items / seconds,
      bytes_per_process);
  return 0;
}
