// Calibration of a real directory: see calibrate.h.
#include "src/live/calibrate.h"

#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cassert>
#include <cerrno>
#include <climits>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <latch>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "src/live/fs_type.h"
#include "src/live/live_clock.h"
#include "src/live/real_files.h"

namespace racesim::live {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t ns_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

std::string sys_error(const std::string& call, const std::string& path) {
  return call + " " + path + ": " + std::strerror(errno);
}

// The q-quantile of `v` (sorted in place), nearest rank.
std::int64_t quantile(std::vector<std::int64_t>& v, double q) {
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// Writes `bytes` through `fd` (open on `path`) from its offset as a live run's writer does
// (RealFiles): write(2)s of `block` bytes of writer `writer`'s content, each write's bytes made
// for it, or, when `made` is false, made once before the first (the copy alone). `returned`,
// when given, receives the time each write(2) returned. False with `error` naming the call.
bool write_content(int fd, const std::string& path, std::uint64_t bytes, int writer, std::size_t block, bool made,
                   std::string& error, std::vector<Clock::time_point>* returned = nullptr) {
  std::vector<char> buf(block);
  storage::Content content;
  content.writer = writer;
  content.version = 1;
  content.length = std::max<std::uint64_t>(bytes, kHeaderBytes);
  if (!made) content_bytes(content, 0, buf.data(), buf.size());
  for (std::uint64_t left = bytes; left > 0;) {  // bounded: each pass writes at least one byte
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, buf.size()));
    if (made) content_bytes(content, bytes - left, buf.data(), n);
    const ssize_t w = ::write(fd, buf.data(), n);
    if (w <= 0) {
      error = sys_error("write", path);
      return false;
    }
    if (returned) returned->push_back(Clock::now());
    left -= static_cast<std::uint64_t>(w);
  }
  return true;
}

// Removes `path` if it exists. False with `error` when unlink(2) fails otherwise.
bool remove_if_there(const std::string& path, std::string& error) {
  if (::unlink(path.c_str()) == 0 || errno == ENOENT) return true;
  error = sys_error("unlink", path);
  return false;
}

// Writes `bytes` to `path` as a live run's writer does (RealFiles: each 4 MiB write(2) of the
// content's bytes, made for it), then fsync and close, so the rates are those of the live runs'
// own writes, their making of the bytes included. Returns the nanoseconds taken, or -1 with
// `error`; `cached_ns`, when given, receives the nanoseconds until the last write(2) returned
// (before the fsync).
// A file already at `path` is removed first, untimed: a live run's writer starts a new file, and
// open(O_TRUNC) of a file holding bytes frees its pages before it returns (on this project's VM
// 46 ms for 180 MiB on ext4 after an fsync, a third of the write), which truncate_file times
// on its own.
// `block`, `made`, `returned`: as write_content's; `sync`: false skips the fsync.
std::int64_t write_file(const std::string& path, std::uint64_t bytes, std::string& error,
                        std::int64_t* cached_ns = nullptr, std::size_t block = 4 << 20, bool made = true,
                        bool sync = true, std::vector<Clock::time_point>* returned = nullptr) {
  if (!remove_if_there(path, error)) return -1;
  const auto t0 = Clock::now();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    error = sys_error("open", path);
    return -1;
  }
  if (!write_content(fd, path, bytes, 0, block, made, error, returned)) {
    ::close(fd);
    return -1;
  }
  if (cached_ns) *cached_ns = ns_since(t0);
  if (sync && ::fsync(fd) != 0) {
    error = sys_error("fsync", path);
    ::close(fd);
    return -1;
  }
  if (::close(fd) != 0) {
    error = sys_error("close", path);
    return -1;
  }
  return ns_since(t0);
}

// Writes `bytes` to `path` (write_file, with fsync when `synced`: its bytes on the disk), then
// times open(O_TRUNC) and close of it. Returns the nanoseconds, or -1 with `error`.
std::int64_t truncate_file(const std::string& path, std::uint64_t bytes, std::string& error,
                           bool synced = false) {
  if (write_file(path, bytes, error, nullptr, 4 << 20, true, synced) < 0) return -1;
  const auto t0 = Clock::now();
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC);
  if (fd < 0) {
    error = sys_error("open(O_TRUNC)", path);
    return -1;
  }
  if (::close(fd) != 0) {
    error = sys_error("close", path);
    return -1;
  }
  return ns_since(t0);
}

// Reads `path` whole as a live run's reader does (read_content: each byte checked against its
// content); `cold`: after dropping its pages from the page cache where the file system allows
// it. Returns the nanoseconds taken, or -1 with `error`; `chunk_ns`, when given, receives each
// chunk's time but the first's (which includes the reader's buffers).
std::int64_t read_file(const std::string& path, bool cold, std::string& error,
                       std::vector<std::int64_t>* chunk_ns = nullptr) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  struct stat st {};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    error = sys_error("open", path);
    if (fd >= 0) ::close(fd);
    return -1;
  }
  if (cold) ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);  // advice: tmpfs keeps its pages
  const auto t0 = Clock::now();
  int err = 0;
  auto last = t0;
  bool first = true;
  const auto r = read_content(fd, static_cast<std::uint64_t>(st.st_size), [&] {
    if (chunk_ns == nullptr) return;
    const auto now = Clock::now();
    if (!first) chunk_ns->push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(now - last).count());
    first = false;
    last = now;
  }, &err);
  const std::int64_t ns = ns_since(t0);
  ::close(fd);
  if (!r) {
    errno = err;
    error = sys_error("read", path);
    return -1;
  }
  return ns;
}

// Gives the process's free memory back to the kernel (malloc_trim), so that the next read or write
// allocates its buffers anew and faults their pages in, as a live worker's do: its first read and
// first write, and every load (a load's two 4 MiB buffers, given back when it ends, are more than
// the allocator keeps). Without it the calibration's buffers stay in place between measurements
// and a read's or write's fixed cost is most of 2 ms short on this project's VM.
void fresh_memory() { ::malloc_trim(0); }

