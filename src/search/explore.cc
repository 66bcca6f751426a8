// The explorer (see explore.h).
#include "src/search/explore.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <map>
#include <mutex>
#include <set>

#include "sim/kernel/random.h"
#include "src/search/exhaustive.h"

namespace racesim::search {

run::RunOptions run_options(const scenario::CompiledProgram& program, const ExploreOptions& o,
                            std::uint64_t steps_hint, std::uint64_t i) {
  run::RunOptions opts;
  opts.record_choices = true;
  const std::uint64_t seed = o.seed_start + i;
  switch (o.mode.kind) {
    case ModeKind::kRandom:
      opts.policy = kernel::PolicySpec::random();
      break;
    case ModeKind::kPct:
      opts.policy = kernel::PolicySpec::pct(o.mode.depth, std::max<std::uint64_t>(1, steps_hint));
      break;
    case ModeKind::kExhaustive:
      assert(false && "exhaustive runs are made by explore_exhaustive");
      break;
    case ModeKind::kSwarm: {
      // Its own stream of the run's seed: which kinds and faults this run keeps.
      kernel::RandomStream swarm(seed, "explore/swarm");
      opts.policy = kernel::PolicySpec::random();
      kernel::ChoiceKinds kinds = 0;
      for (std::size_t k = 0; k < kernel::kChoiceKinds; ++k) {
        if (swarm.uniform01() < 0.5) kinds |= static_cast<kernel::ChoiceKinds>(1u << k);
      }
      // No kind at all would be fifo's one schedule: keep the schedule's choices then.
      if (kinds == 0) kinds = static_cast<kernel::ChoiceKinds>(1u << static_cast<unsigned>(kernel::ChoiceKind::kSchedule));
      opts.policy.kinds = kinds;
      opts.disarmed_faults.assign(program.faults.size(), 0);
      for (char& off : opts.disarmed_faults) off = swarm.uniform01() < 0.5 ? 1 : 0;
      break;
    }
  }
  return opts;
}

namespace {

// What the search keeps of a run that is not a finding.
struct Summary {
  bool ran = false;
  bool failed = false;
  std::string signature;  // of a failed run
  std::uint64_t trace_hash = 0;
  std::array<std::uint64_t, kernel::kChoiceKinds> choices = {};
};

}  // namespace

ExploreResult explore(const scenario::CompiledProgram& program, const ExploreOptions& o) {
  assert(o.budget_runs >= 1 && o.jobs >= 1);
  assert(o.shard_count >= 1 && o.shard_index >= 0 && o.shard_index < o.shard_count);
  assert((o.shard_count == 1 || o.mode.kind != ModeKind::kExhaustive) && "an exhaustive search is not sharded");
  if (o.mode.kind == ModeKind::kExhaustive) return explore_exhaustive(program, o);
  // This shard's runs: the j-th is the whole search's run index_of(j).
  const auto shard_index = static_cast<std::uint64_t>(o.shard_index), shard_count = static_cast<std::uint64_t>(o.shard_count);
  const std::uint64_t own_runs = o.budget_runs > shard_index ? (o.budget_runs - shard_index + shard_count - 1) / shard_count : 0;
  auto index_of = [&](std::uint64_t j) { return shard_index + shard_count * j; };
  ExploreResult result;
  Coverage& cov = result.coverage;
  if (o.mode.kind == ModeKind::kPct) {
    // PCT spreads its change points over the steps a run takes: a fifo run of the first seed
    // says how many that is, and how many processes share them.
    run::RunOptions probe;
    probe.record_choices = true;  // for its process names
    const run::RunRecord r = run::run_one(program, o.seed_start, probe);
    cov.steps_hint = std::max<std::uint64_t>(1, r.events);
    cov.processes = r.process_names.size();
  }
  RunGate gate(o);
  std::set<std::uint64_t> hashes;
  std::set<std::string> signatures;
  // Runs go in batches, each run in parallel and then counted in index order, so what is counted
  // (up to the first failure) does not depend on the threads. A batch keeps, of its failing runs,
  // only those that can be findings: the first (or, with `all`, the first of each signature), so
  // its memory does not grow with runs that fail.
  const std::uint64_t batch = std::max<std::uint64_t>(1024, 256 * static_cast<std::uint64_t>(o.jobs));
  bool done = false;
  for (std::uint64_t first = 0; first < own_runs && !done; first += batch) {
    const std::uint64_t count = std::min(batch, own_runs - first);
    std::vector<Summary> summaries(count);
    std::map<std::string, Finding> kept;  // by signature ("" without `all`): its lowest run
    std::mutex kept_mutex;
    std::atomic<std::uint64_t> next{0};
    std::atomic<std::uint64_t> lowest_failure{count};  // without `all`: no run past it is needed
    auto worker = [&] {
      while (gate.open()) {
        const std::uint64_t k = next.fetch_add(1);
        if (k >= count || (!o.all && k > lowest_failure.load())) return;
        const std::uint64_t i = index_of(first + k);
        Finding f;
        f.run = i;
        f.options = run_options(program, o, cov.steps_hint, i);
        f.record = run::run_one_caught(program, o.seed_start + i, f.options);
        Summary& s = summaries[k];
        s.ran = true;
        s.failed = run::failed(f.record.outcome);
        s.trace_hash = f.record.trace_hash;
        for (const kernel::Choice& c : f.record.tape) ++s.choices[static_cast<std::size_t>(c.kind)];
        if (!s.failed) continue;
        f.signature = failure_signature(f.record);
        s.signature = f.signature;
        // (`signatures` holds earlier batches' and is not written during this one.)
        if (o.all && signatures.count(f.signature)) continue;
        const std::string key = o.all ? f.signature : std::string();
        std::lock_guard<std::mutex> lock(kept_mutex);
        if (!o.all && k < lowest_failure.load()) lowest_failure.store(k);
        auto it = kept.find(key);
        if (it != kept.end()) {
          if (f.run < it->second.run) it->second = std::move(f);
          continue;
        }
        if (kept.size() == kMaxFindings) {
          // Full: keep the signatures that first show earliest (whatever the threads did), which
          // are the only ones the count below can reach before it has kMaxFindings.
          auto latest = std::max_element(kept.begin(), kept.end(),
                                         [](const auto& a, const auto& b) { return a.second.run < b.second.run; });
          if (latest->second.run < f.run) continue;
          kept.erase(latest);
        }
        kept.emplace(key, std::move(f));
      }
    };
    run::run_workers(static_cast<int>(std::min<std::uint64_t>(count, static_cast<std::uint64_t>(o.jobs))), worker);
    for (std::uint64_t k = 0; k < count; ++k) {
      const Summary& s = summaries[k];
      if (!s.ran) {
        // Runs start in index order: the rest of the batch did not run either.
        cov.interrupted = gate.interrupted();
        cov.stopped_by_time = !cov.interrupted;
        done = true;
        break;
      }
      ++cov.runs;
      hashes.insert(s.trace_hash);
      for (std::size_t c = 0; c < kernel::kChoiceKinds; ++c) cov.choices[c] += s.choices[c];
      if (!s.failed) continue;
      if (signatures.insert(s.signature).second && result.findings.size() < kMaxFindings) {
        auto it = kept.find(o.all ? s.signature : std::string());
        assert(it != kept.end() && it->second.run == index_of(first + k));
        result.findings.push_back(std::move(it->second));
      }
      if (!o.all) {
        done = true;
        break;
      }
    }
  }
  cov.distinct_schedules = hashes.size();
  return result;
}

}  // namespace racesim::search
