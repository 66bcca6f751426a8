#include "sim/kernel/stack_pool.h"

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cassert>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "sim/kernel/asan.h"

namespace racesim::kernel {

asan::StackBounds asan::thread_stack() {
#if defined(RACESIM_ASAN)
  // pthread_getattr_np reads /proc/self/maps for the main thread (slow with many stack
  // mappings), so the bounds are looked up once per thread.
  thread_local const StackBounds bounds = [] {
    StackBounds b;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
      void* addr = nullptr;
      std::size_t size = 0;
      if (pthread_attr_getstack(&attr, &addr, &size) == 0) b = {addr, size};
      pthread_attr_destroy(&attr);
    }
    return b;
  }();
  return bounds;
#else
  return {};  // only sanitizer annotations use it
#endif
}

namespace {
std::size_t page_size() {
  static const std::size_t p = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return p;
}
std::size_t round_up(std::size_t v, std::size_t to) { return (v + to - 1) / to * to; }

// Each guard page splits a mapping in two, so guards are limited to a quarter of the system's
// mapping limit (vm.max_map_count, read once), leaving the rest for the program itself.
std::uint64_t guard_budget() {
  static const std::uint64_t budget = [] {
    std::uint64_t limit = 65530;
    if (std::FILE* f = std::fopen("/proc/sys/vm/max_map_count", "r")) {
      unsigned long long v = 0;
      if (std::fscanf(f, "%llu", &v) == 1 && v > 0) limit = v;
      std::fclose(f);
    }
    return limit / 4;
  }();
  return budget;
}
}  // namespace

StackPool& StackPool::for_this_thread() {
  thread_local StackPool pool;
  return pool;
}

StackPool::~StackPool() {
  for (const Slab& s : slabs_) ::munmap(s.base, s.len);
}

void StackPool::grow(std::size_t bytes) {
  const std::size_t page = page_size();
  const std::size_t stride = bytes + page;  // guard page + stack
  // About 4 MiB of address space per slab; at least 4 stacks.
  std::size_t count = (std::size_t{4} << 20) / stride;
  if (count < 4) count = 4;
  const std::size_t len = stride * count;
  // Every stack of this size ever mapped may be free at once: the free list holds room for all
  // of them from here on, so deallocate() never allocates (it runs where no exception may pass,
  // a fiber's exit, and is most often called when memory is short).
  std::size_t total = count;
  for (const Slab& s : slabs_) {
    if (s.stack_bytes == bytes) total += s.len / stride;
  }
  free_[bytes].reserve(total);
  void* base = ::mmap(nullptr, len, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED) {
    throw StackMapError("cannot map " + std::to_string(len >> 10) + " KiB for fiber stacks (" +
                        std::to_string(stats_.stacks_in_use) + " in use on this thread, " +
                        std::to_string(stats_.bytes_mapped >> 20) + " MiB mapped): " + std::strerror(errno));
  }
  // The address range may have held another thread's stacks (a pool unmapped when its thread
  // ended); under ASan their frames' shadow would survive into these stacks.
  asan::forget_stack({base, len});
  try {
    slabs_.push_back({static_cast<char*>(base), len, bytes});
  } catch (...) {
    ::munmap(base, len);
    throw;
  }
  stats_.bytes_mapped += len;
  std::vector<void*>& list = free_[bytes];
  auto* p = static_cast<char*>(base);
  // Hand out low addresses first: push in reverse so pop_back yields ascending stacks.
  for (std::size_t i = count; i-- > 0;) {
    char* guard = p + i * stride;
    if (stats_.guarded_stacks < guard_budget()) {
      if (::mprotect(guard, page, PROT_NONE) == 0) ++stats_.guarded_stacks;
    }
    list.push_back(guard + stride);  // stack top (stacks grow down)
  }
  stats_.stacks_created += count;
}

boost::context::stack_context StackPool::allocate(std::size_t bytes) {
  bytes = round_up(bytes < 4096 ? 4096 : bytes, page_size());
  std::vector<void*>& list = free_[bytes];
  if (list.empty()) grow(bytes);
  std::vector<void*>& again = free_[bytes];
  void* top = again.back();
  again.pop_back();
  ++stats_.stacks_in_use;
  boost::context::stack_context sc;
  sc.size = bytes;
  sc.sp = top;
  last_ = sc;
  return sc;
}

std::size_t StackPool::deepest_use_bytes() const {
  const std::size_t page = page_size();
  std::size_t deepest = 0;
  std::vector<unsigned char> resident;
  for (const Slab& s : slabs_) {
    const std::size_t stride = s.stack_bytes + page;
    resident.resize(s.len / page);
    if (::mincore(s.base, s.len, resident.data()) != 0) continue;
    for (std::size_t off = 0; off + stride <= s.len; off += stride) {
      const std::size_t first_page = (off + page) / page;  // after the guard
      const std::size_t pages = s.stack_bytes / page;
      for (std::size_t pg = 0; pg < pages; ++pg) {
        if (!(resident[first_page + pg] & 1)) continue;
        const auto* w = reinterpret_cast<const std::uint64_t*>(s.base + (first_page + pg) * page);
        std::size_t i = 0;
        while (i < page / 8 && w[i] == 0) ++i;
        if (i == page / 8) continue;
        const std::size_t depth = s.stack_bytes - pg * page - i * 8;
        if (depth > deepest) deepest = depth;
        break;
      }
    }
  }
  return deepest;
}

void StackPool::deallocate(boost::context::stack_context& sc) noexcept {
  asan::forget_stack({static_cast<const char*>(sc.sp) - sc.size, sc.size});
  const auto list = free_.find(sc.size);
  assert(list != free_.end() && list->second.size() < list->second.capacity());
  list->second.push_back(sc.sp);  // within the capacity grow() reserved: no allocation
  --stats_.stacks_in_use;
}

}  // namespace racesim::kernel