// What one process of in_processes says, written to a pipe in one write(2): at most PIPE_BUF
// bytes, so the records of processes writing at once do not interleave.
struct ProcessRecord {
  std::int32_t index = -1;
  std::int32_t ok = 0;
  std::int64_t value[2] = {0, 0};
  char error[200] = {};  // when not ok: why
};
static_assert(sizeof(ProcessRecord) <= PIPE_BUF);

// The work of one process of in_processes: the k-th's, its figures into `value`; false with `why`.
using ProcessWork = std::function<bool(std::size_t k, std::int64_t value[2], std::string& why)>;

// Runs `work` for k = 0 .. n-1, each in a process of its own, all started at once: forked after
// the free memory is given back (fresh_memory), so each one's buffers are new memory, as a live
// worker's are in its first write and every load. Threads of one process would share their
// buffers' pages from round to round (each thread's malloc arena keeps them), so their copies
// would pay no faults, unlike live workers'. Returns each one's figures in `values`, by k; false
// with `error` when one's work fails (its `why`), a process cannot be made, or one dies.
// REQUIRES: 1 <= n <= 64; no other thread runs (fork copies only the caller).
bool in_processes(std::size_t n, const ProcessWork& work, std::vector<std::array<std::int64_t, 2>>& values,
                  std::string& error) {
  assert(n >= 1 && n <= 64 && "in_processes REQUIRES 1 to 64 processes");
  fresh_memory();
  int go[2] = {-1, -1}, results[2] = {-1, -1};
  if (::pipe(go) != 0 || ::pipe(results) != 0) {
    error = std::string("pipe: ") + std::strerror(errno);
    for (const int fd : go) {
      if (fd >= 0) ::close(fd);
    }
    return false;
  }
  std::vector<pid_t> children;
  std::string fork_error;
  for (std::size_t k = 0; k < n; ++k) {
    const pid_t child = ::fork();
    if (child < 0) {
      fork_error = std::string("fork: ") + std::strerror(errno);
      break;
    }
    if (child == 0) {
      ::close(go[1]);
      ::close(results[0]);
      char byte = 0;
      const ssize_t started = ::read(go[0], &byte, 1);  // 0 (end of file) once the parent starts them all
      ProcessRecord r;
      r.index = static_cast<std::int32_t>(k);
      std::string why = "the start signal was lost";
      if (started == 0 && work(k, r.value, why)) {
        r.ok = 1;
      } else {
        std::snprintf(r.error, sizeof r.error, "%s", why.c_str());
      }
      const bool sent = ::write(results[1], &r, sizeof r) == static_cast<ssize_t>(sizeof r);
      ::_exit(sent ? 0 : 1);
    }
    children.push_back(child);
  }
  ::close(go[0]);
  ::close(go[1]);  // every process's read(2) of `go` returns: they start together
  ::close(results[1]);
  std::vector<ProcessRecord> got;
  for (ProcessRecord r; got.size() < children.size() && ::read(results[0], &r, sizeof r) == sizeof r;) got.push_back(r);
  ::close(results[0]);
  bool all_exited = true;
  for (const pid_t p : children) {
    int status = 0;
    if (::waitpid(p, &status, 0) != p || !WIFEXITED(status) || WEXITSTATUS(status) != 0) all_exited = false;
  }
  if (!fork_error.empty()) {  // the processes made were waited for
    error = fork_error;
    return false;
  }
  if (!all_exited || got.size() != n) {
    error = "a measuring process died before it said how its work went";
    return false;
  }
  values.assign(n, {0, 0});
  for (const ProcessRecord& r : got) {
    if (r.ok == 0) {
      error = std::string(r.error, strnlen(r.error, sizeof r.error));
      return false;
    }
    assert(r.index >= 0 && static_cast<std::size_t>(r.index) < n && "a record's index is its process's k");
    values[static_cast<std::size_t>(r.index)] = {r.value[0], r.value[1]};
  }
  return true;
}

// Reads each of `paths` whole (read_file) at once, each in a process of its own (in_processes);
// appends each read's CPU time to `cpu_ns` (its thread's clock, the process's one thread: its
// page faults and copies, as a live worker's read_cpu_s). False with `error` as in_processes.
bool reads_in_processes(const std::vector<std::string>& paths, std::vector<std::int64_t>& cpu_ns,
                        std::string& error) {
  std::vector<std::array<std::int64_t, 2>> values;
  const ProcessWork read = [&paths](std::size_t k, std::int64_t value[2], std::string& why) {
    const std::int64_t t0 = thread_cpu_ns();
    if (read_file(paths[k], false, why) < 0) return false;
    value[0] = thread_cpu_ns() - t0;
    return true;
  };
  if (!in_processes(paths.size(), read, values, error)) return false;
  for (const auto& v : values) cpu_ns.push_back(std::max<std::int64_t>(1, v[0]));
  return true;
}

// Writes `text` into a new file at `path` as a live run's writer does; returns the nanoseconds
// its write(2) took (not the open and close), or -1 with `error`.
std::int64_t write_text_file(const std::string& path, const std::string& text, std::string& error) {
  if (!remove_if_there(path, error)) return -1;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    error = sys_error("open", path);
    return -1;
  }
  const auto t0 = Clock::now();
  const ssize_t w = ::write(fd, text.data(), text.size());
  const std::int64_t ns = ns_since(t0);
  if (w != static_cast<ssize_t>(text.size())) {
    error = sys_error("write", path);
    ::close(fd);
    return -1;
  }
  if (::close(fd) != 0) {
    error = sys_error("close", path);
    return -1;
  }
  return ns;
}

