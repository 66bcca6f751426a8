// What every search shares (see search.h).
#include "src/search/search.h"

#include <algorithm>
#include <cctype>
#include <tuple>

namespace racesim::search {

std::string Mode::to_string() const {
  switch (kind) {
    case ModeKind::kRandom:
      return "random";
    case ModeKind::kPct:
      return "pct:" + std::to_string(depth);
    case ModeKind::kSwarm:
      return "swarm";
    case ModeKind::kExhaustive:
      return "exhaustive:" + std::to_string(depth);
  }
  return "?";
}

kernel::Result<Mode> Mode::parse(const std::string& text) {
  const std::string expected = "expected a mode: random, pct, pct:DEPTH, swarm, exhaustive or exhaustive:DELAYS";
  if (text == "random") return Mode{ModeKind::kRandom};
  if (text == "swarm") return Mode{ModeKind::kSwarm};
  if (text == "pct") return Mode{ModeKind::kPct, 3};
  if (text == "exhaustive") return Mode{ModeKind::kExhaustive, 2};
  for (const auto& [prefix, kind, lo, what] :
       {std::tuple{"pct:", ModeKind::kPct, 1, "pct depth"}, std::tuple{"exhaustive:", ModeKind::kExhaustive, 0, "exhaustive's delay bound"}}) {
    const std::string p = prefix;
    if (text.rfind(p, 0) != 0) continue;
    const std::string d = text.substr(p.size());
    const bool digits = !d.empty() && d.size() <= 2 && std::all_of(d.begin(), d.end(), [](unsigned char c) {
      return std::isdigit(c) != 0;
    });
    const int n = digits ? std::stoi(d) : -1;
    if (n < lo || n > 64) {
      return kernel::Result<Mode>::error(std::string(what) + " must be a whole number from " + std::to_string(lo) +
                                         " to 64, got '" + d + "'");
    }
    return Mode{kind, n};
  }
  return kernel::Result<Mode>::error(expected + ", got '" + text + "'");
}

std::string failure_signature(const run::RunRecord& r) {
  std::string out = r.check + ": ";
  bool in_number = false;
  for (char c : r.diagnosis) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (!in_number) out += '#';
      in_number = true;
      continue;
    }
    in_number = false;
    out += c;
  }
  return out;
}

RunGate::RunGate(const ExploreOptions& o)
    : stop_(o.stop), budget_seconds_(o.budget_seconds), started_(std::chrono::steady_clock::now()) {}

bool RunGate::open() {
  if (closed_.load()) return false;
  const std::chrono::duration<double> spent = std::chrono::steady_clock::now() - started_;
  if (interrupted() || (budget_seconds_ > 0 && spent.count() >= budget_seconds_)) {
    closed_.store(true);
    return false;
  }
  return true;
}

}  // namespace racesim::search
