// The determinism guard (see determinism.h).
#include "src/search/determinism.h"

#include <cassert>
#include <thread>

#include "sim/kernel/event_log.h"
#include "src/report/number_text.h"
#include "src/report/results_file.h"
#include "src/scenario/compile/step.h"

namespace racesim::search {

namespace {

// "rank 3 resumed (in the step at f.yaml:84:25)", "a callback ran", "nothing (the run had ended)".
std::string describe(const run::RunRecord& r, std::size_t i) {
  if (i >= r.event_log.size()) return "nothing (the run had ended after " + std::to_string(r.event_log.size()) + " events)";
  const kernel::EventStamp& e = r.event_log[i];
  if (e.process < 0) return std::string("a callback (") + kernel::event_kind_name(e.kind) + ")";
  const auto p = static_cast<std::size_t>(e.process);
  std::string out = (p < r.process_names.size() ? r.process_names[p] : "process " + std::to_string(e.process)) + " (" +
                    kernel::event_kind_name(e.kind) + ")";
  if (e.site != nullptr) {
    out += " in the step at " + scenario::where_text(static_cast<const scenario::Step*>(e.site)->where);
  }
  return out;
}

}  // namespace

std::string compare_runs(const run::RunRecord& a, const run::RunRecord& b) {
  if (const auto i = kernel::first_divergence(a.event_log, b.event_log)) {
    const kernel::Time at = *i < a.event_log.size() ? a.event_log[*i].at : b.event_log[*i].at;
    std::string out = "the runs differ from event " + std::to_string(*i + 1) + " at " + kernel::format_duration(at) +
                      ": the first dispatched " + describe(a, *i) + ", the second " + describe(b, *i);
    if (*i > 0) {
      out += "; they agree on the " + std::to_string(*i) + " events before, the last of them " + describe(a, *i - 1) +
             " (what it did may be where they part)";
    }
    return out;
  }
  if (a.outcome != b.outcome || a.check != b.check || a.diagnosis != b.diagnosis) {
    return "the same " + std::to_string(a.event_log.size()) + " events, but the first ended " +
           run::to_string(a.outcome) + (a.diagnosis.empty() ? "" : " (" + a.check + ": " + a.diagnosis + ")") +
           " and the second " + run::to_string(b.outcome) +
           (b.diagnosis.empty() ? "" : " (" + b.check + ": " + b.diagnosis + ")");
  }
  for (const auto& [name, v] : a.metrics) {
    auto it = b.metrics.find(name);
    if (it == b.metrics.end()) return "the same events, but only the first recorded the metric " + name;
    // Bit for bit: a deterministic run computes the same doubles.
    if (!(it->second == v)) {
      return "the same events, but the metric " + name + " is " + report::num(v) + " in the first and " +
             report::num(it->second) + " in the second";
    }
  }
  if (a.metrics.size() != b.metrics.size()) return "the same events, but the second recorded metrics the first did not";
  if (a.trace_hash != b.trace_hash) {
    return "the same events, outcome and metrics, but trace hashes " + run::trace_hash_text(a.trace_hash) + " and " +
           run::trace_hash_text(b.trace_hash) + " (a model record after the last event differs)";
  }
  return "";
}

std::vector<Divergence> check_determinism(const std::vector<const scenario::CompiledProgram*>& programs,
                                          const DeterminismOptions& o, std::uint64_t& runs) {
  assert(o.seeds >= 1);
  run::RunOptions opts;
  opts.policy = o.policy;
  opts.log_events = true;
  std::vector<Divergence> out;
  runs = 0;
  for (const scenario::CompiledProgram* p : programs) {
    for (std::uint64_t k = 0; k < o.seeds; ++k) {
      const std::uint64_t seed = o.seed_start + k;
      const run::RunRecord first = run::run_one_caught(*p, seed, opts);
      // The second on a thread of its own: another stack pool, another allocation history, so
      // an order that follows addresses or thread state shows.
      run::RunRecord second;
      std::thread([&] { second = run::run_one_caught(*p, seed, opts); }).join();
      ++runs;
      std::string what = compare_runs(first, second);
      if (!what.empty()) {
        out.push_back({report::program_label(p->scenario->point, p->strategy->name), seed, std::move(what)});
      }
    }
  }
  return out;
}

}  // namespace racesim::search
