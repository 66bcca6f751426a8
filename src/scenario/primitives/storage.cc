// The storage family (see storage.h): its primitives, conditions, fault kinds and checks;
// register_storage_family lists them.
#include "src/scenario/execute/draw.h"
#include "src/scenario/primitives/storage.h"

#include "sim/kernel/bytes.h"
#include "src/scenario/compile/compiler.h"
#include "src/scenario/compile/registry.h"
#include "src/scenario/execute/interpreter.h"
#include "sim/storage/faults.h"
#include "sim/storage/tree_ops.h"
#include "sim/runtime/model_loader.h"

#include <cmath>
#include <cstdio>

namespace racesim::scenario {

std::string fs_error_text(storage::FsError e) {
  // The model fails an operation with EIO or ENOSPC (kNoSpace) only where a fault bit.
  const bool injected = e == storage::FsError::kIo || e == storage::FsError::kNoSpace;
  if (e == storage::FsError::kDiskFull) return "ENOSPC (the mount's capacity is used up)";
  return std::string(storage::to_string(e)) + (injected ? " (injected fault)" : "");
}

namespace {

using kernel::Time;
using storage::FsError;

std::uint64_t to_bytes(double b) { return b <= 0 ? 0 : static_cast<std::uint64_t>(b); }

// Why a path resolved to no file system, naming the mounts there are.
std::string no_mount(const RankContext& ctx) {
  std::string mounts;
  for (const MountSpec& m : ctx.run.platform().mounts) {
    mounts += (mounts.empty() ? "" : ", ") + (m.mount.empty() ? "/" : m.mount);
  }
  return "no mount holds this path (platform.storage mounts: " + (mounts.empty() ? std::string("none") : mounts) + ")";
}

// A failed open's or read's error as diagnoses print it.
std::string message_text(const std::string& message) {
  return message == "EIO" ? fs_error_text(FsError::kIo) : message;
}

// The base of every storage step: resolves a path to its mount and reports errors with the
// step's location. Faults bite inside the file-system model (sim/storage/faults.h).
struct FsStep : Step {
  [[noreturn]] void raise(const RankContext& ctx, const std::string& op, const std::string& path,
                          const std::string& error) const {
    raise_step_error(ctx, *this, "no_io_errors", op + " " + path + ": " + error);
  }
  // The mount that holds `path`; a path on no mount fails the step.
  StorageRuntime::Target begin(RankContext& ctx, const std::string& op, const std::string& path) const {
    StorageRuntime::Target t = ctx.run.model<StorageRuntime>().at(path, ctx.rank);
    if (!t.fs) raise(ctx, op, path, no_mount(ctx));
    return t;
  }
  void check(const RankContext& ctx, const std::string& op, const std::string& path, FsError e) const {
    if (e != FsError::kOk) raise(ctx, op, path, fs_error_text(e));
  }
  // A file-tree operation's first failure (sim/storage/tree_ops.h), as the other errors read.
  void check(const RankContext& ctx, const storage::TreeResult& r) const {
    if (!r) return;
    raise(ctx, r->op, r->path,
          r->error != FsError::kOk ? fs_error_text(r->error) : r->read ? message_text(r->message) : r->message);
  }
};

// ENOSPC on a mount whose capacity is used up, saying how full it is.
std::string disk_full_text(const storage::Files& fs, std::uint64_t written) {
  return "ENOSPC after " + kernel::format_bytes(written) + " (" + fs.name() + " is full: " +
         kernel::format_bytes(fs.used()) + " of " + kernel::format_bytes(fs.config().capacity) + ")";
}

// Writes `bytes` to an open file (writer_stall and enospc faults act inside the model's write).
void write_bytes(const FsStep& step, RankContext& ctx, const std::string& path,
                 StorageRuntime::OpenFile& f, std::uint64_t bytes) {
  std::uint64_t written = 0;
  const FsError e = f.fs->write(f.fd, bytes, &written);
  f.written += written;
  if (e == FsError::kNoSpace) {
    step.raise(ctx, "write", path, "ENOSPC after " + kernel::format_bytes(written) + " (injected fault)");
  }
  if (e == FsError::kDiskFull) step.raise(ctx, "write", path, disk_full_text(*f.fs, written));
  step.check(ctx, "write", path, e);
}

std::optional<storage::OpenMode> open_mode(const Value& node, Compiler& c) {
  if (!node) return storage::OpenMode::kTruncate;
  const std::string v = node.is_scalar() ? node.scalar() : "";
  if (v == "truncate") return storage::OpenMode::kTruncate;
  if (v == "exclusive") return storage::OpenMode::kExclusive;
  if (v == "keep") return storage::OpenMode::kKeep;
  if (v == "append") return storage::OpenMode::kAppend;
  c.error(c.at(node), "mode: expected truncate (O_CREAT|O_TRUNC), exclusive (O_CREAT|O_EXCL), keep "
                      "(O_CREAT) or append");
  return std::nullopt;
}

// A path on the platform's storage: every rank's path must be on a mount (a located error
// here, not a failure in every seed), and a program with storage steps records the mounts'
// counters (0 on a mount it never touched).
std::optional<Text> fs_path(Compiler& c, const Value& node, const std::string& what) {
  auto t = c.text(node, what);
  const Platform* platform = c.platform();
  if (!t || !platform) return t;
  const int world = c.scenario().ranks;
  // A path that begins with a listing's (a path already) is checked when the step runs.
  for (int r = 0; r < (t->is_literal() ? 1 : t->starts_with_text_local() ? 0 : world); ++r) {
    // A path a local completes ("/ckpt/${name}") is checked up to its last '/' before the local
    // (every name under a mounted directory is on a mount); the rest when the step runs.
    std::string p = t->fixed_prefix(r);
    if (t->uses_locals()) p = p.substr(0, p.rfind('/') + 1) + "x";
    if (p.empty() || p[0] != '/') {
      if (t->uses_locals()) p = node.scalar();
      c.error(c.at(node), what + ": '" + p + "' is not an absolute path");
      return std::nullopt;
    }
    if (!platform->mount_for(p)) {
      std::string mounts;
      for (const MountSpec& m : platform->mounts) mounts += (mounts.empty() ? "" : ", ") + (m.mount.empty() ? "/" : m.mount);
      c.error(c.at(node), what + ": '" + p + "' is on no mount (platform.storage mounts: " +
                              (mounts.empty() ? std::string("none") : mounts) + ")");
      return std::nullopt;
    }
  }
  StorageRuntime::declare_counters(c);
  return t;
}

// A path argument: PATH, or the map's `path` key.
std::optional<Text> path_arg(const Value& args, Compiler& c, std::string_view what) {
  return fs_path(c, args.is_map() ? args["path"] : args, std::string(what) + " path");
}

// ---- create / write / fsync / close / write_file / append ----

struct CreateStep final : FsStep {
  Text path;
  // "PATH (180MiB)": the size when it is fixed, else its distribution.
  std::string describe(const RankContext& ctx) const override {
    if (text) return path.resolve(ctx) + " (\"" + text->resolve(ctx) + "\")";
    if (!write) return path.resolve(ctx);
    return path.resolve(ctx) + " (" + (size.is_constant() ? format_quantity(size.a, Unit::kBytes) : size.describe()) + ")";
  }
  Distribution size = Distribution::constant(0, Unit::kBytes);
  std::optional<Text> text;  // write_text: the file holds this text (its size)
  storage::OpenMode mode = storage::OpenMode::kTruncate;
  bool write = false;  // write_file / append: also write `size` bytes and close
  bool fsync = false;
  void run(RankContext& ctx) const override {
    const std::string p = path.resolve(ctx);
    auto& files = ctx.run.model<StorageRuntime>().open_files();
    if (files.count({ctx.rank, p})) raise(ctx, "open", p, "already open on this rank");
    const auto t = begin(ctx, "open", p);
    std::string body;
    if (text) body = text->resolve(ctx);
    const std::uint64_t bytes = text ? body.size() : to_bytes(draw(size, ctx));
    auto fd = t.fs->create(p, t.client, ctx.rank, mode, bytes);
    if (!fd) raise(ctx, "open", p, message_text(fd.message()));
    if (text) t.fs->set_text(*fd, std::move(body));
    StorageRuntime::OpenFile f{t.fs, *fd, bytes, 0};
    if (!write) {
      files[{ctx.rank, p}] = f;
      return;
    }
    files[{ctx.rank, p}] = f;  // until closed, so a crash mid-write releases it
    write_bytes(*this, ctx, p, files[{ctx.rank, p}], bytes);
    if (fsync) check(ctx, "fsync", p, t.fs->fsync(*fd));
    check(ctx, "close", p, t.fs->close(*fd));
    files.erase({ctx.rank, p});
  }
};

std::unique_ptr<Step> compile_create(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"path", "size", "mode"}, {"path"}, "create")) return nullptr;
  auto s = std::make_unique<CreateStep>();
  auto p = fs_path(c, args["path"], "create path");
  auto m = open_mode(args["mode"], c);
  if (args["size"]) {
    auto d = c.quantity(args["size"], Unit::kBytes, "create size");
    if (!d) return nullptr;
    s->size = *d;
  }
  if (!p || !m) return nullptr;
  s->path = *p;
  s->mode = *m;
  return s;
}

