// The live worker: see worker.h.
#include "src/live/worker.h"

#include <sched.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <iostream>

#include <nlohmann/json.hpp>

#include "sim/kernel/simulation.h"
#include "src/live/board.h"
#include "src/live/live_clock.h"
#include "src/live/real_files.h"
#include "src/run/runner.h"
#include "src/scenario/execute/interpreter.h"
#include "src/scenario/execute/live_link.h"
#include "src/scenario/execute/run_state.h"
#include "src/scenario/pipeline/study.h"

namespace racesim::live {

namespace {

// The CPUs this process may run on (its affinity mask; 1 where it cannot be read).
int cpus() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  return ::sched_getaffinity(0, sizeof mask, &mask) == 0 ? std::max(1, CPU_COUNT(&mask)) : 1;
}

constexpr std::int64_t kStartTimeoutNs = 120'000'000'000;  // the supervisor starts every run well within this

// The rank's link to the other ranks' processes (scenario/live_link.h).
class WorkerLink final : public scenario::LiveLink {
 public:
  WorkerLink(Board& board, const LiveClock& clock, kernel::Simulation& sim, std::string root)
      : board_(board), clock_(clock), sim_(sim), root_(std::move(root)) {}

  std::unique_ptr<storage::Files> mount(const scenario::MountSpec& m, const std::string& instance) override {
    const std::string dir = root_ + "/" + instance;
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      throw LiveError("live worker: cannot make the directory of mount " + instance + ": " + dir);
    }
    return std::make_unique<RealFiles>(sim_, clock_, instance, m.config, dir, [this] { return board_.next_version(); },
                                       &board_, cpus());
  }
  void arrive_and_wait(const std::string& name, int parties) override {
    const std::uint64_t gen = board_.arrive(name, parties);
    // Bounded by the run's time limit (the pacer ends the run at a stop).
    while (!board_.passed(name, gen)) sim_.sleep_for(clock_.poll_interval());
  }
  void set_mark(const std::string& name) override { board_.set_mark(name); }
  bool marked(const std::string& name) override { return board_.marked(name); }
  bool wait_mark(const std::string& name, kernel::Time timeout) override {
    const kernel::Time start = sim_.now();
    // Bounded by the timeout and the run's time limit.
    while (!board_.marked(name)) {
      if (sim_.now() - start >= timeout) return false;
      sim_.sleep_for(std::min(clock_.poll_interval(), timeout - (sim_.now() - start)));
    }
    return true;
  }
  int semaphore_enter(const std::string& name, int permits) override {
    int actual = 0;
    const std::uint64_t ticket = board_.take_ticket(name, permits, actual);
    if (actual != permits) return actual;
    // Bounded by the run's time limit (the pacer ends the run at a stop).
    while (!board_.may_enter(name, ticket)) sim_.sleep_for(clock_.poll_interval());
    return permits;
  }
  void semaphore_leave(const std::string& name) override { board_.leave(name); }

 private:
  Board& board_;
  const LiveClock& clock_;
  kernel::Simulation& sim_;
  std::string root_;
};

bool is_mount_counter(const std::string& k) {
  if (k.rfind("fs.", 0) != 0) return false;
  if (k.find(".cost.") != std::string::npos) return true;  // each kind of read and write's sums
  for (const char* c : {".meta_ops", ".bytes_written", ".bytes_read", ".disk_full", ".read_cpu_s", ".write_cpu_s"}) {
    const std::string s = c;
    if (k.size() > s.size() && k.compare(k.size() - s.size(), s.size(), s) == 0) return true;
  }
  return false;
}

}  // namespace

