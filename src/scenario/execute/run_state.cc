// The state of one run (see run_state.h).
#include "src/scenario/execute/run_state.h"

#include "src/scenario/execute/live_link.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>

#include "src/scenario/compile/compiler.h"
#include "src/scenario/language/platform.h"
#include "src/scenario/compile/registry.h"
#include "src/scenario/execute/draw.h"
#include "src/scenario/execute/stats.h"

namespace racesim::scenario {

namespace {
const Platform& empty_platform() {
  static const Platform p;
  return p;
}
}  // namespace

RunState::RunState(kernel::Simulation& sim, const Platform* platform, int world)
    : sim_(sim), platform_(platform ? platform : &empty_platform()), world_(world), faults_(&sim) {
  if (const auto* policy = platform_->find_section<GroupRestartPolicy>("elastic")) group_policy_ = *policy;
}

RunState::~RunState() = default;

void RunState::set_rank_processes(std::vector<kernel::Process*> ranks) {
  rank_processes_ = std::move(ranks);
  for (std::size_t r = 0; r < rank_processes_.size(); ++r) {
    if (rank_processes_[r] != nullptr) faults_.bind(rank_processes_[r], static_cast<int>(r));
  }
}

kernel::Process* RunState::respawn(int rank) {
  assert(respawn_ && "a restart REQUIRES set_respawn");
  const auto r = static_cast<std::size_t>(rank);
  if (incarnations_.size() < rank_processes_.size()) incarnations_.resize(rank_processes_.size(), 0);
  kernel::Process* p = respawn_(rank, ++incarnations_[r]);
  rank_processes_[r] = p;
  faults_.bind(p, rank);
  for (auto& [name, b] : barriers_) {
    if (b->parties() == static_cast<std::size_t>(world_)) b->set_participants({rank_processes_.begin(), rank_processes_.end()});
  }
  return p;
}

kernel::Process* RunState::restart_rank(int rank) {
  add("restarts", 1);
  return respawn(rank);
}

RunState::GroupOutcome RunState::group_failure(int rank, const kernel::Process* failed, const std::string& cause) {
  if (!group_policy_.on()) return GroupOutcome::kNoPolicy;
  if (group_stopping_) return GroupOutcome::kRestarting;
  if (group_restarts_ >= group_policy_.max_restarts) return GroupOutcome::kExhausted;
  ++group_restarts_;
  group_stopping_ = true;
  add("elastic.restarts", 1);
  sim_.trace_record('i', "elastic", "group restart " + std::to_string(group_restarts_) + ": rank " +
                                        std::to_string(rank) + ", " + cause);
  // The agent stops every worker: helpers first, then each rank's main process; each releases
  // what it held (flocks, open files, host buffers), as the kernel does at a process's exit.
  const std::string why = "the group's restart after rank " + std::to_string(rank) + "'s failure";
  kernel::Process* self = sim_.current();
  auto stop = [&](kernel::Process* p, int r) {
    // The failed process, and one a crash has killed already, released what it held then.
    if (p == nullptr || p->finished() || p == failed || p->killed()) return;
    if (p != self) sim_.kill(p, why);
    release(p, r);
  };
  for (auto& [key, helper] : spawned_) stop(helper, key.first);
  for (std::size_t r = 0; r < rank_processes_.size(); ++r) stop(rank_processes_[r], static_cast<int>(r));
  if (failed != nullptr && failed == self) release(failed, rank);  // it is ending: its exit releases too
  // The agent is a process of its own: it keeps the run going while no rank has one.
  sim_.spawn("elastic agent", [this] {
    sim_.sleep_for(group_policy_.restart_after);
    restart_group();
  }, {.group = "elastic", .lane = "agent"});
  return GroupOutcome::kRestarting;
}

void RunState::restart_group() {
  // Every stopped process has unwound by now (restart_after > 0): a new rendezvous, no marks, no
  // barrier arrivals, no helpers; then every rank's program from its first step.
  spawned_.clear();
  daemons_.clear();
  barriers_.clear();
  marks_.clear();
  for (int r = 0; r < world_; ++r) respawn(r);
  group_stopping_ = false;
  for (ModelState* m : created_) m->group_restarted();
}

kernel::Barrier& RunState::barrier(const std::string& name, int parties) {
  auto& slot = barriers_[name];
  if (!slot) {
    slot = std::make_unique<kernel::Barrier>(sim_, name, static_cast<std::size_t>(std::max(1, parties)));
    // Every rank takes part: a deadlock there names the ranks that never arrived (a crashed one
    // as "killed at T by crash fault 'F'").
    if (parties == world_ && rank_processes_.size() == static_cast<std::size_t>(world_)) {
      slot->set_participants({rank_processes_.begin(), rank_processes_.end()});
    }
  }
  return *slot;
}

std::size_t detail::next_model_index() {
  static std::atomic<std::size_t> next{0};
  return next++;
}

void RunState::release(const kernel::Process* p, int rank) {
  for (ModelState* m : created_) m->release(p, rank);
}

void RunState::program_ended(int rank) {
  // The rank's daemons, in the set's order (by rank, then name).
  for (auto it = daemons_.lower_bound({rank, std::string()}); it != daemons_.end() && it->first == rank;) {
    auto sp = spawned_.find(*it);
    if (sp != spawned_.end() && !sp->second->finished()) {
      add("daemons_killed", 1);
      sim_.kill(sp->second, "job exit (rank " + std::to_string(rank) + "'s program ended)");
      release(sp->second, rank);
    }
    it = daemons_.erase(it);
  }
}

int RunState::semaphore_enter(const std::string& name, int permits) {
  if (live_) return live_->semaphore_enter(name, permits);
  auto& slot = semaphores_[name];
  if (!slot) slot = std::make_unique<kernel::Resource>(sim_, name, static_cast<std::size_t>(std::max(1, permits)));
  const int actual = static_cast<int>(slot->stats().servers);
  if (actual == permits) slot->acquire();
  return actual;
}

void RunState::semaphore_leave(const std::string& name) {
  if (live_) {
    live_->semaphore_leave(name);
    return;
  }
  assert(semaphores_.count(name) != 0 && "semaphore_leave REQUIRES semaphore_enter");
  semaphores_.at(name)->release();
}

void RunState::conclude() {
  for (const ModelState* m : created_) {
    if (auto f = m->conclude()) fail(std::move(f->check), std::move(f->diagnosis));
  }
}

std::string RunState::deadlock_cause() const {
  for (const ModelState* m : created_) {
    std::string c = m->deadlock_cause();
    if (!c.empty()) return c;
  }
  return "";
}

std::vector<std::string> RunState::explain() const {
  std::vector<std::string> lines;
  for (const ModelState* m : created_) m->explain(lines);
  return lines;
}

kernel::Event& RunState::mark(const std::string& name) {
  auto it = marks_.find(name);
  if (it == marks_.end()) {
    it = marks_.emplace(name, std::make_unique<kernel::Event>(sim_, "mark '" + name + "'")).first;
  }
  return *it->second;
}

void RunState::arrive_and_wait(const std::string& name, int parties) {
  if (live_) {
    live_->arrive_and_wait(name, parties);
    return;
  }
  barrier(name, parties).arrive_and_wait();
}

void RunState::set_mark(const std::string& name) {
  if (live_) {
    live_->set_mark(name);
    return;
  }
  mark(name).set();
}

bool RunState::wait_mark(const std::string& name, kernel::Time timeout) {
  if (live_) return live_->wait_mark(name, timeout);
  return mark(name).wait(timeout) != kernel::WaitStatus::kTimeout;
}

bool RunState::marked(const std::string& name) const {
  if (live_) return live_->marked(name);
  auto it = marks_.find(name);
  return it != marks_.end() && it->second->is_set();
}

void RunState::sample(const std::string& series, double value, int rank) {
  Series& s = series_[series];
  // Bounded: a series holds at most one value per step a rank runs, and steps are bounded by
  // the run's event limit; this cap keeps a runaway loop from exhausting memory regardless.
  if (s.values.size() < (std::size_t{1} << 24)) {
    s.values.push_back(value);
    s.ranks.push_back(rank);
  }
}

void RunState::add(std::string_view counter, double delta) {
  auto it = counters_.find(counter);
  if (it == counters_.end()) it = counters_.emplace(std::string(counter), 0.0).first;
  it->second += delta;
}

namespace {

double statistic(std::vector<double> v, const std::string& stat) {
  if (stat == "count") return static_cast<double>(v.size());
  if (stat == "sum" || stat == "mean") {
    double sum = 0;
    for (double x : v) sum += x;
    return stat == "sum" ? sum : sum / static_cast<double>(v.size());
  }
  std::sort(v.begin(), v.end());
  if (stat == "min") return v.front();
  if (stat == "max") return v.back();
  // p50/p90/p99, as the reports compute them.
  return percentile_sorted(v, std::stod(stat.substr(1)));
}

}  // namespace

std::vector<double> RunState::durations(const std::string& from, const std::string& to) const {
  auto a = series_.find(from + "_s"), b = series_.find(to + "_s");
  if (a == series_.end() || b == series_.end()) return {};
  // Each rank's k-th `from` with its k-th `to`.
  std::map<int, std::vector<double>> starts;
  for (std::size_t i = 0; i < a->second.values.size(); ++i) starts[a->second.ranks[i]].push_back(a->second.values[i]);
  std::map<int, std::size_t> used;
  std::vector<double> out;
  for (std::size_t i = 0; i < b->second.values.size(); ++i) {
    const int r = b->second.ranks[i];
    auto s = starts.find(r);
    std::size_t& k = used[r];
    if (s == starts.end() || k >= s->second.size()) continue;  // an end with no start
    out.push_back(b->second.values[i] - s->second[k++]);
  }
  return out;
}

std::map<std::string, double> RunState::metrics(const std::vector<MetricDef>& defs,
                                                const MetricNames* names) const {
  std::map<std::string, double> out;
  if (names) {
    // In order into an empty map: each insert at the end, no comparisons.
    for (const std::string& c : names->counters) out.emplace_hint(out.end(), c, 0.0);
  }
  for (const auto& [name, s] : series_) {
    if (!s.values.empty()) out[name] = *std::max_element(s.values.begin(), s.values.end());
  }
  for (const auto& [name, total] : counters_) out[name] = total;
  // Every fault of the plan has its hits, 0 where it was inactive or never bit, so no
  // statistic is taken over only the runs in which it happened to be active.
  for (const std::string* name : fault_names_) {
    double hits = 0;
    for (const kernel::ActiveFault& f : faults_.all()) {
      if (f.name() == *name) hits += static_cast<double>(f.hit_count());
    }
    out["faults." + *name + ".hits"] = hits;
  }
  for (const ModelState* m : created_) m->metrics(out);
  for (const MetricDef& d : defs) {
    std::vector<double> values = d.between.empty() ? std::vector<double>{} : durations(d.between[0], d.between[1]);
    if (d.between.empty()) {
      if (auto it = series_.find(d.of); it != series_.end()) values = it->second.values;
    }
    if (!values.empty()) {
      out[d.name] = statistic(std::move(values), d.stat);
    } else if (d.stat == "count" || d.stat == "sum") {
      out[d.name] = 0;  // no sample: none counted, nothing added
    }
  }
  return out;
}

void RunState::arm_faults(const std::vector<CompiledFault>& faults, int world, int only_rank,
                          const std::vector<char>& disarmed) {
  assert(disarmed.empty() || disarmed.size() == faults.size());
  assert(rank_processes_.size() == static_cast<std::size_t>(world) && "arm_faults REQUIRES set_rank_processes");
  std::vector<const CompiledFault*> started;  // parallel to faults_.all()
  for (std::size_t i = 0; i < faults.size(); ++i) {
    const CompiledFault& f = faults[i];
    if (!disarmed.empty() && disarmed[i]) {
      counters_["faults." + f.name] += 0;
      fault_names_.push_back(&f.name);
      continue;
    }
    kernel::RandomStream arming = sim_.stream("fault/" + f.name);
    double active = 0;
    for (int r = 0; r < world; ++r) {
      if (!f.on.contains(r)) continue;
      // Always draw, so a probability of 1 and of 0.99 consume the stream alike. A fault that
      // may or may not strike is a choice on the run's tape (its default the draw); one that
      // always or never does is none.
      const bool drawn = arming.uniform01() < f.probability;
      const bool on = f.probability > 0 && f.probability < 1 ? sim_.decide_fault(drawn) : drawn;
      if (!on || (only_rank >= 0 && r != only_rank)) continue;
      // Views into the compiled plan, which outlives the run.
      kernel::ActiveFault a(f.name, f.kind->name, r, sim_.stream("fault/" + f.name + "/" + std::to_string(r)));
      for (const auto& [kind, name] : f.aims) a.aim(kind, name);
      // An argument's draw is a draw choice like a step's (draw.h).
      for (const auto& [arg, d] : f.args) {
        a.set_arg(arg, [d = &d, sim = &sim_](kernel::RandomStream& rng, int rank) { return draw(*d, rng, rank, *sim); });
      }
      a.set_firing(f.fires, f.times == 0 ? ~std::uint64_t{0} : f.times);
      faults_.add(std::move(a));
      started.push_back(&f);
      ++active;
    }
    counters_["faults." + f.name] += active;
    fault_names_.push_back(&f.name);
  }
  for (std::size_t i = 0; i < started.size(); ++i) {
    if (FaultStartFn start = started[i]->kind->start) {
      kernel::ActiveFault& a = faults_.all()[i];
      // A fault that acts once, when it starts (a crash), has that one site.
      if (!faults_.fires(a)) continue;
      start(a, {sim_, *this, rank_processes_.at(static_cast<std::size_t>(a.rank()))});
    }
  }
}

bool RunState::check_on(const std::string& name) const {
  const CheckInfo* info = builtin_registry().find_check(name);
  assert(info && "a check reported by a step or model must be registered");
  if (info == nullptr || info->hard) return true;
  return !checks_ || checks_->empty() || std::find(checks_->begin(), checks_->end(), name) != checks_->end();
}

void RunState::fail_and_halt(std::string check, std::string diagnosis) {
  if (fail(std::move(check), std::move(diagnosis))) sim_.sleep_for(kernel::kTimeMax);  // the run is stopping
}

bool RunState::fail(std::string check, std::string diagnosis) {
  if (!check_on(check)) {
    add("ignored." + check, 1);
    return false;
  }
  if (failure_) return true;
  sim_.trace_timeline('i', "failure", check + ": " + diagnosis);
  failure_ = Failure{std::move(check), diagnosis};
  sim_.stop(std::move(diagnosis));
  return true;
}

}  // namespace racesim::scenario
