// A mount's costs as live runs paid them (`racesim live --fit-costs`): each kind of read and
// write's fixed part and bytes' rate, fitted by least squares to what the live workers measured
// call by call with their thread CPU clocks (fs.MOUNT.cost.KIND.*: storage::CostSums, summed
// over ranks and runs), written as overrides of the model's mount.
//
// Why: `live --calibrate` measures the same calls in a process of its own, at another moment,
// with the machine otherwise idle, and a cross-validation's rate can turn on a few milliseconds of
// them. On this project's 2-core VM a page fault cost 11-16 us from one process to the next, and
// the calibration's fixed costs (mostly the faults of new buffers) came out 5-25% under what the
// live workers paid for the same calls in the same hour, enough to turn a verdict
// (scenarios/README.md, "Cross-validation"). With the costs measured where the live runs pay
// them, a comparison tests the race and the cores' sharing, not a separate estimate of each call.
//
// Live code: nothing here runs inside a simulation.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/storage/files.h"
#include "src/run/runner.h"

namespace racesim::live {

// Below this mean size a kind is a text's (a pointer, a marker): its cost is its fixed part.
inline constexpr double kTextBytesMax = 64 * 1024;

// One kind's line: a call costs fixed_s + bytes / bytes_per_s (seconds of virtual time, as the
// model's mount takes them).
struct CostLine {
  bool fitted = false;
  std::uint64_t count = 0;  // the calls it is fitted to
  double bytes_mean = 0;    // their mean size
  double fixed_s = 0;
  double fixed_se_s = 0;   // its standard error (0 with too few calls to say)
  double bytes_per_s = 0;  // 0: no rate fitted (a text's, or not fitted)
  std::string note;        // why it is not fitted, or how it was bounded
};

// The least-squares line of `s`'s seconds on its bytes. REQUIRES: s.count >= 1.
// - A text's (mean size under kTextBytesMax): the mean as the fixed part, no rate.
// - Sizes that do not vary (their spread under 5% of their mean): not fitted; a fixed part and a
//   rate cannot be told apart with one size.
// - A time that falls with the bytes: not fitted.
// - A line that crosses 0 below no bytes: no fixed part, and the rate of the mean size.
CostLine fit_cost_line(const storage::CostSums& s);

// Each kind's sums (storage::kCostKinds' names).
using CostSumsByKind = std::map<std::string, storage::CostSums>;

// Mount `mount`'s sums of each kind, summed over `records`; and, when `by_program` is given, the
// same sums of each program apart (keyed "POINT / STRATEGY", or the strategy where the runs have
// no sweep point). False, with `error` naming the seed, when a record holds some of a kind's
// fields but not all, or a value that cannot be (a negative count or size, sums that no set of
// calls gives).
bool cost_sums_of(const std::vector<run::RunRecord>& records, const std::string& mount,
                  CostSumsByKind& out, std::string& error,
                  std::map<std::string, CostSumsByKind>* by_program = nullptr);

// What fit_costs was fitted from, for the override file's comments.
struct CostSource {
  std::string command;      // the command line that made the file
  std::string runs;         // "600 runs of 2 programs (live:scale=0.01:fs=tmpfs)"
  double scale = 1;         // the live runs' time scale: real seconds per virtual second
  bool write_back = false;  // their file system writes back through the page cache
};

// The override file: comments saying what each kind was fitted to and its line in real time,
// then KEY=VALUE lines for platform.storage.MOUNT: file_overhead.KIND for each kind fitted
// (read, text_read, write, text_write), read_bandwidth with the reads' rate, and the writes' rate
// as client_bandwidth (a local mount without a page cache: tmpfs) or
// page_cache_stream_bandwidth (`write_back`). A kind not fitted says why, in a comment, and sets
// nothing: the calibration's value stands.
//
// With `by_program` of two programs or more, the comments also give each kind's mean cost per call
// and per MiB in each program: one line charges a kind's calls alike, where what runs beside a call
// can change its cost (three loads at once cost 27-39% more each than one alone on two hosts of
// this project's VM kind: scenarios/README.md, the checkpoint resume), and a program whose calls
// cost more than the line says is where the model's reads and writes end too soon.
std::string format_cost_overrides(const std::string& mount, const CostSource& source,
                                  const std::map<std::string, CostLine>& lines,
                                  const std::map<std::string, CostSumsByKind>& by_program = {});

}  // namespace racesim::live
