#include "sim/kernel/deadlock.h"

#include <algorithm>
#include <deque>

namespace racesim::kernel {

std::string DeadlockReport::name_of(std::int32_t pid) const {
  for (const BlockedProcess& b : blocked) {
    if (b.pid == pid) return b.name;
  }
  std::string out = "#";
  out += std::to_string(pid);
  return out;
}

namespace {

std::string line_of(const BlockedProcess& b) {
  std::string out = b.name;
  if (b.daemon) out += " (daemon)";
  out += ": " + b.waits_for + ": ";
  if (b.releasers.empty()) {
    out += "no known releaser";
  } else {
    out += "waiting for ";
    for (std::size_t i = 0; i < b.releasers.size(); ++i) {
      if (i) out += ", ";
      out += b.releasers[i].name + " (" + b.releasers[i].state + ")";
    }
  }
  return out;
}

}  // namespace

std::string DeadlockReport::key_line() const {
  if (blocked.empty()) return "";
  auto line_of_pid = [&](std::int32_t pid) -> const BlockedProcess* {
    for (const BlockedProcess& b : blocked) {
      if (b.pid == pid) return &b;
    }
    return nullptr;
  };
  // In a cycle: its first member, whose line names the next.
  if (!cycles.empty()) {
    if (const BlockedProcess* b = line_of_pid(cycles.front().front())) return line_of(*b);
  }
  // Else the end of a wait chain: a process waiting only for processes that are not blocked.
  for (const BlockedProcess& b : blocked) {
    bool end = !b.releasers.empty();
    for (const auto& r : b.releasers) end = end && r.state.rfind("blocked", 0) != 0;
    if (end) return line_of(b);
  }
  return line_of(blocked.front());
}

std::string DeadlockReport::to_string() const {
  std::string out;
  for (const BlockedProcess& b : blocked) out += line_of(b) + "\n";
  for (const auto& cycle : cycles) {
    out += "cycle: ";
    for (std::int32_t pid : cycle) out += name_of(pid) + " -> ";
    out += name_of(cycle.front()) + "\n";
  }
  return out;
}

std::vector<std::vector<std::int32_t>> find_cycles(
    const std::vector<std::vector<std::int32_t>>& adj) {
  const std::int32_t n = static_cast<std::int32_t>(adj.size());
  std::vector<std::int32_t> index(n, -1), low(n, 0), comp(n, -1);
  std::vector<bool> on_stack(n, false);
  std::vector<std::int32_t> stack;
  std::int32_t next_index = 0, ncomp = 0;
  // Iterative Tarjan: frames of (vertex, next edge position).
  std::vector<std::pair<std::int32_t, std::size_t>> frames;
  for (std::int32_t s = 0; s < n; ++s) {
    if (index[s] != -1) continue;
    frames.push_back({s, 0});
    index[s] = low[s] = next_index++;
    stack.push_back(s);
    on_stack[s] = true;
    while (!frames.empty()) {
      auto& [v, pos] = frames.back();
      if (pos < adj[v].size()) {
        const std::int32_t w = adj[v][pos++];
        if (w < 0 || w >= n) continue;
        if (index[w] == -1) {
          index[w] = low[w] = next_index++;
          stack.push_back(w);
          on_stack[w] = true;
          frames.push_back({w, 0});
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      if (low[v] == index[v]) {
        std::int32_t w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = false;
          comp[w] = ncomp;
        } while (w != v);
        ++ncomp;
      }
      const std::int32_t done = v;
      frames.pop_back();
      if (!frames.empty()) {
        const std::int32_t parent = frames.back().first;
        low[parent] = std::min(low[parent], low[done]);
      }
    }
  }
  // Group members by component.
  std::vector<std::vector<std::int32_t>> members(ncomp);
  for (std::int32_t v = 0; v < n; ++v) members[comp[v]].push_back(v);
  std::vector<std::vector<std::int32_t>> cycles;
  for (const auto& m : members) {
    const std::int32_t root = m.front();  // smallest vertex (members are ascending)
    if (m.size() == 1) {
      if (std::find(adj[root].begin(), adj[root].end(), root) != adj[root].end()) {
        cycles.push_back({root});
      }
      continue;
    }
    // BFS inside the component from root back to root: a shortest cycle through root.
    std::vector<std::int32_t> parent(n, -2);
    std::deque<std::int32_t> q{root};
    parent[root] = -1;
    std::int32_t last = -1;
    while (!q.empty() && last < 0) {
      const std::int32_t v = q.front();
      q.pop_front();
      for (std::int32_t w : adj[v]) {
        if (w < 0 || w >= n || comp[w] != comp[root]) continue;
        if (w == root) {
          last = v;
          break;
        }
        if (parent[w] == -2) {
          parent[w] = v;
          q.push_back(w);
        }
      }
    }
    std::vector<std::int32_t> cycle;
    for (std::int32_t v = last; v != -1; v = parent[v]) cycle.push_back(v);
    std::reverse(cycle.begin(), cycle.end());
    cycles.push_back(std::move(cycle));
  }
  std::sort(cycles.begin(), cycles.end());
  return cycles;
}

}  // namespace racesim::kernel
