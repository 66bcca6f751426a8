#include "sim/runtime/profiler.h"

#include <cassert>

#include <cmath>

namespace racesim::runtime {

ProfilerSchedule::Action ProfilerSchedule::action(int step) const {
  if (step < skip_first) return Action::kNone;
  step -= skip_first;
  const int cycle = wait + warmup + active;
  if (repeat > 0 && step / cycle >= repeat) return Action::kNone;
  const int mod = step % cycle;
  if (mod < wait) return Action::kNone;
  if (mod < wait + warmup) return Action::kWarmup;
  return mod < cycle - 1 ? Action::kRecord : Action::kRecordAndSave;
}

bool Profiler::step(std::uint64_t bytes) {
  const ProfilerSchedule::Action a = schedule_.action(step_num_);
  ++step_num_;
  if (a == ProfilerSchedule::Action::kRecord || a == ProfilerSchedule::Action::kRecordAndSave) {
    recording_bytes_ += bytes;
    ++recording_steps_;
  }
  if (a != ProfilerSchedule::Action::kRecordAndSave) return false;
  ready_bytes_ = recording_bytes_;
  ready_steps_ = recording_steps_;
  recording_bytes_ = 0;
  recording_steps_ = 0;
  ++traces_;
  return true;
}

namespace {
constexpr std::uint64_t kSmall = 4096;

std::uint64_t share(std::uint64_t total, double fraction) {
  assert(fraction >= 0 && fraction <= 1 && "a file's share of the raw data is a fraction");
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(total) * fraction));
}

// `n` slices named PREFIX.0 ... of `bytes` in all (the remainder in the last).
void slices(std::vector<ProfileFile>& out, const std::string& prefix, int n, std::uint64_t bytes) {
  const auto each = bytes / static_cast<std::uint64_t>(n);
  for (int i = 0; i < n; ++i) {
    const std::uint64_t b = i + 1 < n ? each : bytes - each * static_cast<std::uint64_t>(n - 1);
    out.push_back({prefix + ".slice_" + std::to_string(i), b});
  }
}
}  // namespace

std::string trace_dir(int rank) { return "rank" + std::to_string(rank) + "_ascend_pt"; }

std::vector<std::string> raw_dirs(int rank) {
  const std::string dev = "PROF_000001/device_" + std::to_string(rank);
  return {"FRAMEWORK", "PROF_000001", "PROF_000001/host", "PROF_000001/host/data", dev, dev + "/data"};
}

std::vector<ProfileFile> raw_files(const ProfileLayout& layout, int rank, std::uint64_t raw_bytes) {
  std::vector<ProfileFile> out;
  const std::string r = std::to_string(rank);
  out.push_back({"profiler_info_" + r + ".json", kSmall});
  out.push_back({"profiler_metadata.json", kSmall});
  const std::uint64_t fw = share(raw_bytes, 0.10), host = share(raw_bytes, 0.10);
  const std::uint64_t device = raw_bytes - fw - host;
  const char* framework[] = {"torch.op_range", "torch.op_mark", "torch.memory_usage", "torch.python_tracer_func",
                             "torch.python_tracer_hash", "torch.gc_record"};
  for (int i = 0; i < 6; ++i) {
    const std::uint64_t b = i < 5 ? fw / 6 : fw - fw / 6 * 5;
    out.push_back({std::string("FRAMEWORK/") + framework[i], b});
  }
  out.push_back({"PROF_000001/host/info.json", kSmall});
  slices(out, "PROF_000001/host/data/host_runtime.data", 8, host);
  const std::string dev = "PROF_000001/device_" + r;
  out.push_back({dev + "/info.json." + r, kSmall});
  out.push_back({dev + "/sample.json", kSmall});
  slices(out, dev + "/data/ts_track.data." + r, layout.device_slices, device);
  return out;
}

std::vector<ProfileFile> result_files(int rank, std::uint64_t raw_bytes, ExportType type) {
  const std::string dir = "ASCEND_PROFILER_OUTPUT/";
  const std::string r = std::to_string(rank);
  if (type == ExportType::kDb) {
    return {{dir + "ascend_pytorch_profiler_" + r + ".db", share(raw_bytes, 0.50)},
            {dir + "analysis.db", share(raw_bytes, 0.05)}};
  }
  return {{dir + "trace_view.json", raw_bytes},
          {dir + "kernel_details.csv", share(raw_bytes, 0.15)},
          {dir + "operator_details.csv", share(raw_bytes, 0.05)},
          {dir + "operator_memory.csv", share(raw_bytes, 0.02)},
          {dir + "memory_record.csv", share(raw_bytes, 0.01)},
          {dir + "communication.json", share(raw_bytes, 0.02)},
          {dir + "communication_matrix.json", share(raw_bytes, 0.01)},
          {dir + "op_statistic.csv", 64 << 10},
          {dir + "api_statistic.csv", 64 << 10},
          {dir + "npu_module_mem.csv", 16 << 10},
          {dir + "step_trace_time.csv", kSmall},
          {dir + "data_preprocess.csv", kSmall},
          {dir + "ascend_pytorch_profiler_" + r + ".db", share(raw_bytes, 0.50)},
          {dir + "analysis.db", share(raw_bytes, 0.20)}};
}

kernel::Time analysis_time(const ProfileLayout& layout, std::uint64_t raw_bytes) {
  return kernel::add_time(layout.analysis_fixed, kernel::transfer_time(static_cast<double>(raw_bytes), layout.analysis_rate));
}

}  // namespace racesim::runtime
