// RealFiles: see real_files.h.
#include "src/live/real_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <thread>

#include "sim/storage/fs.h"

namespace racesim::live {

using storage::Content;
using storage::FsError;

namespace {

constexpr char kMagic[8] = {'R', 'S', 'L', 'I', 'V', 'E', '0', '1'};
constexpr std::uint64_t kChunkMax = 4u << 20;              // bytes per write(2) or read(2)
constexpr std::uint64_t kReadLimit = std::uint64_t{1} << 36;  // 64 GiB: a read stops there

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

std::uint64_t word_at(std::uint64_t version, std::uint64_t word) { return splitmix64(version * 0x100000001B3ull ^ word); }

void put_u64(char* p, std::uint64_t v) { std::memcpy(p, &v, 8); }
std::uint64_t get_u64(const char* p) {
  std::uint64_t v = 0;
  std::memcpy(&v, p, 8);
  return v;
}

FsError from_errno(int e) {
  switch (e) {
    case EEXIST: return FsError::kExists;
    case ENOENT: return FsError::kNotFound;
    case ENOSYS:
    case EOPNOTSUPP: return FsError::kNoSys;
    case EWOULDBLOCK: return FsError::kWouldBlock;
    case EBADF: return FsError::kBadFd;
    case ENOSPC:
    case EDQUOT: return FsError::kDiskFull;
    case EISDIR: return FsError::kIsDir;
    case ENOTEMPTY: return FsError::kNotEmpty;
    case ENOTDIR: return FsError::kNotDir;
    case EINVAL: return FsError::kInvalid;
    case EBUSY: return FsError::kBusy;
    default: return FsError::kIo;  // EIO, EACCES, EROFS, ... (diagnoses say EIO)
  }
}

// Whether n bytes at a and b differ, reading every byte (no early exit, unlike memcmp): a check
// costs the same whatever the bytes hold. Four words at a time, as fast as memcmp over bytes that
// are equal (0.10 ms per 4 MiB on this project's VM).
bool differ(const char* a, const char* b, std::size_t n) {
  std::uint64_t lanes[4] = {0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (std::size_t j = 0; j < 4; ++j) lanes[j] |= get_u64(a + i + 8 * j) ^ get_u64(b + i + 8 * j);
  }
  std::uint64_t diff = lanes[0] | lanes[1] | lanes[2] | lanes[3];
  for (; i + 8 <= n; i += 8) diff |= get_u64(a + i) ^ get_u64(b + i);
  for (; i < n; ++i) diff |= static_cast<std::uint64_t>(static_cast<unsigned char>(a[i] ^ b[i]));
  return diff != 0;
}

}  // namespace

void content_bytes(const Content& c, std::uint64_t offset, char* out, std::size_t n) {
  assert(c.length >= kHeaderBytes);
  char header[kHeaderBytes] = {};
  std::memcpy(header, kMagic, 8);
  put_u64(header + 8, static_cast<std::uint64_t>(static_cast<std::int64_t>(c.writer)));
  put_u64(header + 16, c.version);
  put_u64(header + 24, c.length);
  put_u64(header + 32, c.files);
  std::size_t i = 0;
  // Bounded by n.
  while (i < n) {
    const std::uint64_t o = offset + i;
    if (o < kHeaderBytes) {
      out[i++] = header[o];
      continue;
    }
    const std::uint64_t w = word_at(c.version, o / 8);
    const std::size_t in_word = o % 8;
    const std::size_t take = std::min<std::size_t>(8 - in_word, n - i);
    std::memcpy(out + i, reinterpret_cast<const char*>(&w) + in_word, take);
    i += take;
  }
}

std::optional<Content> parse_header(const char* head, std::size_t n) {
  if (n < kHeaderBytes || std::memcmp(head, kMagic, 8) != 0) return std::nullopt;
  Content c;
  c.writer = static_cast<int>(static_cast<std::int64_t>(get_u64(head + 8)));
  c.version = get_u64(head + 16);
  c.length = get_u64(head + 24);
  c.files = get_u64(head + 32);
  return c;
}

RealFiles::RealFiles(kernel::Simulation& sim, const LiveClock& clock, std::string name, storage::MountConfig config,
                     std::string real_root, std::function<std::uint64_t()> next_version, Board* board,
                     int cpus)
    : sim_(sim), clock_(clock), name_(std::move(name)), config_(std::move(config)),
      real_root_(std::move(real_root)), next_version_(std::move(next_version)), faults_(sim), board_(board),
      cpus_(cpus) {
  assert(cpus >= 1 && "RealFiles REQUIRES at least one CPU");
  stats_.cpu_accounted = true;
  stats_.costs_recorded = true;
}

RealFiles::~RealFiles() {
  for (auto& [fd, f] : open_) ::close(f.fd);
  for (auto& [p, fd] : locks_) ::close(fd);
}

std::string RealFiles::real(const std::string& path) const { return real_root_ + path.substr(config_.root.size()); }

void RealFiles::catch_up() {
  const std::int64_t before = thread_cpu_ns();
  sim_.sleep_until(std::max(sim_.now(), clock_.now()));
  catch_up_cpu_ns_ += thread_cpu_ns() - before;
}

RealFiles::CpuSpan::CpuSpan(RealFiles& files, kernel::Time& into)
    : files_(files), into_(into), start_ns_(thread_cpu_ns()), waited_ns_(files.catch_up_cpu_ns_) {}

void RealFiles::CpuSpan::copy(bool read) {
  assert(ticket_ < 0 && "CpuSpan::copy REQUIRES a span not yet a copy");
  if (files_.board_ == nullptr) return;
  read_ = read;
  ticket_ = files_.board_->begin_copy(files_.name_, read);
}

RealFiles::CpuSpan::~CpuSpan() {
  const std::int64_t own = thread_cpu_ns() - start_ns_ - (files_.catch_up_cpu_ns_ - waited_ns_);
  const auto own_virtual =
      static_cast<kernel::Time>(static_cast<double>(std::max<std::int64_t>(0, own)) / files_.clock_.scale());
  into_ = kernel::add_time(into_, own_virtual);
  const double b = static_cast<double>(bytes_), sec = kernel::to_seconds(own_virtual);
  if (sums_ != nullptr) sums_->add(b, sec);
  if (ticket_ < 0) return;
  const Board::CopyCompany company = files_.board_->end_copy(ticket_);
  storage::FsStats& st = files_.stats_;
  // Only a copy counted as a file's bytes (not a text's) is one of its kind's company.
  if (sums_ != (read_ ? &st.read_costs : &st.write_costs)) return;
  // A read's company is the reads, a write's every copy (the model's sharing).
  const int at_once = read_ ? company.reads : company.copies;
  assert(at_once >= 1 && "a copy counts itself");
  if (at_once == 1) {
    (read_ ? st.read_alone_costs : st.write_alone_costs).add(b, sec);
    // A read alone that had company was beside writes only.
    if (read_ && company.copies > 1) st.read_amid_writes_costs.add(b, sec);
    return;
  }
  storage::CostSums& beside = read_ ? st.read_beside_costs : st.write_beside_costs;
  beside.add(b, sec);
  beside.running += std::min(at_once, files_.cpus_);
}

kernel::Result<int> RealFiles::create(const std::string& path, int, int rank, storage::OpenMode mode,
                                      std::uint64_t final_length) {
  if (const FsError e = op_faults(); e != FsError::kOk) return kernel::Result<int>::error(storage::to_string(e));
  int flags = O_WRONLY | O_CLOEXEC;
  switch (mode) {
    case storage::OpenMode::kTruncate: flags |= O_CREAT | O_TRUNC; break;
    case storage::OpenMode::kExclusive: flags |= O_CREAT | O_EXCL; break;
    case storage::OpenMode::kKeep: flags |= O_CREAT; break;
    case storage::OpenMode::kAppend: flags |= O_APPEND; break;
  }
  ++stats_.meta_ops;
  const int fd = ::open(real(path).c_str(), flags, 0644);
  const int err = errno;
  catch_up();
  if (fd < 0) return kernel::Result<int>::error(storage::to_string(from_errno(err)));
  Open f;
  f.fd = fd;
  f.path = path;
  f.content = Content{rank, next_version_(), final_length, "", 1};
  f.identity = final_length >= kHeaderBytes && mode != storage::OpenMode::kAppend;
  open_[fd] = std::move(f);
  return fd;
}

FsError RealFiles::finish(int r, int err) {
  catch_up();
  return r == 0 ? FsError::kOk : from_errno(err);
}

FsError RealFiles::put(Open& f, std::uint64_t n, std::uint64_t* written) {
  std::vector<char> buf(static_cast<std::size_t>(std::min<std::uint64_t>(std::max<std::uint64_t>(n, 1), kChunkMax)));
  const std::uint64_t chunk = std::clamp<std::uint64_t>(config_.chunk, 4096, kChunkMax);
  std::uint64_t done = 0;
  // Bounded by n: each pass writes at least one byte or returns.
  while (done < n) {
    const std::size_t k = static_cast<std::size_t>(std::min(chunk, n - done));
    if (!f.content.text.empty()) {
      for (std::size_t i = 0; i < k; ++i) {
        const std::uint64_t o = f.offset + i;
        buf[i] = o < f.content.text.size() ? f.content.text[o] : '\0';
      }
    } else if (f.identity) {
      content_bytes(f.content, f.offset, buf.data(), k);
    } else {
      std::fill(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(k), '\0');
    }
    const ssize_t w = ::write(f.fd, buf.data(), k);
    if (w <= 0) {
      const int err = errno;
      if (written) *written = done;
      catch_up();
      return w == 0 ? FsError::kIo : from_errno(err);
    }
    f.offset += static_cast<std::uint64_t>(w);
    done += static_cast<std::uint64_t>(w);
    stats_.bytes_written += static_cast<std::uint64_t>(w);
    catch_up();
  }
  if (written) *written = done;
  return FsError::kOk;
}

FsError RealFiles::write(int fd, std::uint64_t bytes, std::uint64_t* written) {
  CpuSpan cpu(*this, stats_.write_cpu);
  if (written) *written = 0;
  auto it = open_.find(fd);
  if (it == open_.end()) return FsError::kBadFd;
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  // Each write of bytes is one operation of its kind, with the bytes it wrote (a stall's pause
  // is a sleep, not CPU time).
  const std::uint64_t before = stats_.bytes_written;
  const bool text = !it->second.content.text.empty();
  if (!text) cpu.copy(false);
  // The fault point fs.write, as in the model (a stall is a real pause, scaled).
  const FsError e = faults_.write(bytes, written, stats_, it->second.path, [&](std::uint64_t n, std::uint64_t* done) {
    const auto f = open_.find(fd);
    return f == open_.end() ? FsError::kBadFd : put(f->second, n, done);
  });
  cpu.count_in(text ? stats_.text_write_costs : stats_.write_costs, stats_.bytes_written - before);
  return e;
}

FsError RealFiles::fsync(int fd) {
  auto it = open_.find(fd);
  if (it == open_.end()) return FsError::kBadFd;
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  Open& f = it->second;
  assert(f.synced <= f.offset && "a descriptor syncs no more than it wrote");
  const auto bytes = static_cast<double>(f.offset - f.synced);
  // The syncs of the mount's files are counted on the board under a name of their own (the
  // disk's), apart from the copies: the model's disk is shared by the fsyncs at once only.
  const int ticket = board_ != nullptr ? board_->begin_copy(name_ + " fsync", false) : -1;
  const std::int64_t start_ns = monotonic_ns();
  const int r = ::fsync(f.fd);
  const int err = errno;
  // Real time in virtual seconds at the clock's scale (the caller sleeps while the disk works).
  // By the monotonic clock, not the virtual one, which stands at 0 until the run's common start.
  const double took_s = static_cast<double>(monotonic_ns() - start_ns) * 1e-9 / clock_.scale();
  const int at_once = ticket >= 0 ? board_->end_copy(ticket).copies : 0;
  if (r == 0) {
    f.synced = f.offset;
    stats_.sync_costs.add(bytes, took_s);
    if (at_once == 1) stats_.sync_alone_costs.add(bytes, took_s);
    if (at_once > 1) {
      stats_.sync_beside_costs.add(bytes, took_s);
      stats_.sync_beside_costs.running += at_once;
    }
  }
  return finish(r, err);
}

FsError RealFiles::close(int fd) {
  auto it = open_.find(fd);
  if (it == open_.end()) return FsError::kBadFd;
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  const int r = ::close(it->second.fd);
  const int err = errno;
  open_.erase(it);
  return finish(r, err);
}

void RealFiles::set_text(int fd, std::string text) {
  auto it = open_.find(fd);
  if (it == open_.end()) return;
  it->second.content.text = std::move(text);
  it->second.identity = false;
}

storage::FileView RealFiles::stat(const std::string& path, int) {
  if (const FsError e = op_faults(); e != FsError::kOk) {
    storage::FileView v;
    v.error = e;
    return v;
  }
  ++stats_.meta_ops;
  struct stat st {};
  const int r = ::stat(real(path).c_str(), &st);
  const int err = errno;
  catch_up();
  storage::FileView v;
  if (r != 0) {
    if (err != ENOENT && err != ENOTDIR) v.error = from_errno(err);
    return v;
  }
  v.exists = true;
  v.dir = S_ISDIR(st.st_mode);
  v.size = v.dir ? 0 : static_cast<std::uint64_t>(st.st_size);
  return v;
}

std::vector<std::string> RealFiles::list(const std::string& pattern, int, bool hidden, FsError* error) {
  if (const FsError e = op_faults(); e != FsError::kOk) {
    if (error) *error = e;
    return {};
  }
  if (error) *error = FsError::kOk;
  ++stats_.meta_ops;
  const std::string dir(storage::dir_of(pattern));
  const std::string base = pattern.substr(std::min(pattern.size(), dir.size() + 1));
  std::vector<std::string> out;
  if (DIR* d = ::opendir(real(dir).c_str())) {
    // Bounded by the directory's entries.
    while (const dirent* e = ::readdir(d)) {
      const std::string n = e->d_name;
      if (n == "." || n == "..") continue;
      if (storage::FileSystem::glob_match(base, n, hidden)) out.push_back(dir + "/" + n);
    }
    ::closedir(d);
  } else if (errno != ENOENT && errno != ENOTDIR && error) {
    *error = from_errno(errno);
  }
  catch_up();
  std::sort(out.begin(), out.end());
  return out;
}

FsError RealFiles::mkdir(const std::string& path, int) {
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  ++stats_.meta_ops;
  return finish(::mkdir(real(path).c_str(), 0755));
}

FsError RealFiles::makedirs(const std::string& path, int client, bool parents, bool exist_ok) {
  FsError e = mkdir(path, client);
  if (e == FsError::kNotFound && parents) {
    const auto slash = path.rfind('/');
    if (slash != std::string::npos && slash > config_.root.size()) {
      const FsError p = makedirs(path.substr(0, slash), client, true, true);
      if (p != FsError::kOk) return p;
      e = mkdir(path, client);
    }
  }
  if (e == FsError::kExists && exist_ok) return stat(path, client).dir ? FsError::kOk : FsError::kExists;
  return e;
}

FsError RealFiles::rename(const std::string& from, const std::string& to, int) {
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  ++stats_.meta_ops;
  if (from == config_.root || to == config_.root) return FsError::kBusy;
  return finish(::rename(real(from).c_str(), real(to).c_str()));
}

FsError RealFiles::unlink(const std::string& path, int) {
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  ++stats_.meta_ops;
  return finish(::unlink(real(path).c_str()));
}

FsError RealFiles::rmdir(const std::string& path, int) {
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  ++stats_.meta_ops;
  if (path == config_.root) return FsError::kBusy;
  return finish(::rmdir(real(path).c_str()));
}

FsError RealFiles::tree(const std::string& dir, int client, std::vector<std::string>& dirs, std::vector<std::string>& files) {
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  const storage::FileView v = stat(dir, client);
  if (v.error != FsError::kOk) return v.error;
  if (!v.exists) return FsError::kNotFound;
  if (!v.dir) return FsError::kNotDir;
  const std::size_t first_dir = dirs.size(), first_file = files.size();
  std::vector<std::string> pending{dir};
  // Bounded by the tree's directories.
  while (!pending.empty()) {
    const std::string d = pending.back();
    pending.pop_back();
    ++stats_.meta_ops;
    DIR* h = ::opendir(real(d).c_str());
    if (!h) return from_errno(errno);
    while (const dirent* e = ::readdir(h)) {
      const std::string n = e->d_name;
      if (n == "." || n == "..") continue;
      struct stat st {};
      const std::string p = d + "/" + n;
      if (::lstat(real(p).c_str(), &st) != 0) continue;  // gone meanwhile
      if (S_ISDIR(st.st_mode)) {
        dirs.push_back(p);
        pending.push_back(p);
      } else {
        files.push_back(p);
      }
    }
    ::closedir(h);
  }
  catch_up();
  std::sort(dirs.begin() + static_cast<std::ptrdiff_t>(first_dir), dirs.end());
  std::sort(files.begin() + static_cast<std::ptrdiff_t>(first_file), files.end());
  return FsError::kOk;
}

std::optional<storage::ReadResult> read_content(int fd, std::uint64_t limit, const std::function<void()>& after_chunk,
                                               int* error, std::uint64_t* checked_bytes) {
  storage::ReadResult r;
  std::vector<char> buf(kChunkMax);
  std::string head;        // the first bytes, for the header and a text
  bool identity = false;   // a valid header was read
  std::uint64_t off = 0;
  // Bounded by `limit`: each pass reads at least one byte or ends.
  while (off < limit) {
    const ssize_t n = ::read(fd, buf.data(), static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), limit - off)));
    if (n < 0) {
      *error = errno;
      return std::nullopt;
    }
    if (n == 0) break;  // shorter now than at the open: truncated meanwhile
    const auto k = static_cast<std::size_t>(n);
    if (head.size() < kHeaderBytes) head.append(buf.data(), std::min<std::size_t>(k, kHeaderBytes - head.size()));
    if (!identity && head.size() == kHeaderBytes) {
      if (auto c = parse_header(head.data(), head.size())) {
        identity = true;
        r.content = *c;
      }
    }
    if (identity) {
      // Every byte past the header must be the version's pattern. Every chunk is checked whole,
      // also after one that was not the pattern, so that a read costs the same CPU whatever it
      // finds, as a loader parses every byte and as the model charges a read (a torn read that
      // stopped checking at its first wrong chunk cost less than half as much a byte, which
      // pulled the line `live --fit-costs` draws through the reads down with it).
      std::vector<char> want(k);
      content_bytes(r.content, off, want.data(), k);
      if (differ(want.data(), buf.data(), k)) r.changed = true;
      if (checked_bytes != nullptr) *checked_bytes += k;
    } else if (off < (1u << 20)) {
      r.content.text.append(buf.data(), std::min<std::size_t>(k, (1u << 20) - static_cast<std::size_t>(off)));
    }
    off += k;
    if (after_chunk) after_chunk();
  }
  r.bytes = off;
  if (!identity) {
    // No content identity: a text (or a file too short for a header), read as it is.
    r.content.writer = -1;
    r.content.length = off;
  } else if (off > r.content.length) {
    r.changed = true;  // longer than its writer meant: another write ran on
  }
  r.complete = r.bytes == r.content.length;
  return r;
}

