// Calibration of a real directory: see calibrate.h.
#include "src/live/calibrate.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <sstream>
#include <thread>
#include <vector>

#include "src/live/fs_type.h"

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

// Writes `bytes` to `path` in 4 MiB writes, then fsync and close. Returns the nanoseconds taken,
// or -1 with `error`.
std::int64_t write_file(const std::string& path, std::uint64_t bytes, std::string& error) {
  static const std::vector<char> block(4 << 20, 'r');
  const auto t0 = Clock::now();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    error = sys_error("open", path);
    return -1;
  }
  for (std::uint64_t left = bytes; left > 0;) {  // bounded: each pass writes at least one byte
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, block.size()));
    const ssize_t w = ::write(fd, block.data(), n);
    if (w <= 0) {
      error = sys_error("write", path);
      ::close(fd);
      return -1;
    }
    left -= static_cast<std::uint64_t>(w);
  }
  if (::fsync(fd) != 0) {
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

// Drops the file's pages from the page cache where the file system allows it, then reads it
// whole. Returns the nanoseconds taken, or -1 with `error`.
std::int64_t read_cold(const std::string& path, std::string& error) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) {
    error = sys_error("open", path);
    return -1;
  }
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);  // advice: tmpfs keeps its pages
  std::vector<char> buf(4 << 20);
  const auto t0 = Clock::now();
  for (;;) {  // bounded by the file's length
    const ssize_t r = ::read(fd, buf.data(), buf.size());
    if (r < 0) {
      error = sys_error("read", path);
      ::close(fd);
      return -1;
    }
    if (r == 0) break;
  }
  const std::int64_t ns = ns_since(t0);
  ::close(fd);
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

bool is_name(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-';
  });
}

}  // namespace

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
      o.timer_samples < 10 || o.timer_samples > 100'000 || o.stream_bytes < (1u << 20) ||
      o.stream_bytes > (16ull << 30)) {
    error = "calibration sizes out of range (streams 1-64, samples 10-100000, 1 MiB-16 GiB per stream)";
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

  const std::string one = work + "/one";
  const std::int64_t one_ns = write_file(one, o.stream_bytes, error);
  if (one_ns < 0) return false;
  out.write_one_bytes_per_s = static_cast<double>(o.stream_bytes) * 1e9 / static_cast<double>(std::max<std::int64_t>(1, one_ns));
  const std::int64_t read_ns = read_cold(one, error);
  if (read_ns < 0) return false;
  out.read_cold_bytes_per_s = static_cast<double>(o.stream_bytes) * 1e9 / static_cast<double>(std::max<std::int64_t>(1, read_ns));

  std::vector<std::int64_t> took(static_cast<std::size_t>(o.streams));
  std::vector<std::string> errors(static_cast<std::size_t>(o.streams));
  {
    std::vector<std::thread> writers;
    for (int i = 0; i < o.streams; ++i) {
      writers.emplace_back([&, i] {
        const auto k = static_cast<std::size_t>(i);
        took[k] = write_file(work + "/s" + std::to_string(i), o.stream_bytes, errors[k]);
      });
    }
    for (auto& t : writers) t.join();
  }
  for (int i = 0; i < o.streams; ++i) {
    if (took[static_cast<std::size_t>(i)] < 0) {
      error = errors[static_cast<std::size_t>(i)];
      return false;
    }
  }
  const std::int64_t slowest = *std::max_element(took.begin(), took.end());
  out.write_all_bytes_per_s = static_cast<double>(o.stream_bytes) * o.streams * 1e9 /
                              static_cast<double>(std::max<std::int64_t>(1, slowest));
  measure_timer(o.timer_samples, out);
  return true;
}

std::string format_overrides(const CalibrateOptions& o, const Calibration& c) {
  auto bps = [](double v) { return std::to_string(static_cast<std::uint64_t>(v)) + "B/s"; };
  auto mib = [](double v) { return std::to_string(static_cast<std::uint64_t>(v / 1048576.0)) + " MiB/s"; };
  std::ostringstream s;
  s << "# racesim live --calibrate --dir " << o.dir << " --mount " << o.mount << "\n"
    << "# file system: " << c.fs_type << "\n"
    << "# metadata medians (" << o.meta_samples << " each): create " << c.create_ns_p50 << " ns, stat "
    << c.stat_ns_p50 << " ns, rename " << c.rename_ns_p50 << " ns, unlink " << c.unlink_ns_p50 << " ns;\n"
    << "#   the model's latency + uniform[0, jitter) fitted to all of them: latency = 5th percentile,\n"
    << "#   jitter = 2 x (median - 5th percentile)\n"
    << "# write + fsync, " << (o.stream_bytes >> 20) << " MiB per stream: one stream " << mib(c.write_one_bytes_per_s)
    << ", " << o.streams << " at once " << mib(c.write_all_bytes_per_s) << " in all\n"
    << "# cold read (after posix_fadvise DONTNEED; tmpfs keeps its pages): " << mib(c.read_cold_bytes_per_s)
    << " (the model has one rate for reads and writes: the write rates are used)\n"
    << "# timer: clock_getres " << c.timer_resolution_ns << " ns; a 1 us sleep overshoots by "
    << c.sleep_overshoot_ns_p50 << " ns (median of " << o.timer_samples << ")\n";
  const double f = o.time_scale;
  if (f != 1.0) {
    s << "# as live runs at --time-scale " << f << " see it in their virtual time: real I/O is not scaled, so\n"
      << "#   bandwidths are multiplied by " << f << " and metadata latencies divided by it\n";
  }
  const auto ns = [f](std::int64_t v) { return std::to_string(static_cast<std::int64_t>(static_cast<double>(v) / f)) + "ns"; };
  const std::string key = "platform.storage." + o.mount + ".";
  s << key << "kind=local\n"
    << key << "meta_latency=" << ns(c.meta_latency_ns) << "\n"
    << key << "meta_jitter=" << ns(c.meta_jitter_ns) << "\n"
    << key << "client_bandwidth=" << bps(c.write_one_bytes_per_s * f) << "\n"
    << key << "bandwidth=" << bps(std::max(c.write_all_bytes_per_s, c.write_one_bytes_per_s) * f) << "\n";
  return s.str();
}

}  // namespace racesim::live
