// A metadata server (a Lustre MDS, an NFS server's metadata path): `threads` service threads in
// front of one FIFO queue, shared by every client of a mount. Each operation kind has two costs:
//   service  the time it holds a thread (the server's share: throughput is threads / service)
//   latency  the time it takes outside the queue (the client's RPC, the network, OST object
//            work done in parallel), which does not contend
// so one client issuing operations one after another gets 1 / (latency + service) per second and
// many clients together at most threads / service, queueing for the rest.
//
// Defaults (MetadataConfig::lustre()) come from mdtest on Lustre 2.5 (Dell, "Dell Storage for HPC
// with Intel Enterprise Edition for Lustre", Figures 12 and 13, 24 OSTs, 15K RPM MDT disks):
//   file create    504/s at 1 thread,  about 15,000/s at 240 threads
//   file stat    2,000/s at 1 thread,  about 400,000/s
//   file remove  1,800/s at 1 thread,  about 100,000/s
//   dir create   1,800/s at 1 thread,  about 19,000/s
//   dir stat     5,000/s at 1 thread,  about 450,000/s
// With 8 threads: service = 8 / aggregate, latency = 1 / single - service. rename has no mdtest
// figure: it changes two directory entries and is taken as a create. readdir is taken as a
// directory stat per call (listings here are of a few dozen names).
//
// The queue is computed, not simulated: an operation arriving at t starts when a thread is free
// and every earlier arrival has started (FIFO over c threads: the earliest-free thread), so its
// completion is known on arrival and the caller sleeps once. An operation whose caller dies while
// queued keeps its place (the request was sent).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "sim/kernel/time.h"

namespace racesim::storage {

using kernel::Time;

enum class MetaOp : std::uint8_t { kCreate, kStat, kMkdir, kUnlink, kRename, kReaddir };
inline constexpr std::size_t kMetaOps = 6;
const char* to_string(MetaOp op);

struct MetaCost {
  Time latency = 0;  // outside the queue
  Time service = 0;  // holding a server thread
};

struct MetadataConfig {
  int threads = 0;  // 0: no server; each operation costs the mount's meta_latency, never queues
  std::array<MetaCost, kMetaOps> cost{};  // by MetaOp
  // The Lustre figures above, with 8 threads.
  static MetadataConfig lustre();
  const MetaCost& of(MetaOp op) const { return cost[static_cast<std::size_t>(op)]; }
  MetaCost& of(MetaOp op) { return cost[static_cast<std::size_t>(op)]; }
};

class MetadataServer {
 public:
  struct Stats {
    std::uint64_t ops = 0;
    Time wait_total = 0;          // time spent queued, summed over operations
    Time wait_max = 0;
    std::size_t queue_peak = 0;   // most operations queued (arrived, not started) at once
    Time busy_total = 0;          // thread time served
  };

  // REQUIRES: threads >= 1.
  explicit MetadataServer(int threads);

  // An operation that reaches the server at `arrival` and needs `service`: the time its service
  // ends. REQUIRES: arrival is not before the previous call's arrival (callers pass now()).
  Time serve(Time arrival, Time service);
  const Stats& stats() const { return stats_; }
  // The time-average number of queued operations over [0, elapsed] (Little: wait_total / elapsed).
  double queue_mean(Time elapsed) const {
    return elapsed > 0 ? static_cast<double>(stats_.wait_total) / static_cast<double>(elapsed) : 0;
  }
  int threads() const { return threads_; }

 private:
  using MinHeap = std::priority_queue<Time, std::vector<Time>, std::greater<Time>>;
  int threads_;
  MinHeap free_at_;    // when each thread is next free (threads_ entries)
  MinHeap starts_;     // start times of the operations queued at the last arrival
  Time last_arrival_ = 0;
  Stats stats_;
};

}  // namespace racesim::storage
