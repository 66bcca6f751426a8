#include "sim/storage/metadata_server.h"

#include <algorithm>
#include <cassert>

namespace racesim::storage {

const char* to_string(MetaOp op) {
  switch (op) {
    case MetaOp::kCreate: return "create";
    case MetaOp::kStat: return "stat";
    case MetaOp::kMkdir: return "mkdir";
    case MetaOp::kUnlink: return "unlink";
    case MetaOp::kRename: return "rename";
    case MetaOp::kReaddir: return "readdir";
  }
  return "?";
}

MetadataConfig MetadataConfig::lustre() {
  MetadataConfig c;
  c.threads = 8;
  // service = threads / aggregate rate; latency = 1 / single-thread rate - service (header).
  auto set = [&c](MetaOp op, double single_per_s, double aggregate_per_s) {
    const double service_s = c.threads / aggregate_per_s;
    const double latency_s = 1 / single_per_s - service_s;
    c.of(op) = {kernel::to_time(latency_s * 1e9), kernel::to_time(service_s * 1e9)};
  };
  set(MetaOp::kCreate, 504, 15'000);
  set(MetaOp::kStat, 2'000, 400'000);
  set(MetaOp::kUnlink, 1'800, 100'000);
  set(MetaOp::kMkdir, 1'800, 19'000);
  set(MetaOp::kRename, 504, 15'000);
  set(MetaOp::kReaddir, 5'000, 450'000);
  return c;
}

MetadataServer::MetadataServer(int threads) : threads_(threads) {
  assert(threads >= 1);
  for (int i = 0; i < threads; ++i) free_at_.push(0);
}

Time MetadataServer::serve(Time arrival, Time service) {
  assert(arrival >= last_arrival_ && "MetadataServer::serve: arrivals out of order");
  last_arrival_ = arrival;
  // FIFO over identical threads: this operation takes the thread that frees first, no earlier
  // than the operations ahead of it (their threads were taken in arrival order).
  const Time free = free_at_.top();
  free_at_.pop();
  assert(service >= 0 && free_at_.size() + 1 == static_cast<std::size_t>(threads_));
  const Time start = std::max(arrival, free);
  const Time end = kernel::add_time(start, service);
  free_at_.push(end);
  // Queue depth at this arrival: the operations that arrived and have not started, this one too.
  while (!starts_.empty() && starts_.top() <= arrival) starts_.pop();
  if (start > arrival) starts_.push(start);
  stats_.queue_peak = std::max(stats_.queue_peak, starts_.size());
  ++stats_.ops;
  stats_.wait_total = kernel::add_time(stats_.wait_total, start - arrival);
  stats_.wait_max = std::max(stats_.wait_max, start - arrival);
  stats_.busy_total = kernel::add_time(stats_.busy_total, service);
  return end;
}

}  // namespace racesim::storage