kernel::Result<storage::ReadResult> RealFiles::read(const std::string& path, int) {
  CpuSpan cpu(*this, stats_.read_cpu);
  if (const FsError e = op_faults(); e != FsError::kOk) {
    return kernel::Result<storage::ReadResult>::error(storage::to_string(e));
  }
  ++stats_.meta_ops;
  const int fd = ::open(real(path).c_str(), O_RDONLY | O_CLOEXEC);
  struct stat st{};
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    const int err = errno;
    if (fd >= 0) ::close(fd);
    catch_up();
    return kernel::Result<storage::ReadResult>::error(storage::to_string(from_errno(err)));
  }
  // The length at the open, as the model's reader and the loaders it stands for learn it (ORT
  // reads a model file by its size; torch.load finds a zip's directory at its end): bytes a
  // writer adds later are not read, even by a reader slower than the writer.
  const std::uint64_t size = std::min<std::uint64_t>(static_cast<std::uint64_t>(st.st_size), kReadLimit);
  if (size >= kCopyBytesMin) cpu.copy(true);
  int err = 0;
  const auto r = read_content(fd, size, [this] {
    catch_up();
  }, &err);
  ::close(fd);
  if (!r) {
    catch_up();
    return kernel::Result<storage::ReadResult>::error(storage::to_string(from_errno(err)));
  }
  stats_.bytes_read += r->bytes;
  // A read that read is one operation of its kind: of a file with a content identity (a model's
  // load), or of one without (a text, read as it is).
  cpu.count_in(r->content.writer >= 0 ? stats_.read_costs : stats_.text_read_costs, r->bytes);
  return *r;
}