std::unique_ptr<Step> compile_write_file(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"path", "size", "mode", "fsync"}, {"path", "size"}, "write_file")) return nullptr;
  auto s = std::make_unique<CreateStep>();
  auto p = fs_path(c, args["path"], "write_file path");
  auto m = open_mode(args["mode"], c);
  auto d = c.quantity(args["size"], Unit::kBytes, "write_file size");
  auto f = c.flag(args["fsync"], "write_file fsync", false);
  if (!p || !m || !d || !f) return nullptr;
  s->path = *p;
  s->mode = *m;
  s->size = *d;
  s->fsync = *f;
  s->write = true;
  return s;
}

std::unique_ptr<Step> compile_write_text(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"path", "text", "mode", "fsync"}, {"path", "text"}, "write_text")) return nullptr;
  auto s = std::make_unique<CreateStep>();
  auto p = fs_path(c, args["path"], "write_text path");
  auto m = open_mode(args["mode"], c);
  auto t = c.text(args["text"], "write_text text");
  auto f = c.flag(args["fsync"], "write_text fsync", false);
  if (!p || !m || !t || !f) return nullptr;
  if (*m == storage::OpenMode::kAppend) {
    c.error(c.at(args["mode"]), "write_text mode: truncate, exclusive or keep (a text is written whole)");
    return nullptr;
  }
  s->path = *p;
  s->mode = *m;
  s->text = *t;
  s->fsync = *f;
  s->write = true;
  return s;
}

