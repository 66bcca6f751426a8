// The state of one run, shared by every rank: marks, barriers, series and counters, the fault
// seam, the first failure, and the run-time state of each model family (ModelState), created on
// first use.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sim/kernel/faults.h"
#include "sim/kernel/resource.h"
#include "sim/kernel/simulation.h"
#include "sim/kernel/sync.h"
#include "src/scenario/compile/metric_names.h"
#include "src/scenario/language/group_restart.h"
#include "src/scenario/language/scenario.h"

namespace racesim::scenario {

struct CompiledFault;
struct Platform;
class LiveLink;
class RunState;

// A failed check in one run: which check, where, and a one-line diagnosis.
struct Failure {
  std::string check;
  std::string diagnosis;
};

// A model family's state in one run: the run's file systems (storage), its devices and collective
// engine (cluster), ... A family defines a class T deriving from ModelState with a constructor
// T(RunState&); RunState::model<T>() creates it on first use, and the run then asks every
// created state for its metrics, tells it when a process dies, and lets it explain a deadlock.
// Nothing central lists the families.
class ModelState {
 public:
  virtual ~ModelState() = default;
  // Adds the model's per-run metrics (fs.MOUNT.meta_ops, collective.count, ...).
  virtual void metrics(std::map<std::string, double>& out) const { (void)out; }
  // A process acting for `rank` died (a crash): releases what it held (flocks, open files).
  virtual void release(const kernel::Process* p, int rank) {
    (void)p;
    (void)rank;
  }
  // Appends the model's lines to a deadlock report (what is held, what is in flight).
  virtual void explain(std::vector<std::string>& lines) const { (void)lines; }
  // Every rank's processes were stopped and are starting again (a group restart,
  // group_restart.h), with the new processes in rank_processes(): what lived in the processes
  // (devices, communicators) goes, and a model keeps only what outlives them (files) and its
  // metrics so far.
  virtual void group_restarted() {}
  // The cause of a deadlock in one line, where the model knows it better than the kernel's line
  // for one blocked process can say (collectives whose members issued different calls); "" when
  // it knows none.
  virtual std::string deadlock_cause() const { return ""; }
  // The model's verdict on a run that ended normally, for checks judged over the whole run
  // (a steady state never reached): the failure, or nothing. Asked once, at the end.
  virtual std::optional<Failure> conclude() const { return std::nullopt; }
};

class RunState {
 public:
  // `platform` (nodes, storage mounts) must outlive the run; nullptr: an empty platform.
  explicit RunState(kernel::Simulation& sim, const Platform* platform = nullptr, int world = 1);
  ~RunState();
  RunState(const RunState&) = delete;
  RunState& operator=(const RunState&) = delete;
  kernel::Simulation& sim() { return sim_; }
  const Platform& platform() const { return *platform_; }
  int world() const { return world_; }

  // The run's state of model family T (a ModelState with a constructor T(RunState&)), created
  // on first use.
  template <typename T>
  T& model();