FsError RealFiles::write_whole(const std::string& to, const Content& c, std::uint64_t bytes, bool identity,
                               bool garble) {
  ++stats_.meta_ops;
  const int fd = ::open(real(to).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int err = errno;
    catch_up();
    return from_errno(err);
  }
  Open f;
  f.fd = fd;
  f.path = to;
  f.content = c;
  f.identity = identity;
  if (garble) f.content.version = ~c.version;  // a mixture: the header's version, other bytes
  FsError e = FsError::kOk;
  if (garble && bytes > 0) {
    // The header as the source's, the rest another version's: a reader sees `changed`.
    std::vector<char> h(static_cast<std::size_t>(std::min(bytes, kHeaderBytes)));
    content_bytes(c, 0, h.data(), h.size());
    if (::write(fd, h.data(), h.size()) != static_cast<ssize_t>(h.size())) e = from_errno(errno);
    f.offset = h.size();
    if (e == FsError::kOk && bytes > f.offset) e = put(f, bytes - f.offset, nullptr);
  } else {
    e = put(f, bytes, nullptr);
  }
  if (::close(fd) != 0 && e == FsError::kOk) e = from_errno(errno);
  catch_up();
  return e;
}

FsError RealFiles::write_copy(const std::string& to, int, int, const storage::ReadResult& r) {
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  const bool identity = r.content.writer >= 0 && r.content.length >= kHeaderBytes;
  Content c = r.content;
  return write_whole(to, c, r.bytes, identity, identity && r.changed);
}

