// The Ascend PyTorch profiler (torch_npu.profiler) as the profiler flush storm needs it
// (the Ascend note on flushing profile data to shared storage at scale): its schedule, the trace a rank records, the files
// a flush writes (raw data, then the analysis's results) and the analysis's CPU time. Where the
// files go and how they reach shared storage is the on_trace_ready handler, which scenarios
// compose from storage primitives (src/scenario/primitives/profiler.cc binds this model).
//
// Schedule (torch.profiler.schedule, which torch_npu.profiler.schedule mirrors): steps are
// numbered from 0 by prof.step(); the first skip_first are not profiled, then cycles of wait
// (idle), warmup (tracing, discarded) and active (recorded) steps, `repeat` cycles (0: for ever).
// The last active step of a cycle is RECORD_AND_SAVE: at the prof.step() that ends it, the
// trace stops and on_trace_ready runs, synchronously, inside the caller's training step. The
// seed's schedule (skip_first 1, wait 0, warmup 0, active 2, repeat 1) records steps 1 and 2 and
// flushes at the end of step 2.
//
// Files (Ascend PyTorch Profiler user guide, "result directory": {worker}_{timestamp}_ascend_pt
// holding profiler_info_{rank}.json, profiler_metadata.json, FRAMEWORK/ (the framework's raw
// data), PROF_{id}/ (the CANN collector's raw data: host/data and device_{id}/data, sliced into
// many files) and, after analysis, ASCEND_PROFILER_OUTPUT/). The raw volume of a trace is split
// 10% FRAMEWORK (6 files), 10% host (8 slices), 80% device (`device_slices` slices); metadata and
// info files are 4 KiB. The analysis (analyse_flag / prof.analyse) reads every raw file back and
// writes, with export_type text, 12 JSON and CSV files and 2 databases (trace_view.json about the
// raw volume, kernel_details.csv 15%, the databases 50% and 20%, the rest small), with export_type
// db only ascend_pytorch_profiler_{rank}.db (50%) and analysis.db (5%). Its CPU time is the raw
// volume over `analysis_rate` plus `analysis_fixed`. These proportions are this model's
// assumptions (the guide names the files, not their sizes); the volume per recorded step is the
// scenario's parameter.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/kernel/time.h"

namespace racesim::runtime {

struct ProfilerSchedule {
  int skip_first = 0;
  int wait = 0;
  int warmup = 0;
  int active = 1;  // >= 1
  int repeat = 0;  // cycles; 0: for ever
  enum class Action : std::uint8_t { kNone, kWarmup, kRecord, kRecordAndSave };
  // The action of step `step` (0-based), as torch.profiler.schedule computes it.
  Action action(int step) const;
};

// One rank's profiler across prof.step() calls.
class Profiler {
 public:
  explicit Profiler(ProfilerSchedule s) : schedule_(s) {}
  // prof.step() at the end of the current step, which traced `bytes` if it was recorded (the
  // caller samples the volume whether or not, so draws do not depend on the schedule). Returns
  // true when the trace is ready: on_trace_ready runs now, on trace_bytes().
  bool step(std::uint64_t bytes);
  int step_num() const { return step_num_; }
  std::uint64_t trace_bytes() const { return ready_bytes_; }   // of the last trace made ready
  int trace_steps() const { return ready_steps_; }
  int traces() const { return traces_; }                       // traces made ready so far

 private:
  ProfilerSchedule schedule_;
  int step_num_ = 0;
  std::uint64_t recording_bytes_ = 0;
  int recording_steps_ = 0;
  std::uint64_t ready_bytes_ = 0;
  int ready_steps_ = 0;
  int traces_ = 0;
};

enum class ExportType : std::uint8_t { kText, kDb };

struct ProfileFile {
  std::string path;  // relative to the trace's directory ("PROF_000001/device_3/data/...")
  std::uint64_t bytes = 0;
};

struct ProfileLayout {
  int device_slices = 48;                   // raw device data files per trace
  double analysis_rate = 100e6;             // bytes of raw data parsed per second
  kernel::Time analysis_fixed = 2 * kernel::kSecond;
};

// The trace's directory name under the handler's dir: "rank{R}_ascend_pt" (the guide's
// {worker_name}_{timestamp}_ascend_pt with the rank as worker and no timestamp, so that names are
// deterministic).
std::string trace_dir(int rank);
// Its subdirectories, parents first.
std::vector<std::string> raw_dirs(int rank);
// The raw data of a trace of `raw_bytes` on rank `rank` (its bytes sum to raw_bytes, plus 4 KiB
// per metadata file).
std::vector<ProfileFile> raw_files(const ProfileLayout& layout, int rank, std::uint64_t raw_bytes);
// The analysis's results (under ASCEND_PROFILER_OUTPUT/).
std::vector<ProfileFile> result_files(int rank, std::uint64_t raw_bytes, ExportType type);
// The analysis's CPU time for `raw_bytes`.
kernel::Time analysis_time(const ProfileLayout& layout, std::uint64_t raw_bytes);

}  // namespace racesim::runtime