// ---- move (shutil.move) ----

// On one mount, a rename. Across mounts, what shutil.move does: a copy (each file read from the
// source and written to the target, with a stat and an exists check each; a directory's tree
// made first), then the source removed (each file unlinked, each directory removed, deepest
// first). A crash part way leaves what it got to: copied files on both sides.
struct MoveStep final : FsStep {
  Text from, to;
  std::string describe(const RankContext& ctx) const override { return from.resolve(ctx) + " -> " + to.resolve(ctx); }
  void run(RankContext& ctx) const override {
    const std::string p = from.resolve(ctx), q = to.resolve(ctx);
    const auto src = begin(ctx, "move", p);
    const auto dst = ctx.run.model<StorageRuntime>().at(q, ctx.rank);
    if (!dst.fs) raise(ctx, "move", q, no_mount(ctx));  // (checked when compiled)
    check(ctx, storage::move(ctx.sim, {*src.fs, src.client}, {*dst.fs, dst.client}, p, q, ctx.rank));
  }
};

std::unique_ptr<Step> compile_move(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"from", "to"}, {"from", "to"}, "move")) return nullptr;
  auto from = fs_path(c, args["from"], "move from");
  auto to = fs_path(c, args["to"], "move to");
  if (!from || !to) return nullptr;
  auto s = std::make_unique<MoveStep>();
  s->from = *from;
  s->to = *to;
  return s;
}

// ---- pack (tar) ----

// `tar cf TO -C FROM .`, then with `remove` the source removed (`rm -r FROM`): every file under
// FROM read (a listing per directory, an open and the bytes each), one archive written to TO
// (any mount: a 512-byte header per member) that counts its members as files, so what never
// reached shared storage is counted in files either way. A torn member makes a torn archive.
struct PackStep final : FsStep {
  Text from, to;
  bool remove = false;
  std::string describe(const RankContext& ctx) const override { return from.resolve(ctx) + " -> " + to.resolve(ctx); }
  void run(RankContext& ctx) const override {
    const std::string p = from.resolve(ctx), q = to.resolve(ctx);
    const auto src = begin(ctx, "pack", p);
    const auto dst = begin(ctx, "pack", q);
    check(ctx, storage::pack({*src.fs, src.client}, {*dst.fs, dst.client}, p, q, ctx.rank, remove));
  }
};

// ---- rmtree (shutil.rmtree) ----

// Every file under DIR unlinked, every directory removed (deepest first), then DIR itself.
struct RmtreeStep final : FsStep {
  Text path;
  std::string describe(const RankContext& ctx) const override { return path.resolve(ctx); }
  void run(RankContext& ctx) const override {
    const std::string p = path.resolve(ctx);
    const auto t = begin(ctx, "rmtree", p);
    check(ctx, storage::remove_tree({*t.fs, t.client}, p));
  }
};

std::unique_ptr<Step> compile_rmtree(const Value& args, const Location&, Compiler& c) {
  auto p = fs_path(c, args, "rmtree path");
  if (!p) return nullptr;
  auto s = std::make_unique<RmtreeStep>();
  s->path = *p;
  return s;
}

