// The live supervisor: see supervisor.h.
#include "src/scenario/language/group_restart.h"
#include "src/live/supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "sim/kernel/simulation.h"
#include "sim/storage/faults.h"
#include "src/live/board.h"
#include "src/live/live_clock.h"
#include "src/live/real_files.h"
#include "src/scenario/language/platform.h"
#include "src/scenario/execute/run_state.h"

namespace racesim::live {

namespace fs = std::filesystem;

std::string board_name(long pid, std::uint64_t seed) {
  return "racesim-live-" + std::to_string(pid) + "-" + std::to_string(seed);
}
std::string run_dir_name(long pid) { return "racesim-live-" + std::to_string(pid); }

namespace {

constexpr std::int64_t kAttachTimeoutNs = 60'000'000'000;  // workers compile the study first
constexpr std::int64_t kGraceNs = 10'000'000'000;          // past the scaled time limit
constexpr std::int64_t kMaxRunNs = 24LL * 3600 * 1'000'000'000;

bool pid_alive(long pid) { return pid > 0 && (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM); }

// The pid in NAME = "racesim-live-PID" or "racesim-live-PID-SEED"; -1 when it is not one.
long pid_of(const std::string& name) {
  const std::string prefix = "racesim-live-";
  if (name.rfind(prefix, 0) != 0) return -1;
  const std::string rest = name.substr(prefix.size());
  const std::size_t dash = rest.find('-');
  const std::string digits = rest.substr(0, dash);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) return -1;
  return std::stol(digits);
}

std::string describe_status(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    return std::string("killed by signal ") + std::to_string(sig) + " (" + strsignal(sig) + ")";
  }
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  return "ended (status " + std::to_string(status) + ")";
}

// What a mount holds at the end, measured on its real directory.
void measure(const fs::path& dir, double& files, double& bytes, double& torn) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return;
  // Bounded by the tree's entries.
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const std::uint64_t size = it->file_size(ec);
    bytes += static_cast<double>(size);
    std::uint64_t members = 1;
    // Torn by the model's rule (FsReport's count): a file with a content identity that is not
    // all its writer's bytes, to its length (short, long, or a mixture: a writer's late bytes
    // after another's truncation). Read whole, as a reader reads it (read_content, which parses
    // the header); a file it cannot read counts as torn.
    const int fd = size >= kHeaderBytes ? ::open(it->path().c_str(), O_RDONLY | O_CLOEXEC) : -1;
    if (fd >= 0) {
      int err = 0;
      const auto r = read_content(fd, size, {}, &err);
      ::close(fd);
      if (!r) {
        torn += 1;
      } else if (r->content.writer >= 0) {  // a content identity: its header was read
        members = r->content.files;
        if (!r->intact()) torn += 1;
      }
    }
    files += static_cast<double>(std::max<std::uint64_t>(members, 1));
  }
}

}  // namespace

bool check_live(const scenario::CompiledProgram& program, scenario::Diagnostics& diags) {
  const std::size_t before = diags.count();
  for (const scenario::StepUse& u : program.uses) {
    if (!u.primitive->live) {
      diags.error(u.where, "'" + u.primitive->name + "' has no live meaning yet (racesim live runs the control and "
                                                     "storage primitives on real processes; see scenarios/README.md, "
                                                     "\"Live runs\")");
    } else if (!u.live_refusal.empty()) {
      diags.error(u.where, u.live_refusal);
    } else if (u.primitive->name == "collective" && program.platform &&
               program.platform->collective.exec_timeout < kernel::kTimeMax) {
      // A live barrier waits on the board until the run's time limit: it has no exec timeout.
      diags.error(u.where, "a live collective barrier has no exec timeout (it waits on the board until the run's "
                           "time limit); run without platform.collective.exec_timeout");
    }
  }
  // The storage fault kinds a real directory meets at the model's points (RealFiles, through
  // sim/storage/mount_faults.h); slow_storage cannot slow a real transfer by a factor, and the
  // other models' faults act in models a live run does not have.
  static const std::set<std::string> kLiveFaults = {std::string(storage::kWriterStall), std::string(storage::kEnospc),
                                                    std::string(storage::kEio), std::string(storage::kLatencySpike),
                                                    "crash"};
  for (const scenario::CompiledFault& f : program.faults) {
    if (f.probability > 0 && !kLiveFaults.count(f.kind->name)) {
      diags.error(f.where, "fault '" + f.name + "' (" + f.kind->name + ") can be active, and it has no live meaning "
                                                                       "(live runs inject writer_stall, enospc, eio, "
                                                                       "latency_spike and crash): run a sweep point where "
                                                                       "its probability is 0");
    }
  }
  if (const auto* policy = program.platform ? program.platform->find_section<scenario::GroupRestartPolicy>("elastic") : nullptr;
      policy && policy->on()) {
    diags.error(scenario::Location{program.scenario->file, 0, 0},
                "platform.elastic: a live run does not restart the group (its supervisor starts each rank once); "
                "run a point with max_restarts: 0");
  }
  const int world = program.scenario->ranks;
  if (world > Board::kMaxWorld) {
    diags.error(scenario::Location{program.scenario->file, 0, 0}, "a live run has at most " + std::to_string(Board::kMaxWorld) +
                                                      " ranks (one process each); this point has " + std::to_string(world));
  }
  return diags.count() == before;
}