bool measure_metadata(const std::string& dir, int samples, Calibration& c, std::vector<std::int64_t>& all,
                      std::string& error) {
  std::vector<std::int64_t> create, st, ren, unl;
  for (int i = 0; i < samples; ++i) {
    const std::string a = dir + "/m" + std::to_string(i), b = a + ".renamed";
    auto t0 = Clock::now();
    const int fd = ::open(a.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (fd < 0 || ::close(fd) != 0) {
      error = sys_error("open(O_CREAT|O_EXCL)", a);
      return false;
    }
    create.push_back(ns_since(t0));
    struct stat sb {};
    t0 = Clock::now();
    if (::stat(a.c_str(), &sb) != 0) {
      error = sys_error("stat", a);
      return false;
    }
    st.push_back(ns_since(t0));
    t0 = Clock::now();
    if (::rename(a.c_str(), b.c_str()) != 0) {
      error = sys_error("rename", a);
      return false;
    }
    ren.push_back(ns_since(t0));
    t0 = Clock::now();
    if (::unlink(b.c_str()) != 0) {
      error = sys_error("unlink", b);
      return false;
    }
    unl.push_back(ns_since(t0));
  }
  for (auto* v : {&create, &st, &ren, &unl}) all.insert(all.end(), v->begin(), v->end());
  c.create_ns_p50 = quantile(create, 0.5);
  c.stat_ns_p50 = quantile(st, 0.5);
  c.rename_ns_p50 = quantile(ren, 0.5);
  c.unlink_ns_p50 = quantile(unl, 0.5);
  return true;
}

void measure_timer(int samples, Calibration& c) {
  timespec res{};
  ::clock_getres(CLOCK_MONOTONIC, &res);
  c.timer_resolution_ns = static_cast<std::int64_t>(res.tv_sec) * 1'000'000'000 + res.tv_nsec;
  std::vector<std::int64_t> over;
  for (int i = 0; i < samples; ++i) {
    const timespec us{0, 1000};
    const auto t0 = Clock::now();
    ::nanosleep(&us, nullptr);
    over.push_back(std::max<std::int64_t>(0, ns_since(t0) - 1000));
  }
  c.sleep_overshoot_ns_p50 = quantile(over, 0.5);
}

// A decimal number at the start of `text` (after blanks).
std::optional<std::uint64_t> number_in(const std::string& text) {
  std::istringstream in(text);
  std::uint64_t v = 0;
  if (!(in >> v)) return std::nullopt;
  return v;
}

bool is_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-';
  });
}

}  // namespace

bool dirty_limits(const VmFiles& vm, Calibration& c, std::string& error) {
  // The memory that can hold dirty pages (global_dirtyable_memory): free pages and file pages.
  std::uint64_t dirtyable_kib = 0;
  int found = 0;
  std::istringstream lines(vm.meminfo);
  for (std::string line; std::getline(lines, line);) {  // bounded by the text
    for (const char* field : {"MemFree:", "Active(file):", "Inactive(file):"}) {
      if (line.rfind(field, 0) == 0) {
        if (auto v = number_in(line.substr(std::strlen(field)))) {
          dirtyable_kib += *v;
          ++found;
        }
      }
    }
  }
  if (found != 3) {
    error = "/proc/meminfo: expected MemFree, Active(file) and Inactive(file) in kB";
    return false;
  }
  const auto limit = [&](const std::string& bytes, const std::string& ratio, const char* name,
                         std::uint64_t& out) {
    const auto b = number_in(bytes);
    const auto r = number_in(ratio);
    if (!b || !r) {
      error = std::string("/proc/sys/vm/") + name + "_bytes and _ratio: expected numbers";
      return false;
    }
    out = *b > 0 ? *b : dirtyable_kib * 1024 / 100 * *r;
    return true;
  };
  if (!limit(vm.dirty_bytes, vm.dirty_ratio, "dirty", c.dirty_limit_bytes) ||
      !limit(vm.dirty_background_bytes, vm.dirty_background_ratio, "dirty_background", c.dirty_background_bytes)) {
    return false;
  }
  // As domain_dirty_limits: the background threshold stays below the limit.
  if (c.dirty_background_bytes >= c.dirty_limit_bytes) c.dirty_background_bytes = c.dirty_limit_bytes / 2;
  const auto expire = number_in(vm.dirty_expire_centisecs);
  if (!expire) {
    error = "/proc/sys/vm/dirty_expire_centisecs: expected a number";
    return false;
  }
  c.dirty_expire_ns = static_cast<std::int64_t>(*expire) * 10'000'000;
  if (c.dirty_limit_bytes == 0) {
    error = "/proc/sys/vm: the dirty limit works out at 0 bytes";
    return false;
  }
  return true;
}

namespace {

// The size of the turns probe's writes: a live run's 4 MiB, smaller for small files so that
// each writer makes at least 16 writes (and the turns are more than one).
std::size_t write_turns_block(std::uint64_t bytes) {
  return static_cast<std::size_t>(std::clamp<std::uint64_t>(bytes / 16, 4096, 4 << 20));
}

// Two writers, started together (a latch), each writing `bytes` from offset 0 as a live run's
// writer does (write(2)s of write_turns_block bytes made for each), through descriptors of
// their own (O_CREAT without O_TRUNC: the turns, not a truncation, are measured): of one file
// when `paths` names it twice, else of two. Returns the nanoseconds until both were done, or
// -1 with `error`. Of one file, counts over the writes that returned while both still wrote
// which followed one of the same writer (kept) and which one of the other (handed): a write(2)
// returns when its turn at the inode lock ends.
std::int64_t two_writers(const std::string (&paths)[2], std::uint64_t bytes, Calibration& c, std::string& error) {
  for (const std::string& path : paths) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || ::close(fd) != 0) {
      error = sys_error("open", path);
      return -1;
    }
  }
  std::vector<Clock::time_point> done[2];
  std::string errors[2];
  std::latch start(2);
  const auto t0 = Clock::now();
  {
    std::vector<std::thread> writers;
    for (int k = 0; k < 2; ++k) {
      writers.emplace_back([&, k] {
        const std::string& path = paths[k];
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT, 0644);
        if (fd < 0) {
          errors[k] = sys_error("open", path);
          start.count_down();
          return;
        }
        start.arrive_and_wait();
        write_content(fd, path, bytes, k, write_turns_block(bytes), true, errors[k], &done[k]);
        if (::close(fd) != 0 && errors[k].empty()) errors[k] = sys_error("close", path);
      });
    }
    for (auto& t : writers) t.join();
  }
  const std::int64_t ns = ns_since(t0);
  for (const std::string& e : errors) {
    if (!e.empty()) {
      error = e;
      return -1;
    }
  }
  if (paths[0] != paths[1] || done[0].empty() || done[1].empty()) return ns;
  // While both wrote: up to the first of the two last returns.
  const Clock::time_point both = std::min(done[0].back(), done[1].back());
  std::vector<std::pair<Clock::time_point, int>> order;
  for (int k = 0; k < 2; ++k) {
    for (const auto t : done[k]) {
      if (t <= both) order.emplace_back(t, k);
    }
  }
  std::sort(order.begin(), order.end());
  for (std::size_t i = 1; i < order.size(); ++i) {
    ++(order[i].second == order[i - 1].second ? c.write_turns_kept : c.write_turns_handed);
  }
  return ns;
}

}  // namespace