std::unique_ptr<Step> compile_pack(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"from", "to", "remove"}, {"from", "to"}, "pack")) return nullptr;
  auto from = fs_path(c, args["from"], "pack from");
  auto to = fs_path(c, args["to"], "pack to");
  auto remove = c.flag(args["remove"], "pack remove", false);
  if (!from || !to || !remove) return nullptr;
  auto s = std::make_unique<PackStep>();
  s->from = *from;
  s->to = *to;
  s->remove = *remove;
  return s;
}

std::unique_ptr<Step> compile_append(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"path", "bytes"}, {"path", "bytes"}, "append")) return nullptr;
  auto s = std::make_unique<CreateStep>();
  auto p = fs_path(c, args["path"], "append path");
  auto d = c.quantity(args["bytes"], Unit::kBytes, "append bytes");
  if (!p || !d) return nullptr;
  s->path = *p;
  s->size = *d;
  s->mode = storage::OpenMode::kAppend;
  s->write = true;
  return s;
}

struct OpenFileStep final : FsStep {
  enum class Op : std::uint8_t { kWrite, kFsync, kClose };
  Op op = Op::kWrite;
  Text path;
  std::optional<Distribution> bytes;  // write: default, the rest of the file's size
  std::string describe(const RankContext& ctx) const override { return path.resolve(ctx); }
  void run(RankContext& ctx) const override {
    const std::string p = path.resolve(ctx);
    const char* name = op == Op::kWrite ? "write" : op == Op::kFsync ? "fsync" : "close";
    auto& files = ctx.run.model<StorageRuntime>().open_files();
    auto it = files.find({ctx.rank, p});
    if (it == files.end()) raise(ctx, name, p, "not open on this rank (create it first)");
    begin(ctx, name, p);
    StorageRuntime::OpenFile& f = it->second;
    switch (op) {
      case Op::kWrite: {
        const std::uint64_t n = bytes ? to_bytes(draw(*bytes, ctx))
                                      : (f.size > f.written ? f.size - f.written : 0);
        write_bytes(*this, ctx, p, f, n);
        return;
      }
      case Op::kFsync:
        check(ctx, name, p, f.fs->fsync(f.fd));
        return;
      case Op::kClose: {
        const FsError e = f.fs->close(f.fd);
        files.erase({ctx.rank, p});
        check(ctx, name, p, e);
        return;
      }
    }
  }
};

template <OpenFileStep::Op kOp>
std::unique_ptr<Step> compile_open_file_op(const Value& args, const Location&, Compiler& c) {
  auto s = std::make_unique<OpenFileStep>();
  s->op = kOp;
  const char* what = kOp == OpenFileStep::Op::kWrite ? "write" : kOp == OpenFileStep::Op::kFsync ? "fsync" : "close";
  if (args.is_map()) {
    if (kOp == OpenFileStep::Op::kWrite ? !c.keys(args, {"path", "bytes"}, {"path"}, what)
                                        : !c.keys(args, {"path"}, {"path"}, what)) {
      return nullptr;
    }
    if (args["bytes"]) {
      auto d = c.quantity(args["bytes"], Unit::kBytes, "write bytes");
      if (!d) return nullptr;
      s->bytes = *d;
    }
  }
  auto p = path_arg(args, c, what);
  if (!p) return nullptr;
  s->path = *p;
  return s;
}

// ---- mkdir / unlink / rename / copy / read ----

struct PathOpStep final : FsStep {
  enum class Op : std::uint8_t { kMkdir, kUnlink, kRename, kCopy, kRead };
  Op op = Op::kMkdir;
  Text path, to;
  std::string describe(const RankContext& ctx) const override {
    return op == Op::kRename || op == Op::kCopy ? path.resolve(ctx) + " -> " + to.resolve(ctx) : path.resolve(ctx);
  }
  bool parents = false;   // mkdir: create missing parents too (os.makedirs)
  bool exist_ok = false;  // mkdir: an existing directory is not an error
  void run(RankContext& ctx) const override {
    const std::string p = path.resolve(ctx);
    switch (op) {
      case Op::kMkdir: {
        const auto t = begin(ctx, "mkdir", p);
        check(ctx, "mkdir", p, t.fs->makedirs(p, t.client, parents, exist_ok));
        return;
      }
      case Op::kUnlink: {
        const auto t = begin(ctx, "unlink", p);
        check(ctx, "unlink", p, t.fs->unlink(p, t.client));
        return;
      }
      case Op::kRename:
      case Op::kCopy: {
        const std::string q = to.resolve(ctx);
        const char* name = op == Op::kRename ? "rename" : "copy";
        const auto t = begin(ctx, name, p);
        const auto dst = ctx.run.model<StorageRuntime>().at(q, ctx.rank);
        if (dst.fs != t.fs) {
          // A rename stays on its mount (EXDEV, as rename(2)); a copy crosses, as cp does.
          if (op == Op::kRename) raise(ctx, name, p + " -> " + q, "EXDEV (not on the same mount)");
          if (!dst.fs) raise(ctx, name, q, no_mount(ctx));  // (checked when compiled)
          check(ctx, storage::copy_file(ctx.sim, {*t.fs, t.client}, {*dst.fs, dst.client}, p, q, ctx.rank));
          return;
        }
        check(ctx, name, p + " -> " + q,
              op == Op::kRename ? t.fs->rename(p, q, t.client) : t.fs->copy(p, q, t.client, ctx.rank));
        return;
      }
      case Op::kRead: {
        const auto t = begin(ctx, "read", p);
        if (const auto r = t.fs->read(p, t.client); !r) raise(ctx, "read", p, message_text(r.message()));
        return;
      }
    }
  }
};

