// The storage fault kinds: what can go wrong inside a FileSystem operation, declared here, next to
// the model where they bite (sim/storage/mount_faults.h asks the run's kernel::FaultSeam for them,
// for the model and for a live run's real directory alike). Each
// may be aimed at ranks and at one mount (`on: {ranks: [0], mount: shared}`); aimed at a mount,
// it leaves every other mount alone.
//
//   writer_stall   fs.write  each write() by the rank pauses for DURATION after the fraction AT
//                            of its bytes (a writer descheduled, a server stalled mid-write)
//   enospc         fs.write  the rank's writes fail with ENOSPC after the fraction AT of their
//                            bytes, leaving a partial file
//   latency_spike  fs.op     every operation the rank starts in [AT, AT+DURATION) waits EXTRA
//                            before it reaches the server
//   eio            fs.op     every operation of the rank fails with EIO with probability RATE
//   slow_storage   fs.op     the rank's metadata operations and transfers take FACTOR times
//                            longer (a degraded server or network path)
//
// fs.op is every operation: open (create), write, fsync, close, stat, list, read, mkdir,
// rename, unlink, copy, lock, unlock.
#pragma once

#include <string_view>
#include <vector>

#include "sim/kernel/faults.h"

namespace racesim::storage {

inline constexpr std::string_view kWriterStall = "writer_stall";
inline constexpr std::string_view kEnospc = "enospc";
inline constexpr std::string_view kLatencySpike = "latency_spike";
inline constexpr std::string_view kEio = "eio";
inline constexpr std::string_view kSlowStorage = "slow_storage";

// The declarations of the kinds above (arguments, defaults, what they can be aimed at).
const std::vector<kernel::FaultKindSpec>& fault_kinds();

}  // namespace racesim::storage