LinearCost fit_two_sizes(std::uint64_t small_bytes, std::int64_t small_ns, std::uint64_t big_bytes,
                         std::int64_t big_ns) {
  assert(0 < small_bytes && small_bytes < big_bytes && small_ns > 0 && big_ns > 0 &&
         "fit_two_sizes REQUIRES two sizes in order and times above 0");
  const double big_rate = static_cast<double>(big_bytes) * 1e9 / static_cast<double>(big_ns);
  if (big_ns <= small_ns) return {0, big_rate};
  const double rate = static_cast<double>(big_bytes - small_bytes) * 1e9 / static_cast<double>(big_ns - small_ns);
  const double fixed = static_cast<double>(small_ns) - static_cast<double>(small_bytes) * 1e9 / rate;
  if (fixed <= 0) return {0, big_rate};
  return {static_cast<std::int64_t>(fixed), rate};
}

double net_of_fixed_costs(double all_bytes_per_s, std::uint64_t bytes, int streams, int cores,
                          std::int64_t fixed_ns) {
  if (fixed_ns <= 0 || all_bytes_per_s <= 0 || streams <= 0) return all_bytes_per_s;
  const double total = static_cast<double>(bytes) * streams;
  const double took_s = total / all_bytes_per_s;
  const int ran_on = cores > 0 ? std::min(streams, cores) : streams;
  const double fixed_s = static_cast<double>(streams) / ran_on * static_cast<double>(fixed_ns) * 1e-9;
  return took_s > fixed_s ? total / (took_s - fixed_s) : all_bytes_per_s;
}

double rate_beside(double alone_bytes_per_s, double bytes, double alone_cpu_s, double beside_cpu_s) {
  assert(alone_bytes_per_s > 0 && bytes > 0 && std::isfinite(alone_cpu_s) && std::isfinite(beside_cpu_s) &&
         "rate_beside REQUIRES a rate, bytes and finite times");
  if (alone_cpu_s <= 0 || beside_cpu_s <= alone_cpu_s) return alone_bytes_per_s;
  return bytes / (bytes / alone_bytes_per_s + (beside_cpu_s - alone_cpu_s));
}

double fit_chunk_jitter(std::vector<std::int64_t> write_chunk_ns, std::vector<std::int64_t> read_chunk_ns) {
  std::vector<double> relative;  // each chunk's time over its kind's median
  for (std::vector<std::int64_t>* kind : {&write_chunk_ns, &read_chunk_ns}) {
    if (kind->empty()) continue;
    const std::int64_t median = std::max<std::int64_t>(1, quantile(*kind, 0.5));
    for (const std::int64_t ns : *kind) relative.push_back(static_cast<double>(ns) / static_cast<double>(median));
  }
  if (relative.size() < 10) return 0;
  std::sort(relative.begin(), relative.end());
  const auto at = [&](double q) { return relative[static_cast<std::size_t>(q * static_cast<double>(relative.size() - 1))]; };
  // Uniform in [1 - j, 1 + j): its 10th and 90th percentiles are 1.6 j apart.
  return std::clamp((at(0.9) - at(0.1)) / 1.6, 0.0, 0.9);
}

