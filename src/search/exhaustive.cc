// Bounded exhaustive search (see exhaustive.h).
#include "src/search/exhaustive.h"

#include <cassert>
#include <set>

#include "src/search/reduction.h"

namespace racesim::search {

namespace {

// A forced prefix: its length and its delays (position, option); every other position of it
// takes the first option.
struct Prefix {
  std::size_t length = 0;
  std::vector<std::pair<std::size_t, std::uint64_t>> delays;
};

std::vector<kernel::Choice> tape_of(const Prefix& p) {
  std::vector<kernel::Choice> t(p.length);
  for (const auto& [at, v] : p.delays) t[at].value = v;
  return t;
}

// The prefixes to explore from a run of prefix `p`, each within `bound` delays. A prefix is its
// delays and ends at its last one (past it a run takes first options, as its parent did).
// Without the reduction (`seen` null): every other option of every choice at or after the
// prefix's end, each new by construction. With it: every option of the choices past the prefix
// that are not the schedule's, and the schedule `alternatives` the reduction found anywhere on
// the tape (reduction.h), each kept in `seen` so that it is queued once.
using Seen = std::set<std::vector<std::pair<std::size_t, std::uint64_t>>>;
std::vector<Prefix> children_of(const Prefix& p, const run::RunRecord& r, const std::vector<Alternative>& alternatives,
                                int bound, Seen* seen) {
  std::vector<Prefix> out;
  auto push = [&](std::size_t at, std::uint64_t v) {
    if (v == 0) return;
    std::size_t below = 0;
    for (const auto& d : p.delays) below += d.first < at ? 1 : 0;
    if (below + 1 > static_cast<std::size_t>(bound)) return;  // before building it: most are past the bound
    Prefix child{at + 1, {}};
    child.delays.reserve(below + 1);
    for (const auto& d : p.delays) {
      if (d.first < at) child.delays.push_back(d);
    }
    child.delays.emplace_back(at, v);
    if (seen != nullptr && !seen->insert(child.delays).second) return;
    out.push_back(std::move(child));
  };
  std::size_t a = 0;
  for (std::size_t i = 0; i < r.tape.size(); ++i) {
    for (; a < alternatives.size() && alternatives[a].position == i; ++a) push(i, alternatives[a].option);
    if (i < p.length || (seen != nullptr && r.tape[i].kind == kernel::ChoiceKind::kSchedule)) continue;
    for (std::uint64_t v = 1; v < r.tape[i].options; ++v) push(i, v);
  }
  return out;
}

}  // namespace

ExploreResult explore_exhaustive(const scenario::CompiledProgram& program, const ExploreOptions& o) {
  assert(o.mode.kind == ModeKind::kExhaustive && o.budget_runs >= 1 && o.jobs >= 1);
  ExploreResult result;
  Coverage& cov = result.coverage;
  RunGate gate(o);
  std::vector<Prefix> stack = {Prefix{}};
  std::set<std::uint64_t> hashes;
  std::set<std::string> signatures;
  Seen seen;  // with the reduction: every prefix queued
  cov.reduced = o.reduce;
  bool done = false;
  while (!stack.empty() && !done) {
    // The top of the stack first, in stack order.
    std::vector<Prefix> batch;
    while (!stack.empty() && batch.size() < kExhaustiveBatch && cov.runs + batch.size() < o.budget_runs) {
      batch.push_back(std::move(stack.back()));
      stack.pop_back();
    }
    if (batch.empty()) break;  // the run budget
    std::vector<Finding> runs(batch.size());
    std::vector<char> ran(batch.size(), 0);
    std::vector<std::vector<Alternative>> alternatives(batch.size());  // with the reduction
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
      while (gate.open()) {
        const std::size_t k = next.fetch_add(1);
        if (k >= batch.size()) return;
        Finding& f = runs[k];
        f.run = cov.runs + k;
        f.options.record_choices = true;
        f.options.policy = kernel::PolicySpec::prefix(tape_of(batch[k]));
        f.options.policy.sticky = true;  // a delay of the schedule is a preemption
        f.options.log_events = o.reduce;  // what the reduction reads
        f.record = run::run_one_caught(program, o.seed_start, f.options);
        if (o.reduce) {
          // On the worker: the analysis is a run's worth of work. The log is not kept after it.
          alternatives[k] = schedule_alternatives(f.record);
          f.record.event_log = {};
          f.record.entered_sites = {};
          f.record.choice_owners = {};
        }
        ran[k] = 1;
      }
    };
    run::run_workers(static_cast<int>(std::min<std::size_t>(batch.size(), static_cast<std::size_t>(o.jobs))), worker);
    // Counted in batch order; the children of the batch's runs pushed so that the first run's
    // first child is explored next.
    std::vector<std::vector<Prefix>> children(batch.size());
    std::size_t counted = 0;
    for (std::size_t k = 0; k < batch.size(); ++k) {
      if (!ran[k]) {
        // Runs start in batch order: the rest did not run either; they stay to be explored.
        cov.interrupted = gate.interrupted();
        cov.stopped_by_time = !cov.interrupted;
        done = true;
        break;
      }
      ++counted;
      Finding& f = runs[k];
      ++cov.runs;
      hashes.insert(f.record.trace_hash);
      for (const kernel::Choice& c : f.record.tape) ++cov.choices[static_cast<std::size_t>(c.kind)];
      const Prefix& p = batch[k];
      children[k] = children_of(p, f.record, alternatives[k], o.mode.depth, o.reduce ? &seen : nullptr);
      if (run::failed(f.record.outcome)) {
        f.signature = failure_signature(f.record);
        if (signatures.insert(f.signature).second && result.findings.size() < kMaxFindings) {
          result.findings.push_back(std::move(f));
        }
        if (!o.all) {
          done = true;
          break;
        }
      }
    }
    // What did not run goes back, then the children, so that the search order stays the same.
    for (std::size_t k = batch.size(); k-- > counted;) stack.push_back(std::move(batch[k]));
    for (std::size_t k = counted; k-- > 0;) {
      for (auto it = children[k].rbegin(); it != children[k].rend(); ++it) stack.push_back(std::move(*it));
    }
    if (stack.size() > kMaxPendingPrefixes || seen.size() > kMaxPendingPrefixes) {
      cov.frontier_full = true;
      done = true;
    }
  }
  cov.distinct_schedules = hashes.size();
  cov.exhausted = stack.empty() && !done;
  cov.pending = stack.size();
  return result;
}

}  // namespace racesim::search
