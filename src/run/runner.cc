#include "src/run/runner.h"

#include <sys/resource.h>

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <atomic>
#include <exception>
#include <fstream>
#include <mutex>
#include <ostream>
#include <system_error>
#include <thread>

#include "src/scenario/execute/interpreter.h"
#include "src/scenario/execute/rank_machine.h"
#include "src/scenario/execute/run_state.h"

namespace racesim::run {

const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::kPass:
      return "pass";
    case Outcome::kFail:
      return "fail";
    case Outcome::kDeadlock:
      return "deadlock";
    case Outcome::kTimeout:
      return "timeout";
    case Outcome::kError:
      return "error";
  }
  return "?";
}

std::string trace_hash_text(std::uint64_t hash) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(hash));
  return buf;
}

namespace {

// "; rank 0 was killed at 4s by crash fault 'c'" for the ranks that were killed (at most 4
// named), or "".
std::string killed_ranks(const scenario::RunState& state) {
  std::string out;
  int named = 0, more = 0;
  const auto& ranks = state.rank_processes();
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const kernel::Process* p = ranks[r];
    if (!p->finished() || p->exit_kind() != kernel::ExitKind::kKilled) continue;
    if (named == 4) {
      ++more;
      continue;
    }
    out += std::string(named++ ? ", " : "; ") + "rank " + std::to_string(r) + " was " + p->exit_description();
  }
  if (more) out += ", and " + std::to_string(more) + " more ranks were killed";
  return out;
}

}  // namespace

std::string rank_stream_name(int rank, int incarnation) {
  const std::string base = "rank" + std::to_string(rank);
  return incarnation == 0 ? base : base + "/restart" + std::to_string(incarnation);
}

kernel::Process* spawn_rank(kernel::Simulation& sim, scenario::RunState& state, const scenario::CompiledProgram& program,
                            int rank, int incarnation, int drawn_as, bool stackless) {
  const std::string name = std::to_string(rank);
  const int world = program.scenario->ranks;
  std::string process = incarnation == 0 ? "rank " + name : "rank " + name + " (restart " + std::to_string(incarnation) + ")";
  kernel::ProcessOptions options{.group = "rank " + name, .lane = "main"};
  if (stackless && program.stackless && state.live() == nullptr && !sim.trace().full()) {
    // No fiber: the same steps and events, in a fraction of the memory (rank_machine.h). A full
    // trace's slices per step are the fiber interpreter's (interpreter.cc).
    return sim.spawn_stackless(
        std::move(process),
        std::make_unique<scenario::RankMachine>(
            program.steps, scenario::RankContext{sim, state, rank, world, sim.stream(rank_stream_name(drawn_as, incarnation))}),
        std::move(options));
  }
  return sim.spawn(std::move(process),
                   [&sim, &state, &program, rank, incarnation, world, drawn_as] {
                     scenario::RankContext ctx{sim, state, rank, world,
                                               sim.stream(rank_stream_name(drawn_as, incarnation))};
                     // The interpreter exits: its daemon helpers die (not at teardown).
                     if (scenario::run_rank(program.steps, ctx)) state.program_ended(rank);
                   },
                   std::move(options));
}