FsError RealFiles::copy(const std::string& from, const std::string& to, int client, int rank) {
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  const auto r = read(from, client);
  if (!r) return r.message() == "ENOENT" ? FsError::kNotFound : FsError::kIo;
  return write_copy(to, client, rank, *r);
}

FsError RealFiles::write_archive(const std::string& to, int, int rank, const std::vector<storage::ReadResult>& members) {
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  Content c{rank, next_version_(), 0, "", 0};
  std::uint64_t actual = 0;
  for (const storage::ReadResult& m : members) {
    c.length += m.content.length + 512;
    actual += m.bytes + 512;
    c.files += std::max<std::uint64_t>(1, m.content.files);
  }
  // A member read short makes the archive short of what its header says: a reader finds it torn.
  return write_whole(to, c, actual, c.length >= kHeaderBytes, false);
}

FsError RealFiles::lock(const std::string& path, int, bool exclusive, bool blocking, kernel::Time timeout) {
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  int fd = -1;
  if (auto it = locks_.find(path); it != locks_.end()) {
    fd = it->second;  // converts the lock this rank holds, as flock(2) on the same descriptor
  } else {
    fd = ::open(real(path).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      catch_up();
      return from_errno(err);
    }
  }
  const int op = exclusive ? LOCK_EX : LOCK_SH;
  int err = ::flock(fd, op | LOCK_NB) == 0 ? 0 : errno;
  if (err == EWOULDBLOCK && blocking) err = wait_for_flock(fd, op, timeout);
  if (err == 0) {
    locks_[path] = fd;
  } else if (!locks_.count(path)) {
    ::close(fd);
  }
  catch_up();
  if (err == 0) return FsError::kOk;
  return err == ETIMEDOUT ? FsError::kTimedOut : err == EWOULDBLOCK ? FsError::kWouldBlock : from_errno(err);
}