bool calibrate(const CalibrateOptions& o, Calibration& out, std::string& error) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(o.dir, ec)) {
    error = "--dir " + o.dir + ": not a directory";
    return false;
  }
  if (!is_name(o.mount)) {
    error = "--mount '" + o.mount + "': expected the name of a mount of the scenario's platform (letters, digits, _ and -)";
    return false;
  }
  if (o.streams < 1 || o.streams > 64 || o.meta_samples < 10 || o.meta_samples > 100'000 ||
      o.timer_samples < 10 || o.timer_samples > 100'000 || o.repeats < 1 || o.repeats > 100 ||
      o.stream_bytes < (1u << 20) ||
      o.stream_bytes > (16ull << 30)) {
    error = "calibration sizes out of range (streams 1-64, samples 10-100000, repeats 1-100, 1 MiB-16 GiB per stream)";
    return false;
  }
  struct statfs sf {};
  if (::statfs(o.dir.c_str(), &sf) != 0) {
    error = sys_error("statfs", o.dir);
    return false;
  }
  out.fs_type = file_system_kind(static_cast<std::uint64_t>(static_cast<std::uint32_t>(sf.f_type)));
  const std::string work = o.dir + "/.racesim-calibrate-" + std::to_string(::getpid());
  if (::mkdir(work.c_str(), 0755) != 0) {
    error = sys_error("mkdir", work);
    return false;
  }
  struct Cleanup {  // the directory goes, whatever happens
    std::string path;
    ~Cleanup() {
      std::error_code e;
      std::filesystem::remove_all(path, e);
    }
  } cleanup{work};

  std::vector<std::int64_t> meta;
  if (!measure_metadata(work, o.meta_samples, out, meta, error)) return false;
  out.meta_latency_ns = quantile(meta, 0.05);
  out.meta_jitter_ns = std::max<std::int64_t>(0, 2 * (quantile(meta, 0.5) - out.meta_latency_ns));

  // One stream, o.repeats times (the medians): the first write of a run often pays for page
  // allocation and the machine is shared.
  const std::string one = work + "/one";
  std::vector<std::int64_t> one_ns, cached_ns, flush_ns, write_chunk_ns, read_chunk_ns;
  for (int i = 0; i < o.repeats; ++i) {
    std::int64_t cached = 0;
    fresh_memory();
    std::vector<Clock::time_point> returned;
    const std::int64_t ns = write_file(one, o.stream_bytes, error, &cached, 4 << 20, true, true, &returned);
    if (ns < 0) return false;
    for (std::size_t k = 1; k < returned.size(); ++k) {  // not the first: it holds the open and the buffer
      write_chunk_ns.push_back(std::chrono::duration_cast<std::chrono::nanoseconds>(returned[k] - returned[k - 1]).count());
    }
    one_ns.push_back(ns);
    cached_ns.push_back(cached);
    flush_ns.push_back(ns - cached);
  }
  const auto rate = [&](std::int64_t ns) {
    return static_cast<double>(o.stream_bytes) * 1e9 / static_cast<double>(std::max<std::int64_t>(1, ns));
  };
  // A median as a time to fit a line through (never 0: fit_two_sizes REQUIRES times above 0).
  const auto median = [](std::vector<std::int64_t>& v) { return std::max<std::int64_t>(1, quantile(v, 0.5)); };
  out.write_one_bytes_per_s = rate(quantile(one_ns, 0.5));
  out.write_back = local_write_back(out.fs_type);
  // The fixed cost per file: an eighth of the bytes, more times (its time is mostly the fixed part
  // and shorter, so noisier).
  const std::uint64_t small_bytes = o.stream_bytes / 8;
  const int small_repeats = 4 * o.repeats;
  const std::string small = work + "/small";
  std::vector<std::int64_t> small_ns, small_cached_ns;
  for (int i = 0; i < small_repeats; ++i) {
    std::int64_t cached = 0;
    fresh_memory();
    const std::int64_t ns = write_file(small, small_bytes, error, &cached);
    if (ns < 0) return false;
    small_ns.push_back(ns);
    small_cached_ns.push_back(cached);
  }
  out.write_cost = out.write_back ? fit_two_sizes(small_bytes, median(small_cached_ns), o.stream_bytes, median(cached_ns))
                                  : fit_two_sizes(small_bytes, median(small_ns), o.stream_bytes, median(one_ns));
  if (out.write_back) {
    out.write_cached_bytes_per_s = rate(quantile(cached_ns, 0.5));
    out.flush_one_bytes_per_s = rate(quantile(flush_ns, 0.5));
    const std::string vm = "/proc/sys/vm/";
    if (!dirty_limits({read_text(vm + "dirty_bytes"), read_text(vm + "dirty_ratio"),
                       read_text(vm + "dirty_background_bytes"), read_text(vm + "dirty_background_ratio"),
                       read_text(vm + "dirty_expire_centisecs"), read_text("/proc/meminfo")},
                      out, error)) {
      return false;
    }
  }
  // A live run reads files soon after they were written: from memory (the page cache, tmpfs).
  // `n` reads of `path`, each with new buffers: their times into `ns`, their chunks' into `chunks`.
  const auto reads = [&](const std::string& path, int n, std::vector<std::int64_t>& ns,
                         std::vector<std::int64_t>* chunks) {
    for (int i = 0; i < n; ++i) {
      fresh_memory();
      const std::int64_t t = read_file(path, false, error, chunks);
      if (t < 0) return false;
      ns.push_back(t);
    }
    return true;
  };
  std::vector<std::int64_t> warm_ns, small_warm_ns;
  if (!reads(one, o.repeats, warm_ns, &read_chunk_ns)) return false;
  out.read_warm_bytes_per_s = rate(quantile(warm_ns, 0.5));
  if (!reads(small, small_repeats, small_warm_ns, nullptr)) return false;
  std::vector<std::int64_t> text_read_ns, text_write_ns;
  const std::string text = work + "/text";
  for (int i = 0; i < small_repeats; ++i) {
    fresh_memory();
    const std::int64_t w = write_text_file(text, "step1", error);
    if (w < 0) return false;
    // As a live reader reads a pointer first or after a load; texts read in a row after that reuse
    // the buffer (about 0.1 ms each on this project's VM).
    fresh_memory();
    const std::int64_t r = read_file(text, false, error);
    if (r < 0) return false;
    text_write_ns.push_back(w);
    text_read_ns.push_back(r);
  }
  out.text_read_ns = quantile(text_read_ns, 0.5);
  out.text_write_ns = quantile(text_write_ns, 0.5);
  out.chunk_jitter = fit_chunk_jitter(write_chunk_ns, read_chunk_ns);
  out.chunk_samples = write_chunk_ns.size() + read_chunk_ns.size();
  out.read_cost = fit_two_sizes(small_bytes, median(small_warm_ns), o.stream_bytes, median(warm_ns));
  const std::int64_t read_ns = read_file(one, true, error);
  if (read_ns < 0) return false;
  out.read_cold_bytes_per_s = rate(read_ns);

  // Truncating a file just written, o.repeats times (the median's rate into `into`; false with
  // `error`): open(O_TRUNC) frees the file's pages before it returns. Without fsync, as a live
  // run's second writer finds the first's bytes; and where a page cache writes back, after an
  // fsync, as a rename replaces a published file: its blocks on the disk go too.
  const auto truncations = [&](bool synced, double& into) {
    std::vector<std::int64_t> ns;
    for (int i = 0; i < o.repeats; ++i) {
      ns.push_back(truncate_file(one, o.stream_bytes, error, synced));
      if (ns.back() < 0) return false;
    }
    into = rate(quantile(ns, 0.5));
    return true;
  };
  if (!truncations(false, out.truncate_bytes_per_s)) return false;
  if (out.write_back && !truncations(true, out.truncate_disk_bytes_per_s)) return false;

  // `streams` writers at once, each in a process of its own, started together (in_processes),
  // o.repeats rounds: each round's rate is all their bytes over the slowest one's time; the
  // medians of the rounds.
  std::vector<std::int64_t> round_ns, round_cached_ns, round_flush_ns;
  for (int round = 0; round < o.repeats; ++round) {
    std::vector<std::array<std::int64_t, 2>> values;  // each writer's whole time, and until its last write(2)
    const ProcessWork write = [&](std::size_t k, std::int64_t value[2], std::string& why) {
      value[0] = write_file(work + "/s" + std::to_string(k), o.stream_bytes, why, &value[1]);
      return value[0] >= 0;
    };
    if (!in_processes(static_cast<std::size_t>(o.streams), write, values, error)) return false;
    std::vector<std::int64_t> took, took_cached;
    for (const auto& v : values) {
      took.push_back(v[0]);
      took_cached.push_back(v[1]);
    }
    round_ns.push_back(*std::max_element(took.begin(), took.end()));
    round_cached_ns.push_back(*std::max_element(took_cached.begin(), took_cached.end()));
    // The disk's part: from the first stream's last write to the last stream's fsync.
    round_flush_ns.push_back(round_ns.back() - *std::min_element(took_cached.begin(), took_cached.end()));
  }
  out.write_all_bytes_per_s = rate(quantile(round_ns, 0.5)) * o.streams;
  if (out.write_back) {
    out.write_cached_all_bytes_per_s = rate(quantile(round_cached_ns, 0.5)) * o.streams;
    out.flush_all_bytes_per_s = rate(quantile(round_flush_ns, 0.5)) * o.streams;
  }
  // Reads in processes of their own, as live workers read (reads_in_processes), of the files
  // those writers wrote, 4 x o.repeats rounds: one read alone, then `streams` at once; the
  // medians of each read's CPU time. Alternating rounds, so that the machine's drift (this
  // project's VM: a read alone 56-83 ms of CPU from one calibration to the next) weighs on both.
  std::vector<std::string> written;
  for (int k = 0; k < o.streams; ++k) written.push_back(work + "/s" + std::to_string(k));
  // A third kind of round: the one read amid the other streams' writers, each writing a new
  // file of its size (the reader is process 0; its CPU time is the round's figure).
  const ProcessWork amid = [&](std::size_t k, std::int64_t value[2], std::string& why) {
    const std::int64_t t0 = thread_cpu_ns();
    if (k == 0) {
      if (read_file(written.front(), false, why) < 0) return false;
    } else if (write_file(work + "/amid" + std::to_string(k), o.stream_bytes, why) < 0) {
      return false;
    }
    value[0] = std::max<std::int64_t>(1, thread_cpu_ns() - t0);
    return true;
  };
  std::vector<std::int64_t> alone_ns, beside_ns, amid_ns;
  for (int round = 0; round < 4 * o.repeats; ++round) {
    if (!reads_in_processes({written.front()}, alone_ns, error)) return false;
    if (!reads_in_processes(written, beside_ns, error)) return false;
    if (o.streams < 2) continue;  // no writer to read amid
    std::vector<std::array<std::int64_t, 2>> values;
    if (!in_processes(static_cast<std::size_t>(o.streams), amid, values, error)) return false;
    amid_ns.push_back(values.front()[0]);
  }
  out.read_alone_cpu_ns = quantile(alone_ns, 0.5);
  out.read_beside_cpu_ns = quantile(beside_ns, 0.5);
  if (!amid_ns.empty()) out.read_amid_writes_cpu_ns = quantile(amid_ns, 0.5);
  // The writers' turns at one file's inode lock, over about 45 writes each (the size of the
  // files the cache race writes), o.repeats rounds pooled.
  // Each round also times the same two writers writing two files, so the override file shows
  // how much the lock serializes them.
  out.write_turns_bytes = 3 * o.stream_bytes;
  std::vector<std::int64_t> one_file_ns, two_files_ns, made_ns, copied_ns;
  for (int round = 0; round < o.repeats; ++round) {
    const std::size_t block = write_turns_block(out.write_turns_bytes);
    const std::int64_t made = write_file(work + "/turns", out.write_turns_bytes, error, nullptr, block, true, false);
    if (made < 0) return false;
    const std::int64_t copied = write_file(work + "/turns", out.write_turns_bytes, error, nullptr, block, false, false);
    if (copied < 0) return false;
    made_ns.push_back(made);
    copied_ns.push_back(copied);
    const std::string one_file[2] = {work + "/turns", work + "/turns"};
    const std::string two_files[2] = {work + "/turns0", work + "/turns1"};
    const std::int64_t one = two_writers(one_file, out.write_turns_bytes, out, error);
    if (one < 0) return false;
    const std::int64_t two = two_writers(two_files, out.write_turns_bytes, out, error);
    if (two < 0) return false;
    one_file_ns.push_back(one);
    two_files_ns.push_back(two);
  }
  out.write_turns_one_file_ns = quantile(one_file_ns, 0.5);
  out.write_turns_two_files_ns = quantile(two_files_ns, 0.5);
  out.write_one_made_ns = quantile(made_ns, 0.5);
  out.write_one_copied_ns = quantile(copied_ns, 0.5);
  measure_timer(o.timer_samples, out);
  out.memory_reporting = read_free_page_reporting();
  return calibrate_cpu(out.cpu, error);
}