  // The named barrier of all `parties` ranks, created on first use (cyclic).
  kernel::Barrier& barrier(const std::string& name, int parties);
  // A live run (src/live/): this process runs one rank, and barriers, marks and mounts are shared
  // with the other ranks' processes through `link` (which must outlive the run). nullptr (the
  // default): a simulated run.
  void set_live(LiveLink* link) { live_ = link; }
  LiveLink* live() const { return live_; }
  // What the control steps call, simulated or live: arrive at barrier `name` of `parties` ranks
  // and wait for the rest; set mark `name`; wait up to `timeout` for it (false: timed out).
  void arrive_and_wait(const std::string& name, int parties);
  void set_mark(const std::string& name);
  bool wait_mark(const std::string& name, kernel::Time timeout);
  // The ranks' main processes (the runner sets them), for models that report where a rank is.
  // Also binds each to its rank in the fault seam. A live worker runs one rank: the others'
  // entries are nullptr.
  void set_rank_processes(std::vector<kernel::Process*> ranks);
  const std::vector<kernel::Process*>& rank_processes() const { return rank_processes_; }
  // How a crashed rank's program starts again (the runner sets it): spawns rank `rank`'s
  // program as its incarnation `n` (1, 2, ...) and returns the process.
  using Respawn = std::function<kernel::Process*(int rank, int incarnation)>;
  void set_respawn(Respawn fn) { respawn_ = std::move(fn); }
  // Starts rank `rank`'s program again from its first step, as a job scheduler restarts a
  // crashed process: the new process acts for the rank from now on (its faults, the barriers
  // every rank takes part in, rank_processes()). Counts `restarts`. REQUIRES: set_respawn.
  kernel::Process* restart_rank(int rank);
  // A rank's process failed: `cause` says how ("crash fault 'c'", an error's diagnosis). Under
  // a group restart policy (platform.elastic, group_restart.h) with restarts left, every other
  // process of every rank is stopped now (the failed one is `failed`, killed already or ending)
  // and every rank's program starts again restart_after later: kRestarting. kRestarting too for
  // a failure while the group is already stopping (it is part of that restart). kExhausted
  // when every restart is used up; kNoPolicy without one. Counts `elastic.restarts`.
  // REQUIRES: set_respawn.
  enum class GroupOutcome : std::uint8_t { kNoPolicy, kRestarting, kExhausted };
  GroupOutcome group_failure(int rank, const kernel::Process* failed, const std::string& cause);
  const GroupRestartPolicy& group_policy() const { return group_policy_; }
  int group_restarts() const { return group_restarts_; }
  // A process died (a crash): every model releases what it held (flocks, open files).
  void release(const kernel::Process* p, int rank);
  // Every model's lines for a deadlock report, in the order the models were created.
  std::vector<std::string> explain() const;
  // The first model's deadlock_cause() that is not "" (models in the order they were created),
  // or "".
  std::string deadlock_cause() const;
  // At the end of a run that ended normally: the first model verdict (in the order the models
  // were created) whose check is on fails the run; one that is off is counted as ignored.CHECK.
  void conclude();
  // The named mark (an event any rank can set and wait for), created on first use.
  kernel::Event& mark(const std::string& name);
  bool marked(const std::string& name) const;
  // The run's series and counters as recorded (a live worker hands its rank's to the supervisor).
  struct Series {
    std::vector<double> values;
    std::vector<int> ranks;  // parallel: who sampled each value
  };
  const std::map<std::string, Series>& series() const { return series_; }
  const std::map<std::string, double, std::less<>>& counters() const { return counters_; }
  // Appends a value to a named series (a mark NAME: NAME_s, the time each rank reached it).
  // The run's metric of that name is the series' maximum; `metrics:` derives others.
  // `rank` is the rank that sampled it (a mark's rank), or -1; `between:` pairs a rank's samples.
  void sample(const std::string& series, double value, int rank = -1);
  // Adds to a named counter (compiles, bytes_written, ...); the run's metric is the total.
  // Found without building a string: a validating reader counts every retry.
  void add(std::string_view counter, double delta);
  // The run's metrics: each series' maximum, each counter's total (0 for every counter of
  // `names` the run did not add to), each model's metrics, each fault's hits, then the
  // scenario's derived metrics (a definition whose series has no sample gives no metric, except
  // count and sum, which are 0).
  std::map<std::string, double> metrics(const std::vector<MetricDef>& defs,
                                        const MetricNames* names = nullptr) const;
  // The scenario's `checks:` (empty: all on). REQUIRES: outlives the run.
  void set_checks(const std::vector<std::string>* checks) { checks_ = checks; }
  // Whether the check `name` (registered, registry.h) is on in this run: a hard check always; a
  // soft one when `checks:` lists it or is empty.
  bool check_on(const std::string& name) const;
  // The first failure wins: the run stops at once and this returns true. A check that is off
  // does not stop the run: it is counted as ignored.CHECK and this returns false, so the step
  // carries on as the real program would (a torn model loads as garbage).
  bool fail(std::string check, std::string diagnosis);
  // fail(), then, when the check is on, the calling process waits for the run's end (which
  // fail() has started) instead of going on: what a step does when its rank cannot continue.
  // Returns only when the check is off (the step carries on). REQUIRES: called from a simulated
  // process.
  void fail_and_halt(std::string check, std::string diagnosis);
  const std::optional<Failure>& failure() const { return failure_; }
  // Named helper processes (spawn/join), per rank.
  std::map<std::pair<int, std::string>, kernel::Process*>& spawned() { return spawned_; }
  // Helpers spawned with `daemon: true`: when their rank's main program ends they are killed,
  // as a daemon thread is when the interpreter exits (program_ended).
  std::set<std::pair<int, std::string>>& daemons() { return daemons_; }
  // Rank `rank`'s main program returned: its running daemon helpers are killed ("job exit"),
  // releasing what they held. Counts `daemons_killed`.
  void program_ended(int rank);
  // Enters the named cluster-wide semaphore (created at its first use with `permits`), waiting
  // in arrival order; live, on the run's board (LiveLink). Returns the semaphore's permits: when
  // they are not `permits` (a later use asking for another count), it was not entered and the
  // caller reports the mismatch. REQUIRES: called from a simulated process.
  int semaphore_enter(const std::string& name, int permits);
  // A holder leaves the semaphore. REQUIRES: it entered.
  void semaphore_leave(const std::string& name);