template <PathOpStep::Op kOp>
std::unique_ptr<Step> compile_path_op(const Value& args, const Location&, Compiler& c) {
  auto s = std::make_unique<PathOpStep>();
  s->op = kOp;
  if (kOp == PathOpStep::Op::kRename || kOp == PathOpStep::Op::kCopy) {
    const char* what = kOp == PathOpStep::Op::kRename ? "rename" : "copy";
    if (!c.keys(args, {"from", "to"}, {"from", "to"}, what)) return nullptr;
    auto from = fs_path(c, args["from"], std::string(what) + " from");
    auto to = fs_path(c, args["to"], std::string(what) + " to");
    if (!from || !to) return nullptr;
    s->path = *from;
    s->to = *to;
    return s;
  }
  const char* what = kOp == PathOpStep::Op::kMkdir ? "mkdir" : kOp == PathOpStep::Op::kUnlink ? "unlink" : "read";
  if (kOp == PathOpStep::Op::kMkdir && args.is_map()) {
    if (!c.keys(args, {"path", "parents", "exist_ok"}, {"path"}, "mkdir")) return nullptr;
    auto parents = c.flag(args["parents"], "mkdir parents", false);
    auto exist_ok = c.flag(args["exist_ok"], "mkdir exist_ok", false);
    if (!parents || !exist_ok) return nullptr;
    s->parents = *parents;
    s->exist_ok = *exist_ok;
  } else if (args.is_map() && !c.keys(args, {"path"}, {"path"}, what)) {
    return nullptr;
  }
  auto p = path_arg(args, c, what);
  if (!p) return nullptr;
  s->path = *p;
  return s;
}

// ---- lock / unlock ----

struct LockStep final : FsStep {
  Text path;
  std::string describe(const RankContext& ctx) const override { return path.resolve(ctx); }
  bool unlock = false;
  bool exclusive = true;
  bool blocking = true;
  Time timeout = kernel::kTimeMax;
  void run(RankContext& ctx) const override {
    const std::string p = path.resolve(ctx);
    const char* name = unlock ? "unlock" : exclusive ? "flock(LOCK_EX)" : "flock(LOCK_SH)";
    const auto t = begin(ctx, name, p);
    if (unlock) {
      check(ctx, name, p, t.fs->unlock(p, t.client));
      return;
    }
    ctx.sim.trace_record('B', "flock", p);
    ctx.sim.trace_annotate([&] { return std::string("{\"op\":\"") + name + "\",\"blocking\":" + (blocking ? "true" : "false") + "}"; });
    const FsError e = t.fs->lock(p, t.client, exclusive, blocking, timeout);
    ctx.sim.trace_record('E', "flock", p);
    ctx.sim.trace_annotate([&] { return std::string("{\"result\":\"") + storage::to_string(e) + "\"}"; });
    check(ctx, name, p, e);
  }
};

std::unique_ptr<Step> compile_lock(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"path", "mode", "blocking", "timeout"}, {"path", "mode"}, "lock")) return nullptr;
  auto s = std::make_unique<LockStep>();
  auto p = fs_path(c, args["path"], "lock path");
  const Value m = args["mode"];
  const std::string mode = m.is_scalar() ? m.scalar() : "";
  if (mode != "shared" && mode != "exclusive") {
    c.error(c.at(m), "lock mode: expected shared (LOCK_SH) or exclusive (LOCK_EX)");
    return nullptr;
  }
  auto b = c.flag(args["blocking"], "lock blocking", true);
  if (args["timeout"]) {
    auto t = c.fixed_duration(args["timeout"], "lock timeout");
    if (!t) return nullptr;
    s->timeout = *t;
  }
  if (!p || !b) return nullptr;
  s->path = *p;
  s->exclusive = mode == "exclusive";
  s->blocking = *b;
  return s;
}