RunRecord run_one(const scenario::CompiledProgram& program, std::uint64_t seed,
                  const RunOptions& options, std::ostream* chrome_trace,
                  std::string* deadlock_report) {
  const scenario::Scenario& sc = *program.scenario;
  RunRecord rec;
  rec.strategy = program.strategy->name;
  rec.point = sc.point;
  rec.seed = seed;
  assert(options.disarmed_faults.empty() || options.disarmed_faults.size() == program.faults.size());
  kernel::Simulation sim({.seed = seed,
                          .policy = options.policy,
                          .trace = chrome_trace ? kernel::TraceLevel::kFull : options.trace,
                          .record_choices = options.record_choices,
                          .log_events = options.log_events});
  scenario::RunState state(sim, program.platform.get(), sc.ranks);
  state.set_checks(&sc.checks);
  const int world = sc.ranks;
  kernel::RunResult res;
  try {
    // Rank r's program; incarnation n > 0 is a restart after a crash, with its own stream.
    const std::vector<int>& streams = options.rank_streams;
    assert(streams.empty() || streams.size() == static_cast<std::size_t>(world));
    auto spawn = [&sim, &state, &program, &streams, stackless = options.stackless_ranks](int r, int n) {
      return spawn_rank(sim, state, program, r, n, streams.empty() ? r : streams[static_cast<std::size_t>(r)], stackless);
    };
    std::vector<kernel::Process*> ranks(static_cast<std::size_t>(world));
    for (int r = 0; r < world; ++r) ranks[static_cast<std::size_t>(r)] = spawn(r, 0);
    state.set_rank_processes(ranks);
    state.set_respawn(spawn);
    state.arm_faults(program.faults, world, -1, options.disarmed_faults);
    res = sim.run({.time_limit = sc.limits.time, .event_limit = sc.limits.events});
  } catch (const std::bad_alloc& e) {
    // The system refused memory (fiber stacks at an address-space limit, say): an error result
    // that says so, never a crash. The ranks are unwound while the run's state exists.
    sim.shutdown();
    rec.outcome = Outcome::kError;
    rec.check = "memory";
    rec.diagnosis = std::string("out of memory: ") + e.what() + " (run fewer --jobs or ranks, or give it more memory)";
    return rec;
  }
  rec.makespan = res.end_time;
  rec.events = res.events;
  rec.trace_hash = res.trace_hash;
  if (options.record_choices) rec.tape = sim.tape();
  if (options.log_events) {
    rec.event_log = sim.event_log();
    rec.entered_sites = sim.entered_sites();
    for (const auto& p : sim.processes()) rec.process_ranks.push_back(state.faults().rank_of(p.get()));
  }
  if (options.log_events && options.record_choices) rec.choice_owners = sim.choice_owners();
  if (options.record_choices || options.log_events) {
    for (const auto& p : sim.processes()) rec.process_names.push_back(p->name());
  }
  if (options.policy.kind == kernel::PolicyKind::kReplay) rec.replay_divergence = sim.replay_divergence();
  if (res.outcome == kernel::RunOutcome::kCompleted && !state.failure()) state.conclude();
  rec.metrics = state.metrics(sc.metric_defs, &program.metric_names);
  rec.metrics["makespan_s"] = kernel::to_seconds(res.end_time);
  if (state.failure()) {
    rec.outcome = Outcome::kFail;
    rec.check = state.failure()->check;
    rec.diagnosis = state.failure()->diagnosis;
  } else {
    switch (res.outcome) {
      case kernel::RunOutcome::kCompleted:
      case kernel::RunOutcome::kStopped:
        break;
      case kernel::RunOutcome::kDeadlock: {
        rec.outcome = Outcome::kDeadlock;
        rec.check = "no_deadlock";
        // A model's cause (collectives whose members issued different calls) says more than
        // the kernel's line for one blocked process ("sync on comm queue ...: no known releaser").
        const std::string cause = state.deadlock_cause();
        rec.diagnosis = (cause.empty() ? res.deadlock.key_line() : cause) + " (" +
                        std::to_string(res.deadlock.blocked.size()) + " blocked at " +
                        kernel::format_duration(res.end_time) + ")";
        // A hang after a crash names the crash, even where the wait has no known releaser (a
        // mark any rank could set).
        if (rec.diagnosis.find("killed at") == std::string::npos) rec.diagnosis += killed_ranks(state);
        if (deadlock_report) {
          *deadlock_report = res.deadlock.to_string();
          const auto lines = state.explain();  // the models' side: what is held, what is in flight
          if (!lines.empty()) *deadlock_report += "models:\n";
          for (const std::string& l : lines) *deadlock_report += "  " + l + "\n";
        }
        break;
      }
      case kernel::RunOutcome::kTimeLimit:
        if (state.check_on("no_timeout")) {
          rec.outcome = Outcome::kTimeout;
          rec.check = "no_timeout";
          rec.diagnosis = "still running at the time limit " + kernel::format_duration(sc.limits.time);
        }
        break;
      case kernel::RunOutcome::kEventLimit:
        rec.outcome = Outcome::kTimeout;
        rec.check = "no_timeout";
        rec.diagnosis = "event limit " + std::to_string(sc.limits.events) + " reached at " +
                        kernel::format_duration(res.end_time);
        break;
      case kernel::RunOutcome::kError:
        // A run whose rank (or a model) failed is never a pass, whatever `checks:` lists.
        rec.outcome = Outcome::kError;
        rec.check = "no_errors";
        rec.diagnosis = res.message;
        break;
    }
  }
  // Per-run metric bounds, for runs that passed every other check.
  for (const scenario::MetricCheck& mc : sc.metric_checks) {
    if (rec.outcome != Outcome::kPass) break;
    auto it = rec.metrics.find(mc.metric);
    std::string why;
    if (it == rec.metrics.end()) {
      why = "metric '" + mc.metric + "' was not recorded";
    } else if (mc.min && it->second < *mc.min) {
      why = "metric '" + mc.metric + "' = " + std::to_string(it->second) + ", expected >= " + std::to_string(*mc.min);
    } else if (mc.max && it->second > *mc.max) {
      why = "metric '" + mc.metric + "' = " + std::to_string(it->second) + ", expected <= " + std::to_string(*mc.max);
    }
    if (!why.empty()) {
      rec.outcome = Outcome::kFail;
      rec.check = "metric " + mc.metric;
      rec.diagnosis = why + " (" + scenario::where_text(program.scenario->run_place(mc.where)) + ")";
    }
  }
  if (chrome_trace) {
    // A failure a check reported is marked where it happened (RunState::fail); a deadlock, a
    // limit or an error is marked at the end.
    if (rec.outcome != Outcome::kPass && !state.failure()) sim.trace_timeline('i', "failure", rec.check + ": " + rec.diagnosis);
    sim.write_chrome_trace(*chrome_trace);
  }
  // Unwind the ranks while the run's state (marks they may be blocked on) still exists.
  sim.shutdown();
  return rec;
}

