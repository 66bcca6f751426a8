#include "sim/kernel/policy.h"

#include <algorithm>
#include <cassert>
#include <charconv>

namespace racesim::kernel {

namespace {
bool parse_u64(std::string_view s, std::uint64_t& out) {
  if (s.empty()) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}
}  // namespace

Result<PolicySpec> PolicySpec::parse(std::string_view text) {
  const std::string expected =
      "expected a schedule policy: fifo, random, pct, pct:DEPTH or pct:DEPTH:STEPS";
  if (text == "fifo") return fifo();
  if (text == "random") return random();
  if (text.substr(0, 3) == "pct") {
    PolicySpec spec = pct(2, 1000);
    std::string_view rest = text.substr(3);
    if (rest.empty()) return spec;
    if (rest[0] != ':') return Result<PolicySpec>::error(expected + ", got '" + std::string(text) + "'");
    rest.remove_prefix(1);
    const std::size_t colon = rest.find(':');
    std::uint64_t depth = 0;
    if (!parse_u64(rest.substr(0, colon), depth) || depth < 1 || depth > 64) {
      return Result<PolicySpec>::error("pct depth must be a whole number from 1 to 64, got '" +
                                       std::string(rest.substr(0, colon)) + "'");
    }
    spec.depth = static_cast<int>(depth);
    if (colon != std::string_view::npos) {
      std::uint64_t steps = 0;
      if (!parse_u64(rest.substr(colon + 1), steps) || steps < 1) {
        return Result<PolicySpec>::error("pct steps must be a whole number >= 1, got '" +
                                         std::string(rest.substr(colon + 1)) + "'");
      }
      spec.steps_hint = steps;
    }
    return spec;
  }
  return Result<PolicySpec>::error(expected + ", got '" + std::string(text) + "'");
}

std::string PolicySpec::to_string() const {
  switch (kind) {
    case PolicyKind::kFifo:
      return "fifo";
    case PolicyKind::kRandom:
      return "random";
    case PolicyKind::kPct:
      return "pct:" + std::to_string(depth) + ":" + std::to_string(steps_hint);
    case PolicyKind::kReplay:
      return "replay(" + std::to_string(choices.size()) + " choices)";
  }
  return "?";
}

SchedulePolicy::SchedulePolicy(const PolicySpec& spec, std::uint64_t run_seed, bool record)
    : spec_(spec), record_(record), rng_(run_seed ^ (spec.seed * 0x9E3779B97F4A7C15ULL), "schedule") {
  if (spec_.kind == PolicyKind::kPct) {
    assert(spec_.depth >= 1 && spec_.steps_hint >= 1);
    // The i-th drawn change point k_i lowers the running process to priority i (here i + 1,
    // keeping 0 for "no process"); the draws are unordered, as in the paper, so any assignment
    // of low priorities to steps is possible. Sorting by step only orders the look-up.
    for (int i = 0; i + 1 < spec_.depth; ++i) {
      changes_.emplace_back(1 + rng_.uniform_u64(spec_.steps_hint), static_cast<std::uint64_t>(i) + 1);
    }
    std::stable_sort(changes_.begin(), changes_.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  }
}

void SchedulePolicy::on_spawn(OwnerId pid) {
  if (spec_.kind != PolicyKind::kPct) return;
  assert(pid >= 0);
  if (priority_.size() <= static_cast<std::size_t>(pid)) priority_.resize(pid + 1, 0);
  // Initial priorities are >= depth; 62 random bits make ties vanishingly rare, and a tie is
  // broken by insertion order anyway.
  priority_[pid] = static_cast<std::uint64_t>(spec_.depth) + 1 + (rng_.next_u64() >> 2);
}

std::uint64_t SchedulePolicy::priority(OwnerId pid) const {
  if (pid < 0 || static_cast<std::size_t>(pid) >= priority_.size()) return 0;
  return priority_[pid];
}

void SchedulePolicy::diverge(std::string message) {
  if (diverged_) return;  // the first place is the one that explains the rest
  diverged_ = true;
  divergence_ = std::move(message);
}

std::uint64_t SchedulePolicy::next_replayed(ChoiceKind kind, std::uint64_t n) {
  if (!spec_.strict) {
    if (replay_pos_ >= spec_.choices.size()) return 0;
    const std::uint64_t v = spec_.choices[replay_pos_++].value;
    return v < n ? v : 0;
  }
  if (diverged_) return 0;
  const std::size_t at = replay_pos_;
  if (at >= spec_.choices.size()) {
    diverge("choice " + std::to_string(at + 1) + ": the run made more choices than the tape's " +
            std::to_string(spec_.choices.size()) + " (a " + std::string(to_string(kind)) + " choice among " +
            std::to_string(n) + ")");
    return 0;
  }
  const Choice& c = spec_.choices[replay_pos_++];
  if (c.kind != kind || c.options != n || c.value >= n) {
    diverge("choice " + std::to_string(at + 1) + " of " + std::to_string(spec_.choices.size()) + ": the tape has a " +
            std::string(to_string(c.kind)) + " choice among " + std::to_string(c.options) + " (option " +
            std::to_string(c.value) + "), the run made a " + std::string(to_string(kind)) + " choice among " +
            std::to_string(n));
    return 0;
  }
  return c.value;
}

std::string SchedulePolicy::divergence() const {
  if (!spec_.strict) return "";
  if (diverged_) return divergence_;
  if (replay_pos_ < spec_.choices.size()) {
    return "the run made " + std::to_string(replay_pos_) + " of the tape's " + std::to_string(spec_.choices.size()) +
           " choices";
  }
  return "";
}

std::uint64_t SchedulePolicy::decide(ChoiceKind kind, const OwnerId* owners, std::uint64_t n, ChoiceSite site) {
  assert(n >= 1);
  if (n == 1) return 0;
  std::uint64_t v = 0;
  if (spec_.kind == PolicyKind::kReplay) {
    v = next_replayed(kind, n);
  } else if (decides(kind)) {
    if (spec_.kind == PolicyKind::kPct && owners != nullptr) {
      std::uint64_t best = 0;
      for (std::uint64_t k = 0; k < n; ++k) {
        const std::uint64_t p = priority(owners[k]);
        if (k == 0 || p > best) {
          best = p;
          v = k;
        }
      }
    } else {
      v = rng_.uniform_u64(n);
    }
  }
  assert(v < n);
  // A schedule choice is made between events: the process it names is the one that runs.
  if (kind == ChoiceKind::kSchedule && owners != nullptr) site.process = owners[v];
  if (record_) recorded_.push_back(Choice{kind, n, v, site.process, site.at});
  return v;
}

void SchedulePolicy::on_step(OwnerId owner) {
  if (spec_.kind != PolicyKind::kPct) return;
  ++steps_;
  while (next_change_ < changes_.size() && changes_[next_change_].first <= steps_) {
    if (owner >= 0 && static_cast<std::size_t>(owner) < priority_.size()) {
      priority_[owner] = changes_[next_change_].second;
    }
    ++next_change_;
  }
}

}  // namespace racesim::kernel