std::unique_ptr<Step> compile_unlock(const Value& args, const Location&, Compiler& c) {
  auto p = fs_path(c, args, "unlock");
  if (!p) return nullptr;
  auto s = std::make_unique<LockStep>();
  s->path = *p;
  s->unlock = true;
  return s;
}

// ---- load_model ----

// Reads a model file and checks what it read, as aclmdlLoadFromFile would find out
// (sim/runtime/model_loader.h): a torn file fails the check model_loads_intact. With `validate`
// (a length and checksum trailer the writer appends), a torn read is detected and retried every
// `retry` until `timeout`.
struct LoadModelStep final : FsStep {
  Text path;
  std::string describe(const RankContext& ctx) const override { return path.resolve(ctx); }
  bool validate = false;
  Distribution retry = Distribution::constant(200.0 * kernel::kMillisecond, Unit::kDuration);
  Time timeout = 300 * kernel::kSecond;
  void run(RankContext& ctx) const override {
    const std::string p = path.resolve(ctx);
    const auto t = begin(ctx, "load_model", p);
    runtime::ModelLoadOptions o;
    o.validate = validate;
    o.timeout = timeout;
    o.retry_delay = [&] { return draw_time(retry, ctx); };
    o.count = [&ctx](const char* counter) { ctx.run.add(counter, 1); };
    const runtime::ModelLoad load = runtime::load_model(ctx.sim, *t.fs, t.client, p, o);
    const std::string rank = "rank " + std::to_string(ctx.rank);
    switch (load.outcome) {
      case runtime::ModelLoad::Outcome::kLoaded:
        return;
      case runtime::ModelLoad::Outcome::kReadError:
        raise(ctx, "load_model", p, message_text(load.error));
      case runtime::ModelLoad::Outcome::kTorn:
        // With the check off the rank goes on with a broken model, as the real one would.
        ctx.run.fail_and_halt("model_loads_intact", rank + " loaded " + p + " at " + seconds_text(load.read_at) +
                                                        ": " + runtime::describe_torn_read(load.last) + " (" +
                                                        where_text(where) + ")");
        return;
      case runtime::ModelLoad::Outcome::kStillTorn:
        ctx.run.fail_and_halt("model_loads_intact", rank + ": " + p + " still fails validation after " +
                                                        kernel::format_duration(timeout) + " (last: " +
                                                        runtime::describe_torn_read(load.last) + ") (" +
                                                        where_text(where) + ")");
        return;
    }
  }
};

std::unique_ptr<Step> compile_load_model(const Value& args, const Location&, Compiler& c) {
  auto s = std::make_unique<LoadModelStep>();
  if (args.is_map()) {
    if (!c.keys(args, {"path", "validate", "retry", "timeout"}, {"path"}, "load_model")) return nullptr;
    auto v = c.flag(args["validate"], "load_model validate", false);
    if (!v) return nullptr;
    s->validate = *v;
    if (args["retry"]) {
      auto d = c.quantity(args["retry"], Unit::kDuration, "load_model retry");
      if (!d) return nullptr;
      s->retry = *d;
    }
    if (args["timeout"]) {
      auto t = c.fixed_duration(args["timeout"], "load_model timeout");
      if (!t) return nullptr;
      s->timeout = *t;
    }
  }
  auto p = path_arg(args, c, "load_model");
  if (!p) return nullptr;
  for (const char* counter : runtime::kModelLoadCounters) c.declare_counter(counter);
  s->path = *p;
  return s;
}

// ---- wait_size_stable ----

// Polls the file's size until it exists and has not changed for `polls` consecutive polls
// (the heuristic some loaders use instead of a completion signal).
struct SizeStableStep final : FsStep {
  Text path;
  std::string describe(const RankContext& ctx) const override { return path.resolve(ctx); }
  std::int64_t polls = 3;
  Distribution interval = Distribution::constant(200.0 * kernel::kMillisecond, Unit::kDuration);
  Time timeout = 300 * kernel::kSecond;
  void run(RankContext& ctx) const override {
    const std::string p = path.resolve(ctx);
    const Time start = ctx.sim.now();
    std::int64_t same = 0;
    std::optional<std::uint64_t> last;
    // Bounded by the timeout: each poll sleeps at least 1 ns.
    while (ctx.sim.now() - start < timeout) {
      const auto t = begin(ctx, "stat", p);
      const storage::FileView v = t.fs->stat(p, t.client);
      check(ctx, "stat", p, v.error);
      if (v.exists && last && *last == v.size) {
        if (++same >= polls) return;
      } else {
        same = 0;
      }
      last = v.exists ? std::optional<std::uint64_t>(v.size) : std::nullopt;
      ctx.sim.sleep_for(std::max<Time>(1, draw_time(interval, ctx)));
    }
    raise(ctx, "wait_size_stable", p, "size not stable after " + kernel::format_duration(timeout));
  }
};