  // Draws which faults are active in this run: for each fault, each rank it may hit, in rank
  // order, from the stream "fault/NAME"; an active fault samples its arguments from its own
  // stream "fault/NAME/RANK". Counts active faults as the counter faults.NAME, then runs the
  // kinds' start hooks. With `only_rank` >= 0 (a live worker, which runs one rank: every worker
  // draws the same plan), only that rank's active faults are armed and counted. A fault whose
  // entry in `disarmed` is nonzero is left out of this run (swarm testing): never active, counted
  // 0, and no other fault's draws move (each has its own stream).
  // REQUIRES: set_rank_processes was called; `disarmed` is empty or has one entry per fault.
  void arm_faults(const std::vector<CompiledFault>& faults, int world, int only_rank = -1,
                  const std::vector<char>& disarmed = {});
  // The run's fault seam: the models ask it at their fault points.
  kernel::FaultSeam& faults() { return faults_; }

 private:

  kernel::Simulation& sim_;
  LiveLink* live_ = nullptr;
  const Platform* platform_;
  int world_;
  std::vector<kernel::Process*> rank_processes_;
  Respawn respawn_;
  std::vector<int> incarnations_;  // by rank: how many times it was restarted
  kernel::Process* respawn(int rank);  // restart_rank without counting it
  // Every rank's program from its first step, after a group failure.
  void restart_group();
  GroupRestartPolicy group_policy_;
  int group_restarts_ = 0;
  bool group_stopping_ = false;  // between a group failure and the restart
  // The first use of model<T>(), out of line so that the lookup stays small.
  template <typename T>
  [[gnu::noinline]] T& create_model();

  std::vector<std::unique_ptr<ModelState>> models_;  // by detail::model_index<T>; null until created
  std::vector<ModelState*> created_;                  // in order of creation
  std::map<std::string, std::unique_ptr<kernel::Barrier>> barriers_;
  std::map<std::string, std::unique_ptr<kernel::Event>> marks_;
  std::map<std::string, Series> series_;
  // For `between: [FROM, TO]`: each rank's k-th mark TO minus its k-th mark FROM, in seconds.
  std::vector<double> durations(const std::string& from, const std::string& to) const;
  std::map<std::string, double, std::less<>> counters_;
  std::optional<Failure> failure_;
  const std::vector<std::string>* checks_ = nullptr;
  std::map<std::pair<int, std::string>, kernel::Process*> spawned_;
  std::set<std::pair<int, std::string>> daemons_;
  std::map<std::string, std::unique_ptr<kernel::Resource>> semaphores_;
  kernel::FaultSeam faults_;
  std::vector<const std::string*> fault_names_;  // every fault of the plan (armed or not)
};

namespace detail {
// The next model index (thread-safe).
std::size_t next_model_index();
// A small number per model class, assigned at static initialisation, so finding a run's state of
// a family is one index, not a search and not a guard check: steps look their model up on every
// run().
template <typename T>
inline const std::size_t model_index = next_model_index();
}  // namespace detail

template <typename T>
T& RunState::model() {
  static_assert(std::is_base_of_v<ModelState, T>, "a model's run state derives from ModelState");
  const std::size_t i = detail::model_index<T>;
  if (i < models_.size() && models_[i]) return static_cast<T&>(*models_[i]);  // every step: keep it short
  return create_model<T>();
}

template <typename T>
T& RunState::create_model() {
  const std::size_t i = detail::model_index<T>;
  auto state = std::make_unique<T>(*this);  // may itself create other models' states
  T& out = *state;
  if (i >= models_.size()) models_.resize(i + 1);
  created_.push_back(state.get());
  models_[i] = std::move(state);
  return out;
}

}  // namespace racesim::scenario
