// Runs compiled programs over seeds: (sweep point, strategy) programs x seeds on a thread pool,
// each simulation on one thread, results in a fixed order (program, then seed) whatever the
// number of threads. The same seeds are used for every strategy and point, so comparisons are
// paired.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/kernel/policy.h"
#include "sim/kernel/trace.h"
#include "src/scenario/compile/compiler.h"

namespace racesim::run {

enum class Outcome : std::uint8_t { kPass, kFail, kDeadlock, kTimeout, kError };
const char* to_string(Outcome o);
inline bool failed(Outcome o) { return o != Outcome::kPass; }

struct RunRecord {
  std::string strategy;
  std::string point;  // the sweep point's label ("" without a sweep)
  std::uint64_t seed = 0;
  Outcome outcome = Outcome::kPass;
  std::string check;      // the failed check (empty on pass)
  std::string diagnosis;  // one line
  kernel::Time makespan = 0;
  std::uint64_t events = 0;
  std::map<std::string, double> metrics;
  std::uint64_t trace_hash = 0;  // 0 in a live run (no simulated trace)
  // "" for a simulated run; "live" for a run on real processes (racesim live, src/live/).
  std::string mode;
  // With RunOptions::record_choices: every choice the run made (sim/kernel/tape.h). Never
  // written to results files.
  std::vector<kernel::Choice> tape = {};
  // By process id, with the tape or the event log (which name processes by id).
  std::vector<std::string> process_names = {};
  // With RunOptions::log_events: one stamp per dispatched event; a stamp's site is the
  // scenario::Step its process was running (the program outlives the record).
  kernel::EventLog event_log = {};
  // With log_events and record_choices, what partial-order reduction reads
  // (src/search/reduction.h): the steps each dispatch entered, the owners of each schedule
  // choice's options, and the rank each process acts for (by process id; -1 for none).
  std::vector<kernel::SiteEntry> entered_sites = {};
  kernel::ChoiceOwners choice_owners = {};
  std::vector<int> process_ranks = {};
  // Under a replay policy: where the run left its tape ("" when it followed it to the end).
  std::string replay_divergence = {};
};

// A trace hash as every output prints it: 16 hex digits, leading zeros kept.
std::string trace_hash_text(std::uint64_t hash);

struct RunOptions {
  kernel::PolicySpec policy = kernel::PolicySpec::fifo();
  kernel::TraceLevel trace = kernel::TraceLevel::kHash;
  // Keep the run's tape in RunRecord::tape.
  bool record_choices = false;
  // Keep a stamp per event in RunRecord::event_log (sim/kernel/event_log.h).
  bool log_events = false;
  // Faults of the program's plan left out of the run (RunState::arm_faults): empty, or one entry
  // per CompiledProgram::faults.
  std::vector<char> disarmed_faults = {};
  // Rank r draws from the stream of rank rank_streams[r] (rank_stream_name) instead of its own:
  // how the shrinker removes ranks from a run and keeps what the others drew. Empty: each its
  // own. Other streams (faults, spawned helpers) keep their names. REQUIRES: empty, or one entry
  // >= 0 per rank.
  std::vector<int> rank_streams = {};
  // A rank whose program can run stackless does (scenario/execute/rank_machine.h); false puts
  // every rank on a fiber. The two give the same events and trace hash: tests and benchmarks
  // compare them.
  bool stackless_ranks = true;
};

// The random stream a rank's program draws from: "rankR", and "rankR/restartN" for its restart
// N > 0 after a crash. A live worker (src/live/) uses the same, so a seed samples the same values.
std::string rank_stream_name(int rank, int incarnation = 0);

// Spawns incarnation `incarnation` of rank `rank`'s program in `sim` (0: the first; n > 0: its
// restart n after a crash, named "rank R (restart n)"), drawing from the stream of rank
// `drawn_as` (rank_stream_name). A simulated run spawns every rank so; a live worker its own.
// Stackless (rank_machine.h) when `stackless` is set, the program can run so, the run is
// simulated and its trace is not full; else on a fiber.
kernel::Process* spawn_rank(kernel::Simulation& sim, scenario::RunState& state, const scenario::CompiledProgram& program,
                            int rank, int incarnation, int drawn_as, bool stackless = true);

// One seed of one program. With `chrome_trace` set, the run keeps its full trace and writes it
// there as Chrome Trace Event JSON; with `deadlock_report` set, a deadlock's whole report is
// stored there (the record keeps its first line).
RunRecord run_one(const scenario::CompiledProgram& program, std::uint64_t seed,
                  const RunOptions& options, std::ostream* chrome_trace = nullptr,
                  std::string* deadlock_report = nullptr);

// run_one, with an exception it throws turned into an error record (check "internal"), so a sweep
// or a search goes on.
RunRecord run_one_caught(const scenario::CompiledProgram& program, std::uint64_t seed, const RunOptions& options);

// Runs `worker` on `jobs` threads at once and waits for them (the calling thread runs it when
// jobs is 1 or the system refuses every thread; a refused thread leaves its share to the others).
// REQUIRES: jobs >= 1.
void run_workers(int jobs, const std::function<void()>& worker);

// What a plan holds in memory at once, sized before it starts: every record (kRecordBytes each,
// a generous bound for a record with a dozen metrics) and, per thread, one run of the largest
// program at kRankBytes a rank: the pages of its fiber stack it touches (its 64 KiB are mapped
// without reserve, sim/kernel/stack_pool.h) and its model state. Measured resident per rank at
// 20,000 ranks: 4.4 KiB (publish_race, checkpoint_resume), 4.6 KiB (om_read_while_write), 8.4
// KiB (profiler_flush_storm); 4.5 KiB through a barrier at 10^4 to 10^6 ranks. The sanitizers'
// frames and shadow memory take several times that.
// A rank that runs stackless (scenario/execute/rank_machine.h) has no stack: kStacklessRankBytes
// bounds its process record, its state machine and its model state (measured: 0.68 KiB through
// a barrier, 1.5 KiB with an all_reduce, at 10^5 and 10^6 ranks).
inline constexpr std::uint64_t kRecordBytes = 1024;
#if defined(RACESIM_SANITIZE) || defined(__SANITIZE_ADDRESS__)
inline constexpr std::uint64_t kRankBytes = 64 * 1024;
inline constexpr std::uint64_t kStacklessRankBytes = 16 * 1024;
#else
inline constexpr std::uint64_t kRankBytes = 16 * 1024;
inline constexpr std::uint64_t kStacklessRankBytes = 4 * 1024;
#endif
// What one of `program`'s ranks is sized at: kStacklessRankBytes when its ranks run stackless.
inline std::uint64_t rank_bytes(const scenario::CompiledProgram& program) {
  return program.stackless ? kStacklessRankBytes : kRankBytes;
}
struct WorkSize {
  std::uint64_t runs = 0;
  int jobs = 1;  // the threads run_all will start: plan.jobs, at most one per run
  std::uint64_t ranks = 0;       // of the program whose run needs the most
  std::uint64_t rank_bytes = 0;  // what each of its ranks is sized at (rank_bytes)
  std::uint64_t bytes = 0;
};
// How many of `seeds` seeds shard `index` of `count` runs (those whose offset from the first seed
// is `index` modulo `count`), per program.
std::uint64_t seeds_in_shard(std::uint64_t seeds, int index, int count);
// Whether the seed at index `i` of a run (seed_start + i) is shard index/count's: i % count == index.
bool in_shard(std::uint64_t i, int index, int count);
struct Plan;
WorkSize size_work(const std::vector<const scenario::CompiledProgram*>& programs, const Plan& plan);
// The memory this process can count on: /proc/meminfo's MemAvailable, lowered to the
// address-space limit (ulimit -v) when one is set; 0 when neither can be read.
std::uint64_t memory_budget();

struct Plan {
  std::uint64_t seed_start = 0;
  std::uint64_t seeds = 100;
  int jobs = 1;              // >= 1
  int shard_index = 0;       // this shard runs seeds with (seed - seed_start) % shard_count == index
  int shard_count = 1;
  RunOptions options = {};
  // Called with (runs done, runs in total) as each run ends, from one thread at a time, with
  // `done` increasing (the caller decides how often to show it: cli/progress.h). May be empty.
  std::function<void(std::size_t, std::size_t)> progress = {};
  // Runs to leave out, as (program index, seed): those a resumed results file already holds.
  std::set<std::pair<std::size_t, std::uint64_t>> skip = {};
  // Called with each record as its run finishes (completion order, not run order), from the
  // worker threads, several at once. Returning false stops the plan, as `stop` does, and it is not
  // called again (runs under way still finish and are returned). May be empty.
  std::function<bool(const RunRecord&)> on_record = {};
  // When it becomes true (a signal handler may set it), no further run starts; the runs under way
  // finish and are returned. May be null.
  const std::atomic<bool>* stop = nullptr;
};

// All programs over the plan's seeds, less `skip`. Order: programs in the given order, then seeds
// ascending. A stopped plan returns the runs that finished, in the same order.
std::vector<RunRecord> run_all(const std::vector<const scenario::CompiledProgram*>& programs,
                               const Plan& plan);

}  // namespace racesim::run