std::unique_ptr<Step> compile_size_stable(const Value& args, const Location&, Compiler& c) {
  if (!c.keys(args, {"path", "polls", "interval", "timeout"}, {"path", "interval"}, "wait_size_stable")) {
    return nullptr;
  }
  auto s = std::make_unique<SizeStableStep>();
  auto p = fs_path(c, args["path"], "wait_size_stable path");
  auto i = c.quantity(args["interval"], Unit::kDuration, "wait_size_stable interval");
  if (!p || !i) return nullptr;
  if (args["polls"]) {
    auto n = c.count(args["polls"], 1, 1'000'000, "wait_size_stable polls");
    if (!n) return nullptr;
    s->polls = *n;
  }
  if (args["timeout"]) {
    auto t = c.fixed_duration(args["timeout"], "wait_size_stable timeout");
    if (!t) return nullptr;
    s->timeout = *t;
  }
  s->path = *p;
  s->interval = *i;
  return s;
}

}  // namespace

// ---- file conditions ----

std::string FileCondition::describe(const RankContext& ctx) const {
  switch (kind) {
    case Kind::kExists: return "exists " + path.resolve(ctx);
    case Kind::kGlob: return "glob " + path.resolve(ctx);
    case Kind::kText: return "text " + path.resolve(ctx) + " == " + equals.resolve(ctx);
  }
  return "";
}

bool FileCondition::eval(RankContext& ctx, const char** cache) const {
  std::string scratch;
  const std::string& p = path.resolve(ctx, scratch);
  StorageRuntime::Target t = ctx.run.model<StorageRuntime>().at(p, ctx.rank);
  if (!t.fs) raise_step_error(ctx, where, "no_io_errors", p + ": " + no_mount(ctx));
  storage::FsError error = storage::FsError::kOk;
  bool found = false;
  if (kind == Kind::kExists) {
    const storage::FileView v = t.fs->stat(p, t.client);
    if (cache) *cache = storage::to_string(t.fs->last_cache_use());
    error = v.error;
    found = v.exists;
  } else if (kind == Kind::kGlob) {
    found = t.fs->any(p, t.client, false, &error);
    if (cache) *cache = storage::to_string(t.fs->last_cache_use());
  } else {
    // The text the file holds as this client reads it; a file that does not exist holds none.
    const auto r = t.fs->read(p, t.client);
    if (!r && r.message() != "ENOENT") {
      raise_step_error(ctx, where, "no_io_errors", "read " + p + ": " + message_text(r.message()));
    }
    found = r && r->text() == equals.resolve(ctx);
  }
  if (error != storage::FsError::kOk) {
    raise_step_error(ctx, where, "no_io_errors",
                     std::string(kind == Kind::kExists ? "stat " : "list ") + p + ": " + fs_error_text(error));
  }
  return found;
}

// ---- for_each over a listing ----

namespace {

struct ListingLoopStep final : FsStep {
  bool container() const override { return true; }
  Text pattern;
  int path_slot = 0;    // the text local V
  int index_slot = -1;  // the number local I, when asked for
  StepList body;
  std::string describe(const RankContext& ctx) const override { return pattern.resolve(ctx); }
  void run(RankContext& ctx) const override {
    const std::string p = pattern.resolve(ctx);
    StorageRuntime::Target t = begin(ctx, "list", p);
    FsError error = FsError::kOk;
    const std::vector<std::string> paths = t.fs->list(p, t.client, false, &error);
    check(ctx, "list", p, error);
    if (paths.size() > static_cast<std::size_t>(Compiler::kMaxIterations)) {
      raise(ctx, "list", p, std::to_string(paths.size()) + " names, more than the " +
                                std::to_string(Compiler::kMaxIterations) + " a for_each takes");
    }
    for (std::size_t i = 0; i < paths.size(); ++i) {
      ctx.sim.spend(1);  // as repeat: a body that never blocks still ends at limits.events
      ctx.text_local(path_slot) = paths[i];
      if (index_slot >= 0) ctx.local(index_slot) = static_cast<double>(i);
      run_steps(body, ctx);
    }
  }
};

}  // namespace

