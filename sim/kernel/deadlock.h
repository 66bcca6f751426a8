// Deadlock and stall diagnosis: who is blocked on what, who could release them, and the cycles
// in the wait-for graph.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace racesim::kernel {

struct BlockedProcess {
  std::int32_t pid = -1;
  std::string name;
  bool daemon = false;
  std::string waits_for;  // e.g. "lock on mutex 'm2'"
  // Processes that could release it, with what they are doing now.
  struct Releaser {
    std::int32_t pid;
    std::string name;
    std::string state;  // "blocked in lock on mutex 'm3'", "finished", "running", ...
  };
  std::vector<Releaser> releasers;
};

struct DeadlockReport {
  std::vector<BlockedProcess> blocked;  // by pid
  // Each cycle lists pids in wait-for order; the first waits for the second, ..., the last for
  // the first. One cycle per strongly connected component of the wait-for graph, starting at
  // its smallest pid.
  std::vector<std::vector<std::int32_t>> cycles;

  bool empty() const { return blocked.empty(); }
  // One line per blocked process, then one line per cycle, e.g.
  //   p1: lock on mutex 'm2': waiting for p2 (blocked in lock on mutex 'm3')
  //   cycle: p1 -> p2 -> p3 -> p1
  std::string to_string() const;
  // The one line that says most: the first process of the first cycle, else the end of a wait
  // chain (a process waiting only for processes that are not blocked), else the first.
  std::string key_line() const;
  // The name of a pid in the report (or "#pid").
  std::string name_of(std::int32_t pid) const;
};

// Elementary cycles representative of each strongly connected component of a directed graph
// given as adjacency lists over vertices 0..n-1 (Tarjan's algorithm, iterative; then a shortest
// cycle through the component's smallest vertex by BFS). Self-loops count as cycles.
std::vector<std::vector<std::int32_t>> find_cycles(
    const std::vector<std::vector<std::int32_t>>& adjacency);

}  // namespace racesim::kernel