int clean_stale(const std::string& dir, std::ostream& log) {
  int removed = 0;
  std::error_code ec;
  for (const fs::path& base : {fs::path("/dev/shm"), fs::path(dir)}) {
    for (auto it = fs::directory_iterator(base, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      const long pid = pid_of(name);
      if (pid < 0 || pid_alive(pid)) continue;
      std::error_code rm;
      fs::remove_all(it->path(), rm);
      if (!rm) {
        ++removed;
        log << "racesim live: removed " << it->path().string() << " (left by process " << pid << ", which no longer runs)\n";
      }
    }
  }
  return removed;
}

run::RunRecord run_live(const scenario::CompiledProgram& program, std::uint64_t seed, const LiveOptions& o,
                        std::ostream& log) {
  const scenario::Scenario& sc = *program.scenario;
  const int world = sc.ranks;
  run::RunRecord rec;
  rec.strategy = program.strategy->name;
  rec.point = sc.point;
  rec.seed = seed;
  rec.mode = "live";
  const long pid = static_cast<long>(::getpid());
  const fs::path root = fs::path(o.dir) / run_dir_name(pid) / ("run-" + std::to_string(seed));
  const std::string segment = board_name(pid, seed);
  const auto error = [&rec](const std::string& check, const std::string& why) {
    rec.outcome = run::Outcome::kError;
    rec.check = check;
    rec.diagnosis = why;
  };
  std::error_code ec;
  fs::remove_all(root, ec);
  fs::create_directories(root, ec);
  if (ec) throw LiveError("cannot make " + root.string() + ": " + ec.message());
  nlohmann::json task;
  task["file"] = o.file;
  task["overrides"] = o.overrides;
  task["strategy"] = rec.strategy;
  task["point"] = rec.point;
  task["seed"] = seed;
  task["scale"] = o.scale;
  task["root"] = root.string();
  std::unique_ptr<Board> board;
  try {
    board = Board::create(segment, world, task.dump());
  } catch (const LiveError&) {
    fs::remove_all(root, ec);
    throw;
  }

  // Start the workers: fork + exec racesim itself in worker mode.
  std::map<pid_t, int> workers;  // pid -> rank, while it runs
  std::map<int, std::string> died;  // rank -> how its worker ended, when not cleanly
  const auto kill_all = [&workers] {
    for (const auto& [p, r] : workers) ::kill(p, SIGKILL);
    // Bounded: each worker was sent SIGKILL, which cannot be caught.
    for (const auto& [p, r] : workers) ::waitpid(p, nullptr, 0);
    workers.clear();
  };
  for (int r = 0; r < world; ++r) {
    const std::string rank = std::to_string(r);
    const pid_t child = ::fork();
    if (child < 0) {
      board->stop();
      kill_all();
      Board::remove(segment);
      fs::remove_all(root, ec);
      throw LiveError(std::string("fork failed: ") + std::strerror(errno));
    }
    if (child == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() == 1) ::_exit(3);  // the supervisor is already gone
      const char* argv[] = {o.self.c_str(), "live", "--worker", segment.c_str(), "--rank", rank.c_str(), nullptr};
      ::execv(o.self.c_str(), const_cast<char* const*>(argv));
      ::_exit(127);
    }
    workers[child] = r;
  }
  const auto reap = [&](int flags) {
    // Bounded by the workers still running.
    for (;;) {
      int status = 0;
      const pid_t p = ::waitpid(-1, &status, flags);
      if (p <= 0) return;
      auto it = workers.find(p);
      if (it == workers.end()) continue;
      if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) died[it->second] = describe_status(status);
      workers.erase(it);
    }
  };

  // In slices of 50 ms, so a SIGTERM or a worker that died before attaching ends the wait at once
  // (a worker cannot notify the board's condition from a signal handler). Bounded by the deadline.
  int attached = 0;
  const std::int64_t attach_by = monotonic_ns() + kAttachTimeoutNs;
  while ((attached = board->wait_attached(world, 50'000'000)) < world && monotonic_ns() < attach_by) {
    reap(WNOHANG);
    if (!died.empty() || (o.stop && o.stop->load())) break;
  }
  reap(WNOHANG);
  bool timed_out = false;
  if (attached < world || !died.empty()) {
    board->stop();
  } else {
    const std::int64_t start = monotonic_ns() + 20'000'000;  // 20 ms for the workers to see it
    board->start(start);
    const double limit = static_cast<double>(sc.limits.time) * o.scale;
    const std::int64_t deadline = start + std::min<std::int64_t>(kMaxRunNs, static_cast<std::int64_t>(std::min(limit, 9e18))) + kGraceNs;
    // Bounded by the deadline.
    while (!workers.empty()) {
      reap(WNOHANG);
      if (workers.empty()) break;
      if (!died.empty() || (o.stop && o.stop->load())) {
        board->stop();
        break;
      }
      if (monotonic_ns() > deadline) {
        timed_out = true;
        board->stop();
        break;
      }
      ::usleep(2000);
    }
    // Stopped workers end within a pacer slice (20 ms); give them a second, then kill them.
    const std::int64_t grace = monotonic_ns() + 1'000'000'000;
    while (!workers.empty() && monotonic_ns() < grace) {
      reap(WNOHANG);
      ::usleep(2000);
    }
  }
  kill_all();

  // Judge the run.
  kernel::Simulation sim;  // only for RunState's bookkeeping: nothing runs in it
  scenario::RunState state(sim, program.platform.get(), world);
  kernel::Time end = 0;
  std::vector<std::string> missing;
  std::string timeout_ranks;
  for (int r = 0; r < world; ++r) {
    const auto text = board->result(r);
    if (!text) {
      missing.push_back(std::to_string(r));
      continue;
    }
    try {
      const auto j = nlohmann::json::parse(*text);
      end = std::max<kernel::Time>(end, j.at("end_ns").get<kernel::Time>());
      if (j.at("status") == "timeout") timeout_ranks += (timeout_ranks.empty() ? "" : ", ") + std::to_string(r);
      for (const auto& [name, values] : j.at("series").items()) {
        for (const auto& v : values) state.sample(name, v.at(0).get<double>(), v.at(1).get<int>());
      }
      for (const auto& [name, v] : j.at("counters").items()) state.add(name, v.get<double>());
      for (const auto& [name, v] : j.at("mounts").items()) state.add(name, v.get<double>());
    } catch (const std::exception& e) {
      missing.push_back(std::to_string(r) + " (unreadable result: " + e.what() + ")");
    }
  }
  const auto failure = board->failure();
  if (program.platform) {
    for (const scenario::MountSpec& m : program.platform->mounts) {
      double files = 0, bytes = 0, torn = 0;
      for (auto it = fs::directory_iterator(root, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        const std::string n = it->path().filename().string();
        if (n == m.name || n.rfind(m.name + "@node", 0) == 0) measure(it->path(), files, bytes, torn);
      }
      state.add("fs." + m.name + ".files_at_end", files);
      state.add("fs." + m.name + ".bytes_at_end", bytes);
      state.add("fs." + m.name + ".torn_at_end", torn);
    }
  }
  rec.makespan = end;
  rec.metrics = state.metrics(sc.metric_defs, &program.metric_names);
  for (auto it = rec.metrics.begin(); it != rec.metrics.end();) {
    // Not measured live, so absent: a metadata server's queue, and how long the members of a
    // collective waited and what it moved (a live collective is a barrier on the board).
    const bool unmeasured = it->first.find(".mds_") != std::string::npos || it->first == "collective.wait_s" ||
                            it->first == "collective.bytes_moved";
    it = unmeasured ? rec.metrics.erase(it) : std::next(it);
  }
  rec.metrics["makespan_s"] = kernel::to_seconds(end);

  std::string deaths, harness;
  for (const auto& [r, how] : died) deaths += (deaths.empty() ? "" : "; ") + ("rank " + std::to_string(r) + "'s worker " + how);
  if (failure && failure->check != "no_errors" && failure->check != "no_deadlock") {
    rec.outcome = run::Outcome::kFail;
    rec.check = failure->check;
    rec.diagnosis = failure->diagnosis;
  } else if (failure) {
    error(failure->check, failure->diagnosis);
    if (failure->check == "no_deadlock") rec.outcome = run::Outcome::kDeadlock;
  } else if (!died.empty()) {
    error("no_errors", deaths);  // a run whose rank died is never a pass
  } else if (attached < world && o.stop && o.stop->load()) {
    error("interrupted", "live: interrupted");  // stopped while the workers were starting
  } else if (attached < world) {
    harness = std::to_string(attached) + " of " + std::to_string(world) + " workers started";
  } else if (timed_out || !timeout_ranks.empty()) {
    rec.outcome = run::Outcome::kTimeout;
    rec.check = "no_timeout";
    rec.diagnosis = "still running at the time limit " + kernel::format_duration(sc.limits.time) +
                    (timeout_ranks.empty() ? "" : " (ranks " + timeout_ranks + ")");
  } else if (!missing.empty()) {
    std::string m;
    for (const std::string& s : missing) m += (m.empty() ? "" : ", ") + s;
    error("no_errors", "live: no result from rank " + m);
  } else if (o.stop && o.stop->load()) {
    error("interrupted", "live: interrupted");
  }
  board.reset();
  Board::remove(segment);
  fs::remove_all(root, ec);
  if (ec) log << "racesim live: could not remove " << root.string() << ": " << ec.message() << "\n";
  if (!harness.empty()) throw LiveError(harness);
  return rec;
}

}  // namespace racesim::live