std::uint64_t seeds_in_shard(std::uint64_t seeds, int index, int count) {
  if (count < 1 || index < 0 || index >= count) return 0;
  const auto n = static_cast<std::uint64_t>(count), i = static_cast<std::uint64_t>(index);
  return seeds / n + (i < seeds % n ? 1 : 0);
}

bool in_shard(std::uint64_t i, int index, int count) {
  return count >= 1 && i % static_cast<std::uint64_t>(count) == static_cast<std::uint64_t>(index);
}

WorkSize size_work(const std::vector<const scenario::CompiledProgram*>& programs, const Plan& plan) {
  WorkSize w;
  w.runs = seeds_in_shard(plan.seeds, plan.shard_index, plan.shard_count) * programs.size();
  w.jobs = static_cast<int>(std::clamp<std::uint64_t>(w.runs, 1, static_cast<std::uint64_t>(std::max(1, plan.jobs))));
  for (const auto* p : programs) {
    const auto ranks = static_cast<std::uint64_t>(p->scenario->ranks);
    if (ranks * rank_bytes(*p) > w.ranks * w.rank_bytes) {
      w.ranks = ranks;
      w.rank_bytes = rank_bytes(*p);
    }
  }
  w.bytes = w.runs * kRecordBytes + static_cast<std::uint64_t>(w.jobs) * w.ranks * w.rank_bytes;
  return w;
}

std::uint64_t memory_budget() {
  std::uint64_t budget = 0;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") {
      budget = kib * 1024;
      break;
    }
  }
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    const auto limit = static_cast<std::uint64_t>(as.rlim_cur);
    budget = budget == 0 ? limit : std::min(budget, limit);
  }
  return budget;
}

RunRecord run_one_caught(const scenario::CompiledProgram& program, std::uint64_t seed, const RunOptions& options) {
  try {
    return run_one(program, seed, options);
  } catch (const std::exception& e) {
    RunRecord r;
    r.strategy = program.strategy->name;
    r.point = program.scenario->point;
    r.seed = seed;
    r.outcome = Outcome::kError;
    r.check = "internal";
    r.diagnosis = e.what();
    return r;
  }
}

void run_workers(int jobs, const std::function<void()>& worker) {
  assert(jobs >= 1);
  if (jobs == 1) {
    worker();
    return;
  }
  std::vector<std::thread> pool;
  for (int j = 0; j < jobs; ++j) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {
      break;  // a thread the system refuses leaves the work to the others
    }
  }
  if (pool.empty()) worker();
  for (auto& t : pool) t.join();
}

std::vector<RunRecord> run_all(const std::vector<const scenario::CompiledProgram*>& programs,
                               const Plan& plan) {
  struct Task {
    const scenario::CompiledProgram* program;
    std::uint64_t seed;
  };
  std::vector<Task> tasks;
  for (std::size_t p = 0; p < programs.size(); ++p) {
    for (std::uint64_t i = 0; i < plan.seeds; ++i) {
      if (!in_shard(i, plan.shard_index, plan.shard_count)) continue;
      if (plan.skip.count({p, plan.seed_start + i})) continue;
      tasks.push_back({programs[p], plan.seed_start + i});
    }
  }
  std::vector<RunRecord> results(tasks.size());
  std::vector<char> ran(tasks.size(), 0);  // written by the thread that ran the task
  std::atomic<std::size_t> next{0};
  std::atomic<bool> refused{false};  // on_record returned false
  std::mutex progress_mutex;
  std::size_t done = 0;
  auto finished_one = [&](const RunRecord& rec) {
    if (plan.on_record && !refused.load() && !plan.on_record(rec)) refused.store(true);
    if (!plan.progress) return;
    std::lock_guard<std::mutex> lock(progress_mutex);
    plan.progress(++done, tasks.size());
  };
  auto stopping = [&] { return refused.load() || (plan.stop != nullptr && plan.stop->load()); };
  auto worker = [&] {
    for (;;) {
      if (stopping()) return;
      const std::size_t i = next.fetch_add(1);
      if (i >= tasks.size()) return;
      results[i] = run_one_caught(*tasks[i].program, tasks[i].seed, plan.options);
      ran[i] = 1;
      finished_one(results[i]);
    }
  };
  // No more threads than runs.
  run_workers(static_cast<int>(std::clamp<std::size_t>(tasks.size(), 1, static_cast<std::size_t>(std::max(1, plan.jobs)))),
              worker);
  if (std::find(ran.begin(), ran.end(), 0) != ran.end()) {
    std::vector<RunRecord> finished;
    for (std::size_t i = 0; i < tasks.size(); ++i) {
      if (ran[i]) finished.push_back(std::move(results[i]));
    }
    return finished;
  }
  return results;
}

}  // namespace racesim::run