int worker_main(const std::string& segment, int rank) {
  std::unique_ptr<Board> board;
  try {
    board = Board::open(segment);
  } catch (const LiveError& e) {
    std::cerr << "racesim: " << e.what() << "\n";
    return 3;
  }
  const auto refuse = [&](const std::string& why) {
    std::cerr << "racesim: live worker rank " << rank << ": " << why << "\n";
    board->report_failure(rank, "no_errors", "rank " + std::to_string(rank) + "'s worker: " + why);
    return 3;
  };
  nlohmann::json task;
  try {
    task = nlohmann::json::parse(board->task());
  } catch (const std::exception& e) {
    return refuse(std::string("the board's task is not JSON: ") + e.what());
  }
  scenario::StudyRequest req;
  req.path = task.value("file", "");
  req.overrides = task.value("overrides", std::vector<std::string>{});
  req.strategies = {task.value("strategy", "")};
  const std::string point = task.value("point", "");
  if (!point.empty()) req.points = {point};
  scenario::Diagnostics diags;
  auto study = scenario::compile_study(req, diags);
  if (!study || study->programs.size() != 1) {
    return refuse("cannot compile " + req.path + (diags.count() ? ": " + diags.all().front().message : std::string()));
  }
  const scenario::CompiledProgram& program = *study->programs.front();
  const scenario::Scenario& sc = *program.scenario;
  if (rank < 0 || rank >= sc.ranks) return refuse("no rank " + std::to_string(rank) + " in " + std::to_string(sc.ranks));
  const double scale = task.value("scale", 1.0);
  const std::uint64_t seed = task.value("seed", std::uint64_t{0});
  board->attach();
  const auto start = board->wait_start(kStartTimeoutNs);
  if (!start) return 0;  // stopped before it started: the supervisor reports why

  kernel::Simulation sim({.seed = seed});
  LiveClock clock(*start, scale, [&board] { return board->stopped(); });
  sim.set_pacer(&clock);
  scenario::RunState state(sim, program.platform.get(), sc.ranks);
  state.set_checks(&sc.checks);
  WorkerLink link(*board, clock, sim, task.value("root", ""));
  state.set_live(&link);
  // As run_one spawns rank r (the same name and random stream, rank_stream_name), so a seed
  // samples the same values (start times, compile times) as the simulation; incarnation n > 0
  // is a restart after a crash fault.
  auto spawn = [&sim, &state, &program](int r, int n) { return run::spawn_rank(sim, state, program, r, n, r); };
  kernel::Process* main = spawn(rank, 0);
  // The fault plan as run_one draws it (the same streams, every rank drawn), this rank's part armed.
  std::vector<kernel::Process*> processes(static_cast<std::size_t>(sc.ranks), nullptr);
  processes[static_cast<std::size_t>(rank)] = main;
  state.set_rank_processes(processes);
  // A crash fault kills this rank's process in this worker (its files are closed and its flocks
  // released, as the kernel does for a dead process) and restarts it here.
  state.set_respawn(spawn);
  state.arm_faults(program.faults, sc.ranks, rank);
  const kernel::RunResult res = sim.run({.time_limit = sc.limits.time, .event_limit = sc.limits.events});

  std::string status = "completed";
  if (state.failure()) {
    status = "failed";
    board->report_failure(rank, state.failure()->check, state.failure()->diagnosis);
  } else if (res.outcome == kernel::RunOutcome::kError) {
    status = "error";
    board->report_failure(rank, "no_errors", "rank " + std::to_string(rank) + ": " + res.message);
  } else if (res.outcome == kernel::RunOutcome::kStopped) {
    status = "stopped";
  } else if (res.outcome == kernel::RunOutcome::kTimeLimit || res.outcome == kernel::RunOutcome::kEventLimit) {
    status = "timeout";
  } else if (res.outcome == kernel::RunOutcome::kDeadlock) {
    status = "error";
    board->report_failure(rank, "no_deadlock", "rank " + std::to_string(rank) + ": " + res.deadlock.key_line());
  }
  nlohmann::json out;
  out["status"] = status;
  out["end_ns"] = res.end_time;
  nlohmann::json series = nlohmann::json::object();
  for (const auto& [name, s] : state.series()) {
    nlohmann::json v = nlohmann::json::array();
    for (std::size_t i = 0; i < s.values.size(); ++i) v.push_back({s.values[i], s.ranks[i]});
    series[name] = v;
  }
  out["series"] = series;
  nlohmann::json counters = state.counters();
  nlohmann::json mounts = nlohmann::json::object();
  for (const auto& [k, v] : state.metrics({}, nullptr)) {
    if (is_mount_counter(k)) mounts[k] = v;
    // This rank's hits of the fault plan (faults.NAME.hits): the supervisor sums the ranks'.
    if (k.rfind("faults.", 0) == 0 && k.size() > 5 && k.compare(k.size() - 5, 5, ".hits") == 0) counters[k] = v;
  }
  out["counters"] = counters;
  out["mounts"] = mounts;
  sim.shutdown();
  try {
    board->put_result(rank, out.dump());
  } catch (const LiveError& e) {
    return refuse(e.what());
  }
  return 0;
}

}  // namespace racesim::live