std::unique_ptr<Step> compile_listing_loop(const Value& args, Compiler& c) {
  if (!c.keys(args, {"var", "listing", "index", "do"}, {"var", "listing", "do"}, "for_each")) return nullptr;
  auto pattern = fs_path(c, args["listing"], "for_each listing");
  if (!pattern) return nullptr;
  auto s = std::make_unique<ListingLoopStep>();
  s->pattern = *pattern;
  // V and I belong to the loop's steps only.
  c.push_scope({});
  struct Pop {
    Compiler& c;
    ~Pop() { c.pop_scope(); }
  } pop{c};
  const auto var = c.declare_local(args["var"], Unit::kNumber, true, "for_each var");
  if (!var) return nullptr;
  s->path_slot = var->slot;
  if (const Value i = args["index"]) {
    const auto index = c.declare_local(i, Unit::kCount, false, "for_each index");
    if (!index) return nullptr;
    s->index_slot = index->slot;
  }
  auto body = c.steps(args["do"], "for_each do");
  if (!body) return nullptr;
  s->body = std::move(*body);
  return s;
}

// ---- registration ----

void register_storage_family(Registry& r) {
  r.add_check({"model_loads_intact", false, "every model a rank loads is whole (not torn, not changed while read)"});
  r.add_check({"no_io_errors", false, "no storage operation fails (ENOENT, EEXIST, EIO, ENOSPC, a lock, a path on no mount)"});
  r.add_faults(storage::fault_kinds());
  // Every storage primitive has a live meaning (add_live): racesim live runs it on a real
  // directory (src/live/real_files.h). Appended bytes carry no content identity (O_APPEND,
  // zeros): a file appended to is longer than its writer meant, so load_model judges it not
  // whole, as the model does.
  r.add_live({"create",
         "create: {path: P, size: BYTES, mode: truncate|exclusive|keep|append} - open P for "
         "writing (size: the length the writer means to write)",
         compile_create});
  r.add_live({"write", "write: PATH | {path: P, bytes: BYTES} - write to a file this rank created (default: the rest of its size)",
         compile_open_file_op<OpenFileStep::Op::kWrite>});
  r.add_live({"fsync", "fsync: PATH - flush a file this rank has open to the server",
         compile_open_file_op<OpenFileStep::Op::kFsync>});
  r.add_live({"close", "close: PATH - close a file this rank has open (nfs: flushes it)",
         compile_open_file_op<OpenFileStep::Op::kClose>});
  r.add_live({"write_file",
         "write_file: {path: P, size: BYTES, mode: truncate|exclusive|keep, fsync: false} - "
         "create, write and close",
         compile_write_file});
  r.add_live({"write_text",
         "write_text: {path: P, text: TEXT, mode: truncate|exclusive|keep, fsync: false} - write a small text "
         "file (a `latest` pointer, a done marker's step); `if: {text: {path: P, equals: TEXT}}` reads it",
         compile_write_text});
  r.add_live({"move",
         "move: {from: P, to: Q} - shutil.move: a rename on one mount; across mounts a copy of each file "
         "(stat, read, write) then the source removed",
         compile_move});
  r.add_live({"append", "append: {path: P, bytes: BYTES} - append to an existing file and close it",
         compile_append});
  r.add_live({"mkdir", "mkdir: PATH | {path: P, parents: true, exist_ok: true} - create a directory: EEXIST if it "
         "exists, ENOENT if its parent does not (parents and exist_ok: as os.makedirs)",
         compile_path_op<PathOpStep::Op::kMkdir>});
  r.add_live({"pack",
         "pack: {from: DIR, to: FILE, remove: false} - tar: every file under DIR read and written as one archive "
         "FILE (a 512 B header each); remove: then the source removed",
         compile_pack});
  r.add_live({"rmtree", "rmtree: DIR - shutil.rmtree: every file under DIR unlinked, every directory removed", compile_rmtree});
  r.add_live({"unlink", "unlink: PATH - remove a name", compile_path_op<PathOpStep::Op::kUnlink>});
  r.add_live({"rename", "rename: {from: P, to: Q} - atomically move a file or directory over Q",
         compile_path_op<PathOpStep::Op::kRename>});
  r.add_live({"copy", "copy: {from: P, to: Q} - cp: read P and write it whole to Q, on one mount or across two", compile_path_op<PathOpStep::Op::kCopy>});
  r.add_live({"read", "read: PATH - read the whole file as this rank sees it", compile_path_op<PathOpStep::Op::kRead>});
  r.add_live({"lock",
         "lock: {path: P, mode: shared|exclusive, blocking: true, timeout: DURATION} - flock(2)",
         compile_lock});
  r.add_live({"unlock", "unlock: PATH - release this rank's flock", compile_unlock});
  r.add_live({"load_model",
         "load_model: PATH | {path: P, validate: false, retry: 200ms, timeout: 300s} - read a "
         "model file; a torn one fails model_loads_intact (validate: detect and retry)",
         compile_load_model});
  r.add_live({"wait_size_stable",
         "wait_size_stable: {path: P, polls: 3, interval: DURATION, timeout: 300s} - poll until "
         "the size stops changing",
         compile_size_stable});
}

}  // namespace racesim::scenario