std::string format_overrides(const CalibrateOptions& o, const Calibration& c) {
  auto bps = [](double v) { return std::to_string(static_cast<std::uint64_t>(v)) + "B/s"; };
  auto mib = [](double v) { return std::to_string(static_cast<std::uint64_t>(v / 1048576.0)) + " MiB/s"; };
  const auto ms_of = [](std::int64_t v) {
    char t[32];
    std::snprintf(t, sizeof t, "%.1f ms", static_cast<double>(v) * 1e-6);
    return std::string(t);
  };
  std::ostringstream s;
  s << "# racesim live --calibrate --dir " << o.dir << " --mount " << o.mount << "\n"
    << "# file system: " << c.fs_type << "\n"
    << "# metadata medians (" << o.meta_samples << " each): create " << c.create_ns_p50 << " ns, stat "
    << c.stat_ns_p50 << " ns, rename " << c.rename_ns_p50 << " ns, unlink " << c.unlink_ns_p50 << " ns;\n"
    << "#   the model's latency + uniform[0, jitter) fitted to all of them: latency = 5th percentile,\n"
    << "#   jitter = 2 x (median - 5th percentile)\n"
    << "# write + fsync as live runs write (their bytes made per 4 MiB write), " << (o.stream_bytes >> 20)
    << " MiB per stream: one stream " << mib(c.write_one_bytes_per_s)
    << " (median of " << o.repeats << ")"
    << ", " << o.streams << " at once " << mib(c.write_all_bytes_per_s) << " in all (median of " << o.repeats
    << " rounds)\n"
    << "# read as live runs read (each byte checked), of a file just written: " << mib(c.read_warm_bytes_per_s)
    << " (median of " << o.repeats << "; read_bandwidth); cold (after posix_fadvise DONTNEED; tmpfs keeps its pages): "
    << mib(c.read_cold_bytes_per_s) << "\n";
  if (c.truncate_bytes_per_s > 0) {
    s << "# truncate (open(O_TRUNC) of a file just written, not synced; every write above went into a new\n"
      << "#   file, so none of them includes this): " << mib(c.truncate_bytes_per_s) << " (median of " << o.repeats
      << "; truncate_bandwidth)\n";
  }
  if (c.truncate_disk_bytes_per_s > 0) {
    s << "# truncate of a file fsynced first (its blocks on the disk freed too): " << mib(c.truncate_disk_bytes_per_s)
      << " (median of " << o.repeats << "; truncate_disk_bandwidth)\n";
  }
  if (c.write_back) {
    s << "# page cache (" << c.fs_type << " writes back): one stream's writes before its fsync "
      << mib(c.write_cached_bytes_per_s) << " (median of " << o.repeats << "), " << o.streams << " at once "
      << mib(c.write_cached_all_bytes_per_s) << " in all (median of " << o.repeats << " rounds); the fsync part: "
      << "one stream " << mib(c.flush_one_bytes_per_s) << ", " << o.streams << " at once " << mib(c.flush_all_bytes_per_s)
      << " in all (from the first stream's last write to the last fsync); /proc/sys/vm: dirty limit " << (c.dirty_limit_bytes >> 20)
      << " MiB, background " << (c.dirty_background_bytes >> 20) << " MiB, expire "
      << c.dirty_expire_ns / 1'000'000 << " ms\n";
  } else {
    s << "# no page cache model: " << c.fs_type << " does not write back through Linux's dirty pages\n";
  }
  const std::uint64_t small_mib = (o.stream_bytes / 8) >> 20;
  const auto cost = [&](const LinearCost& k) {
    std::ostringstream t;
    t << k.fixed_ns / 1000 << " us + " << mib(k.bytes_per_s);
    return t.str();
  };
  if (c.read_cost.bytes_per_s > 0 || c.write_cost.bytes_per_s > 0) {
    s << "# a file's fixed cost, the line through " << (o.stream_bytes >> 20) << " MiB and "
      << (small_mib > 0 ? std::to_string(small_mib) + " MiB" : std::to_string((o.stream_bytes / 8) >> 10) + " KiB")
      << " (medians of " << o.repeats << " and " << 4 * o.repeats << "):";
    if (c.read_cost.bytes_per_s > 0) s << " a read " << cost(c.read_cost) << " (file_overhead.read, read_bandwidth);";
    if (c.write_cost.bytes_per_s > 0) {
      s << " a write" << (c.write_back ? " before its fsync " : " and its fsync ") << cost(c.write_cost)
        << (c.write_back ? " (file_overhead.write, page_cache_stream_bandwidth)" : " (file_overhead.write, client_bandwidth)");
    }
    s << "; a 5-byte text's read " << c.text_read_ns / 1000 << " us, its write(2) " << c.text_write_ns / 1000
      << " us (medians of " << 4 * o.repeats << ")\n"
      << "#   under a CPU model the fixed part is the caller's CPU time, as live it is (its buffers, the open)\n";
  }
  s << "# timer: clock_getres " << c.timer_resolution_ns << " ns; a 1 us sleep overshoots by "
    << c.sleep_overshoot_ns_p50 << " ns (median of " << o.timer_samples << ")\n";
  const double f = o.time_scale;
  if (f != 1.0) {
    s << "# as live runs at --time-scale " << f << " see it in their virtual time: real I/O is not scaled, so\n"
      << "#   bandwidths are multiplied by " << f << " and metadata latencies divided by it\n";
  }
  const auto ns = [f](std::int64_t v) { return std::to_string(static_cast<std::int64_t>(static_cast<double>(v) / f)) + "ns"; };
  const std::string key = "platform.storage." + o.mount + ".";
  // The disk's rates: with a page cache, the fsync part only (the model charges the copy into
  // the cache at page_cache_bandwidth); without one, the whole write + fsync.
  const double disk_one = c.write_back                       ? c.flush_one_bytes_per_s
                          : c.write_cost.bytes_per_s > 0 ? c.write_cost.bytes_per_s
                                                         : c.write_one_bytes_per_s;
  const double read_rate = c.read_cost.bytes_per_s > 0 ? c.read_cost.bytes_per_s : c.read_warm_bytes_per_s;
  const double stream_rate =
      c.write_back && c.write_cost.bytes_per_s > 0 ? c.write_cost.bytes_per_s : c.write_cached_bytes_per_s;
  // The writers at once, net of their fixed costs, which the model charges apart (each copy's
  // bytes share the rate; its fixed cost runs on its core before them).
  const auto net = [&](double all) {
    return net_of_fixed_costs(all, o.stream_bytes, o.streams, c.cpu.cores, c.write_cost.fixed_ns);
  };
  // On a write-back file system they write into the page cache (page_cache_bandwidth), and the
  // disk's rate is the flush's; otherwise theirs is the mount's (bandwidth).
  const double writers_at_once = net(c.write_back ? c.write_cached_all_bytes_per_s : c.write_all_bytes_per_s);
  const double disk_all = c.write_back ? c.flush_all_bytes_per_s : writers_at_once;
  if (c.write_cost.fixed_ns > 0) {
    s << "# writers at once, net of their fixed costs (" << o.streams << " streams on "
      << (c.cpu.cores > 0 ? std::min(o.streams, c.cpu.cores) : o.streams) << " cores, each core's streams' "
      << c.write_cost.fixed_ns / 1000 << " us apiece off the time): " << mib(writers_at_once) << " in all ("
      << (c.write_back ? "page_cache_bandwidth" : "bandwidth") << ")\n";
  }
  // Behind a page cache the node's fsyncs share one disk (client_bandwidth, bandwidth: the streams
  // at once), and one goes at most at one stream's rate (disk_stream_bandwidth); without one, a
  // write is the copy: one stream's rate per client (client_bandwidth), the mount's shared.
  const double disk_shared = std::max(disk_all, disk_one);
  s << key << "kind=local\n"
    << key << "meta_latency=" << ns(c.meta_latency_ns) << "\n"
    << key << "meta_jitter=" << ns(c.meta_jitter_ns) << "\n"
    << key << "client_bandwidth=" << bps((c.write_back ? disk_shared : disk_one) * f) << "\n"
    << key << "bandwidth=" << bps(disk_shared * f) << "\n"
    << key << "read_bandwidth=" << bps(read_rate * f) << "\n";
  if (c.read_alone_cpu_ns > 0 && c.read_beside_cpu_ns > 0) {
    // Reads at once share the node's memory among themselves, not with the writes' rate: the
    // rate they share is one read's on a core while the others read, times the reads that ran.
    const int running = c.cpu.cores > 0 ? std::min(o.streams, c.cpu.cores) : o.streams;
    const double beside =
        rate_beside(read_rate, static_cast<double>(o.stream_bytes), static_cast<double>(c.read_alone_cpu_ns) * 1e-9,
                    static_cast<double>(c.read_beside_cpu_ns) * 1e-9);
    s << "# reads at once, each in a process of its own as live workers read (new buffers): a read of "
      << (o.stream_bytes >> 20) << " MiB took\n#   " << ms_of(c.read_beside_cpu_ns) << " of CPU time with " << o.streams
      << " at once (median of " << 4 * o.streams * o.repeats << ") and " << ms_of(c.read_alone_cpu_ns)
      << " alone (median of " << 4 * o.repeats << ", rounds in turn): what it took more, on its bytes,\n#   is "
      << mib(beside)
      << " each while it has a core (alone " << mib(read_rate) << "), x " << running
      << " running at once (read_shared_bandwidth)\n"
      << key << "read_shared_bandwidth=" << bps(beside * running * f) << "\n";
  }
  if (c.read_alone_cpu_ns > 0 && c.read_amid_writes_cpu_ns > 0) {
    // A read beside writes on the other cores: the rate it takes in place of its own.
    const double amid =
        rate_beside(read_rate, static_cast<double>(o.stream_bytes), static_cast<double>(c.read_alone_cpu_ns) * 1e-9,
                    static_cast<double>(c.read_amid_writes_cpu_ns) * 1e-9);
    s << "# a read amid writes (" << o.streams - 1 << " writers at once, each in a process of its own): it took "
      << ms_of(c.read_amid_writes_cpu_ns) << " of CPU time (median of " << 4 * o.repeats << ") and "
      << ms_of(c.read_alone_cpu_ns) << " alone:\n#   what it took more, on its bytes, is " << mib(amid)
      << " (read_amid_writes_bandwidth)\n"
      << key << "read_amid_writes_bandwidth=" << bps(amid * f) << "\n";
  }
  if (c.read_cost.bytes_per_s > 0 || c.write_cost.bytes_per_s > 0) {
    s << key << "file_overhead={read: " << ns(c.read_cost.fixed_ns) << ", write: " << ns(c.write_cost.fixed_ns)
      << ", text_read: " << ns(c.text_read_ns) << ", text_write: " << ns(c.text_write_ns) << "}\n";
  }
  if (c.truncate_bytes_per_s > 0) s << key << "truncate_bandwidth=" << bps(c.truncate_bytes_per_s * f) << "\n";
  if (c.write_back && c.truncate_disk_bytes_per_s > 0) {
    s << key << "truncate_disk_bandwidth=" << bps(c.truncate_disk_bytes_per_s * f) << "\n";
  }
  if (c.chunk_samples > 0) {
    char j[32];
    std::snprintf(j, sizeof j, "%.3f", c.chunk_jitter);
    s << "# a 4 MiB chunk's time, one stream's writes and reads (" << c.chunk_samples
      << " chunks, not a file's first), each over its kind's median: as uniform[1 - j, 1 + j), j = (p90 - p10) / 1.6\n"
      << key << "chunk_jitter=" << j << "\n";
  }
  if (c.write_back) {
    s << key << "page_cache_bandwidth=" << bps(std::max(writers_at_once, stream_rate) * f) << "\n"
      << key << "page_cache_stream_bandwidth=" << bps(stream_rate * f) << "\n"
      << key << "disk_stream_bandwidth=" << bps(disk_one * f) << "\n"
      << key << "dirty_limit=" << c.dirty_limit_bytes << "B\n"
      << key << "dirty_background=" << c.dirty_background_bytes << "B\n"
      << key << "dirty_expire=" << ns(c.dirty_expire_ns) << "\n";
  }
  if (const std::uint64_t turns = c.write_turns_kept + c.write_turns_handed; turns > 0) {
    const double keep = static_cast<double>(c.write_turns_kept) / static_cast<double>(turns);
    char odds[32];
    std::snprintf(odds, sizeof odds, "%.3f", keep);
    const std::size_t block = write_turns_block(c.write_turns_bytes);
    s << "# two writers of one file at once (as live runs write, " << (c.write_turns_bytes >> 20) << " MiB each in "
      << (block % (1 << 20) == 0 ? std::to_string(block >> 20) + " MiB" : std::to_string(block >> 10) + " KiB")
      << " writes, " << o.repeats << " rounds): of " << turns << " writes that returned while both wrote, " << c.write_turns_kept
      << " followed the same writer's (it kept the file's inode lock) and " << c.write_turns_handed
      << " the other's; both done in " << c.write_turns_one_file_ns / 1'000'000 << " ms (two files: "
      << c.write_turns_two_files_ns / 1'000'000 << " ms; one writer alone: " << c.write_one_made_ns / 1'000'000
      << " ms, or " << c.write_one_copied_ns / 1'000'000 << " ms writing bytes made once; medians)\n"
      << "#   as the model's odds of keeping the lock: write_lock_keep " << odds << "; not set: the model's write lock\n"
      << "#   holds a whole chunk, its bytes made and copied, where a live writer makes them outside it, so\n"
      << "#   writers of one file would take turns for what live runs do at once\n";
  }
  if (c.cpu.cores > 0) s << format_cpu_overrides(c.cpu, f);
  s << format_free_page_reporting(c.memory_reporting);
  return s.str();
}

}  // namespace racesim::live