namespace {

// What interrupts a flock(2) blocked on a helper thread: a handler that does nothing, installed
// without SA_RESTART, so the call returns EINTR.
void on_interrupt(int) {}

void install_interrupt_handler() {
  static const bool installed = [] {
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;
    return sigaction(kFlockInterruptSignal, &sa, nullptr) == 0;
  }();
  // Without it the signal is ignored and a wait past its timeout would wait for the lock.
  assert(installed && "sigaction of the flock interrupt signal (valid arguments) cannot fail");
  (void)installed;
}

}  // namespace

int RealFiles::wait_for_flock(int fd, int op, kernel::Time timeout) {
  // The rank blocks in flock(2) itself, on a helper thread, so it queues as the system queues
  // waiters (Linux wakes them in the order they blocked); this thread meanwhile keeps the
  // virtual clock, the timeout and the run's stop. Polling LOCK_NB instead would give a released
  // lock to whichever waiter polls next.
  install_interrupt_handler();
  struct Waiter {
    Waiter(int f, int o) : fd(f), op(o) {}
    Waiter(const Waiter&) = delete;
    Waiter& operator=(const Waiter&) = delete;
    int fd, op;
    std::atomic<bool> done{false};
    int err = 0;
    std::thread thread;
    // Interrupts the call until it has returned, then joins. Bounded by the call's return: a
    // signal interrupts it once it is inside, and one sent before it entered is followed by
    // another 1 ms later.
    void finish() {
      if (!thread.joinable()) return;
      while (!done.load()) {
        pthread_kill(thread.native_handle(), kFlockInterruptSignal);
        if (!done.load()) ::usleep(1000);
      }
      thread.join();
    }
    // Also when a stop of the run unwinds the rank from its sleep below.
    ~Waiter() { finish(); }
  } w(fd, op);
  w.thread = std::thread([&w] {
    w.err = ::flock(w.fd, w.op) == 0 ? 0 : errno;
    w.done.store(true);
  });
  const kernel::Time start = sim_.now();
  const kernel::Time poll = clock_.poll_interval();
  // Bounded by the timeout: each pass sleeps at least 1 ns of virtual time.
  while (!w.done.load()) {
    const kernel::Time waited = sim_.now() - start;
    if (waited >= timeout) break;
    sim_.sleep_for(std::min(poll, timeout - waited));
  }
  w.finish();
  return w.err == EINTR ? ETIMEDOUT : w.err;  // interrupted: the timeout passed first
}

FsError RealFiles::unlock(const std::string& path, int) {
  if (const FsError e = op_faults(); e != FsError::kOk) return e;
  auto it = locks_.find(path);
  if (it == locks_.end()) return FsError::kOk;  // flock(LOCK_UN) of nothing held succeeds
  ::flock(it->second, LOCK_UN);
  ::close(it->second);
  locks_.erase(it);
  catch_up();
  return FsError::kOk;
}

void RealFiles::release(const kernel::Process*) {
  for (auto& [fd, f] : open_) ::close(f.fd);
  open_.clear();
  for (auto& [p, fd] : locks_) ::close(fd);
  locks_.clear();
}

}  // namespace racesim::live
