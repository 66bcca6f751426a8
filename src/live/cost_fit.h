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
// A call's cost also depends on what runs beside it (copies at once share the node's memory), so
// where the runs counted each copy's company (Board::begin_copy) a call alone gives the line and
// the calls beside others what copies at once share.
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
  double seconds_mean = 0;  // the calls' mean cost (fitted or not)
  double running_mean = 0;  // of calls beside others: how many ran at once, on average (CostSums::running)
  // The line through 0 (a rate and no fixed part, as the model's fsync costs its bytes at the
  // disk's rate): sum(bytes^2) / sum(bytes x seconds), by least squares; 0 when the calls moved
  // no bytes or took no time. Set whether `fitted` or not (one size gives it).
  double origin_bytes_per_s = 0;
};

// The least-squares line of `s`'s seconds on its bytes. REQUIRES: s.count >= 1.
// - A text's (mean size under kTextBytesMax): the mean as the fixed part, no rate.
// - Sizes that do not vary (their spread under 5% of their mean): not fitted; a fixed part and a
//   rate cannot be told apart with one size.
// - A time that falls with the bytes: not fitted.
// - A line that crosses 0 below no bytes: no fixed part, and the rate of the mean size.
CostLine fit_cost_line(const storage::CostSums& s);

// The rate each copy of a kind gets while others run beside it, and what they share: from the
// calls beside others (`beside`) against the line of those that ran alone (`alone`): what they
// took more than that line gives at their mean size, on their bytes (rate_beside, calibrate.h),
// times how many ran at once on average (the most during each, at most one per CPU), as the
// model's copies at once share read_shared_bandwidth (reads) or bandwidth (writes) among those
// running. REQUIRES: alone.fitted with a rate, beside.count >= 1.
struct SharedRate {
  double extra_s = 0;         // what a call beside others took more than the line alone (>= 0)
  double each_bytes_per_s = 0;
  double bytes_per_s = 0;     // each_bytes_per_s x beside.running_mean
};
SharedRate fit_shared_rate(const CostLine& alone, const CostLine& beside);

// Each kind's sums (storage::kCostKinds' names, and kQuietReads).
using CostSumsByKind = std::map<std::string, storage::CostSums>;

// The kind cost_sums_of adds where the runs recorded reads amid writes (read_amid_writes, a part
// of read_alone): the reads alone that no write ran beside either, read_alone's sums less
// read_amid_writes'.
inline constexpr const char* kQuietReads = "read_quiet";

// Mount `mount`'s sums of each kind, summed over `records`; and, when `by_program` is given, the
// same sums of each program apart (keyed "POINT / STRATEGY", or the strategy where the runs have
// no sweep point). False, with `error` naming the seed, when a record holds some of a kind's
// fields but not all, or a value that cannot be (a negative count or size, sums that no set of
// calls gives, reads amid writes that are not a part of the reads alone). Adds kQuietReads where
// some run recorded read_amid_writes and reads alone remain without them.
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
// Where the runs counted each copy's company (the kinds read_alone, read_beside, write_alone,
// write_beside), a read's or write's fixed part and rate come from the calls that ran alone, and
// the rate copies at once share from those beside others (fit_shared_rate): read_shared_bandwidth,
// and bandwidth (tmpfs) or page_cache_bandwidth (`write_back`). Where they also counted the reads
// amid writes (read_amid_writes), a read's line comes from the reads that had no copy at all
// beside them (kQuietReads), and the rate of a read amid writes from those
// (read_amid_writes_bandwidth: fit_shared_rate with one running). The line of all calls holds what
// running beside others cost: with a sharing of copies at once on top (the calibration's, from
// copies it ran at once), copies at once would pay it twice. Where the calls alone cannot give a
// line (none, too few, one size), the line of all calls stands and the sharing is set to take no
// more than it gives (its rate x those at once); where neither gives a line, the calibration's
// stand. The comments say which.
//
// Where the runs timed their fsyncs (the kinds sync, sync_alone, sync_beside) on a file system that
// writes back (`write_back`), the disk's rates as they met them: disk_stream_bandwidth, one fsync's
// rate, from the line through 0 of those alone (of all, where none ran alone), and client_bandwidth
// and bandwidth (the node's and the mount's, one disk), what fsyncs at once share, from those beside
// others (each one's rate x how many ran at once), at least one's rate. The model's fsync costs the file's dirty bytes at those rates (and a metadata
// operation, a few microseconds here), so a rate and no fixed part; the live syncs all of one size
// (the cache race's files) could not give a fixed part anyway. Without write-back (tmpfs) an fsync
// has no disk to wait for: nothing is set.
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
