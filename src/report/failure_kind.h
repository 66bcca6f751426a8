// What failed in a run, as a kind that runs of another seed or another side share: the check
// that failed and where, in the terms both a model and a live run can state. A live run sees bytes
// where the model sees writers (a read across a truncation is "holding no model" live and "read
// while the file was truncated or rewritten" in the model), and a live hang is a timeout where the
// model names a deadlock; so every hang is one kind (kHang), and a diagnosis that names files is of
// the kind "CHECK: FILES [ERRNO] (LOCATION)": "rank 8 loaded /ckpt/step1/shard1.pt at 26.7 s: 48
// MiB of 64 MiB written by rank 1 (x.yaml:46:40)" is "model_loads_intact: /ckpt/step1/shard1.pt
// (x.yaml:46:40)", as every failed load of shard 1 at that step is, whoever loaded it, however much
// it read and however it tore. Any other diagnosis keeps its words, with the run's own figures
// masked (mask_figures). Two sides whose failure rates differ can then be told apart by where they
// fail (the side-by-side report's "Where the runs failed").
#pragma once

#include <string>

#include "src/run/runner.h"

namespace racesim::report {

// `diagnosis` with each figure replaced by "_": a number that stands alone (at the start, or
// after a space, '(', '[' or '#'), with its unit where one follows (ns, us, ms, s, B, KiB, MiB,
// GiB, TiB, KB, MB, GB, %, x: "26.7 s", "1836s", "0 B" alike), and a list of them ("0-4,7",
// "1, 2, 3") as one. A number inside a word or a path ("shard1.pt", "'saved1'", "yaml:46:40",
// "fsdp{0-7}") is kept. Bounded: one pass over the text.
std::string mask_figures(const std::string& diagnosis);

// The kind of a run that deadlocked or ran into its time limit.
inline constexpr const char* kHang = "hang: a deadlock, or still running at the time limit";

// The kind of a failed run, as above: kHang for a deadlock or a timeout; else CHECK (the outcome's
// name where no check is named), then the paths the diagnosis names (words that begin with '/'),
// the error codes among its words
// ("ENOENT"), and its last parenthesized "FILE:LINE:COLUMN"; or, naming no path, its whole text
// with mask_figures; a line break in it is a space, so that a kind is one line. REQUIRES:
// run::failed(r.outcome).
std::string failure_kind(const run::RunRecord& r);

}  // namespace racesim::report
