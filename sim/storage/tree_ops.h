// File-tree operations over any mount (storage::Files), built from the mount's own operations, so
// they mean the same on the model and on a real directory (live mode): shutil.move, tar with an
// optional removal of the source (pack), and shutil.rmtree. Each stops at the first operation
// that fails and says which (TreeFailure); what was done before it stays done, as a crash part
// way leaves it: copied files on both sides, a half-removed tree.
//
// Costs are the operations' own (each stat, listing, open, byte and unlink as the mount charges
// it); nothing here adds time. All functions REQUIRE a simulated process (as every Files
// operation does).
#pragma once

#include <optional>
#include <string>

#include "sim/kernel/simulation.h"
#include "sim/storage/files.h"

namespace racesim::storage {

// The operation that failed: its name ("stat", "read", "unlink", ...) and path ("P" or "P -> Q"),
// and why: the mount's error, or (when that is kOk) a message: a read's error as the mount gave
// it (`read` true), or what the operation found ("ENOENT", "EEXIST (the target exists)").
struct TreeFailure {
  std::string op;
  std::string path;
  FsError error = FsError::kOk;
  std::string message;
  bool read = false;
};
using TreeResult = std::optional<TreeFailure>;  // nullopt: done

// A mount as one client (node) sees it.
struct Mount {
  Files& fs;
  int client;
};

// `cp from to` across mounts (shutil.copyfile): the file read on `src` and written whole to `dst`
// (truncating, keeping the source's content identity: a copy of a torn file is torn), traced as a
// "copy" slice on `sim`. On one mount, Files::copy is the same operation.
TreeResult copy_file(kernel::Simulation& sim, Mount src, Mount dst, const std::string& from, const std::string& to,
                     int rank);

// shutil.move(from, to). On one mount (`&src.fs == &dst.fs`) a rename. Across mounts a copy,
// then the source removed: the source stat'ed (ENOENT if absent), the target must not exist;
// a file is read and written (traced as a "copy" slice on `sim`) and unlinked; a directory's
// tree is made on the target first, each file stat'ed and copied, then every file unlinked and
// every directory removed, deepest first. `rank` is the writer the copies carry.
TreeResult move(kernel::Simulation& sim, Mount src, Mount dst, const std::string& from, const std::string& to, int rank);

// `tar cf TO -C FROM .`: every file under FROM read (a listing per directory, an open and the
// bytes each) and written to TO as one archive (Files::write_archive), then with `remove` the
// source removed as remove_tree does.
TreeResult pack(Mount src, Mount dst, const std::string& from, const std::string& to, int rank, bool remove);

// shutil.rmtree(dir): every file under DIR unlinked, every directory removed (deepest first),
// then DIR itself.
TreeResult remove_tree(Mount m, const std::string& dir);

}  // namespace racesim::storage
