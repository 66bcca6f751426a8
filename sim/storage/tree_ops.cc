// File-tree operations over any mount (tree_ops.h).
#include "sim/storage/tree_ops.h"

#include <cassert>
#include <vector>

namespace racesim::storage {
namespace {

TreeResult failed(std::string op, std::string path, FsError e) {
  if (e == FsError::kOk) return std::nullopt;
  return TreeFailure{std::move(op), std::move(path), e, {}, false};
}

TreeResult said(std::string op, std::string path, std::string message, bool read = false) {
  return TreeFailure{std::move(op), std::move(path), FsError::kOk, std::move(message), read};
}

// Unlinks `files`, then removes `dirs` deepest first (they come sorted, parents first), then `top`.
TreeResult remove_listed(Mount m, const std::vector<std::string>& dirs, const std::vector<std::string>& files,
                         const std::string& top) {
  for (const std::string& f : files) {
    if (auto r = failed("unlink", f, m.fs.unlink(f, m.client))) return r;
  }
  for (auto d = dirs.rbegin(); d != dirs.rend(); ++d) {
    if (auto r = failed("rmdir", *d, m.fs.rmdir(*d, m.client))) return r;
  }
  return failed("rmdir", top, m.fs.rmdir(top, m.client));
}

}  // namespace

TreeResult copy_file(kernel::Simulation& sim, Mount src, Mount dst, const std::string& p, const std::string& q,
                     int rank) {
  sim.trace_record('B', "copy", p + " -> " + q);
  const auto r = src.fs.read(p, src.client);
  if (!r) return said("read", p, r.message(), true);
  if (auto f = failed("copy", p + " -> " + q, dst.fs.write_copy(q, dst.client, rank, *r))) return f;
  sim.trace_record('E', "copy", p + " -> " + q);
  sim.trace_annotate([&] { return "{\"bytes\":" + std::to_string(r->bytes) + ",\"intact\":" + (r->intact() ? "true" : "false") + "}"; });
  return std::nullopt;
}

TreeResult move(kernel::Simulation& sim, Mount src, Mount dst, const std::string& from, const std::string& to,
                int rank) {
  if (&src.fs == &dst.fs) return failed("rename", from + " -> " + to, src.fs.rename(from, to, src.client));
  const FileView v = src.fs.stat(from, src.client);
  if (auto r = failed("stat", from, v.error)) return r;
  if (!v.exists) return said("move", from, "ENOENT");
  if (dst.fs.stat(to, dst.client).exists) return said("move", from + " -> " + to, "EEXIST (the target exists)");
  if (!v.dir) {
    if (auto r = copy_file(sim, src, dst, from, to, rank)) return r;
    return failed("unlink", from, src.fs.unlink(from, src.client));
  }
  std::vector<std::string> dirs, files;
  if (auto r = failed("list", from, src.fs.tree(from, src.client, dirs, files))) return r;
  if (auto r = failed("mkdir", to, dst.fs.mkdir(to, dst.client))) return r;
  for (const std::string& d : dirs) {
    assert(d.compare(0, from.size(), from) == 0 && "a tree lists paths under its root");
    const std::string target = to + d.substr(from.size());
    if (auto r = failed("mkdir", target, dst.fs.mkdir(target, dst.client))) return r;
  }
  for (const std::string& f : files) {
    if (auto r = failed("stat", f, src.fs.stat(f, src.client).error)) return r;
    if (auto r = copy_file(sim, src, dst, f, to + f.substr(from.size()), rank)) return r;
  }
  return remove_listed(src, dirs, files, from);
}

TreeResult pack(Mount src, Mount dst, const std::string& from, const std::string& to, int rank, bool remove) {
  std::vector<std::string> dirs, files;
  if (auto r = failed("list", from, src.fs.tree(from, src.client, dirs, files))) return r;
  std::vector<ReadResult> members;
  members.reserve(files.size());
  for (const std::string& f : files) {
    auto r = src.fs.read(f, src.client);
    if (!r) return said("read", f, r.message(), true);
    members.push_back(*r);
  }
  if (auto r = failed("pack", to, dst.fs.write_archive(to, dst.client, rank, members))) return r;
  if (!remove) return std::nullopt;
  return remove_listed(src, dirs, files, from);
}

TreeResult remove_tree(Mount m, const std::string& dir) {
  std::vector<std::string> dirs, files;
  if (auto r = failed("list", dir, m.fs.tree(dir, m.client, dirs, files))) return r;
  return remove_listed(m, dirs, files, dir);
}

}  // namespace racesim::storage
