// The emulated accelerator: device memory (capacity, allocations, peak, OOM) and in-order
// streams with events and a host-side sync with a timeout.
//
// A stream executes its operations one after another on a process of its own (a daemon named
// "rank R/NAME"), so the host can enqueue work and go on; `sync` blocks the host until all the
// work it enqueued so far is done, or fails after its timeout (HCCL's exec timeout shows up
// here). An operation is a kernel (a duration), a host<->device copy (bytes at the link's
// bandwidth), a wait for an event recorded on another stream, or any blocking callable (a
// collective on the stream's rank). When a host waits in `sync` for a stream that is stuck, a
// deadlock report says so: "rank 1: sync on stream 'rank 1/comm': waiting for rank 1/comm
// (blocked in scatter #5 on fsdp{0,1,2,3})".
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sim/device/memory_pool.h"
#include "sim/kernel/faults.h"
#include "sim/kernel/simulation.h"
#include "sim/kernel/status.h"
#include "sim/kernel/sync.h"

namespace racesim::device {

using kernel::Time;

struct DeviceConfig {
  std::uint64_t memory = 64ull << 30;  // bytes of device memory
  double h2d_bandwidth = 25e9;         // bytes/s
  double d2h_bandwidth = 25e9;
  Time launch_latency = 5 * kernel::kMicrosecond;  // per enqueued operation
};

class Device;

class Stream final : public kernel::NamedWaitable {
 public:
  Stream(Device& device, std::string name);
  ~Stream() override;
  // Enqueue (the host does not wait).
  void kernel(Time duration);
  void copy(std::uint64_t bytes, bool host_to_device);
  // Runs `op` on the stream's process when it reaches it (a collective, a wait on something).
  // `op` returns an error to fail the stream: later syncs return it.
  void enqueue(std::string what, std::function<kernel::Status()> op);
  // Records an event: the number of operations enqueued so far.
  std::uint64_t record() const { return enqueued_; }
  // Makes the stream wait, at this point of its queue, for `other` to complete `event`.
  // REQUIRES: `event` was recorded on `other` (event <= other.record()); other is not this stream.
  void wait_event(Stream& other, std::uint64_t event);
  // Blocks the host until every operation enqueued so far is done. Errors: the timeout (the
  // message names what the stream is doing), or a failed operation.
  kernel::Status sync(Time timeout = kernel::kTimeMax);
  std::uint64_t completed() const { return completed_; }
  const kernel::Process* process() const { return worker_; }

  void releasers(const kernel::WaitQueue&, const kernel::Process&,
                 std::vector<const kernel::Process*>& out) const override;

 private:
  struct Op {
    std::string what;
    std::function<kernel::Status()> run;
  };
  void loop();
  void done_one();

  Device& device_;
  std::deque<Op> queue_;
  std::uint64_t enqueued_ = 0;
  std::uint64_t completed_ = 0;
  std::string doing_;
  kernel::Status failed_ = kernel::Status::ok();
  kernel::Semaphore work_;
  kernel::WaitQueue syncers_{this, "sync"};
  std::map<const kernel::Process*, std::uint64_t> targets_;
  kernel::WaitQueue event_waiters_{this, "wait_event"};
  kernel::Process* worker_ = nullptr;
};

class Device {
 public:
  // `name` like "rank 3": streams are named "rank 3/NAME".
  Device(kernel::Simulation& sim, std::string name, DeviceConfig config);
  kernel::Simulation& sim() { return sim_; }
  const std::string& name() const { return name_; }
  const DeviceConfig& config() const { return config_; }
  // The run's fault seam and the rank this device belongs to (device.compute: the straggler
  // fault); nullptr: no faults.
  void set_faults(kernel::FaultSeam* seam, int rank) {
    faults_ = seam;
    rank_ = rank;
  }
  kernel::FaultSeam* faults() const { return faults_; }
  int rank() const { return rank_; }

  // Allocates `bytes`; an allocation beyond capacity is an OOM error naming what was asked, what
  // is in use and the capacity. Returns a handle for free(). O(1).
  kernel::Result<std::uint64_t> alloc(std::uint64_t bytes, const std::string& what) { return memory_.alloc(bytes, what); }
  // Frees what `handle` holds; a handle already freed (or never returned) is ignored. O(1).
  void free(std::uint64_t handle) { memory_.free(handle); }
  std::uint64_t used() const { return memory_.used_bytes(); }
  std::uint64_t peak() const { return memory_.peak_bytes(); }

  Stream& stream(const std::string& name);

 private:
  kernel::Simulation& sim_;
  std::string name_;
  DeviceConfig config_;
  MemoryPool memory_;
  std::map<std::string, std::unique_ptr<Stream>> streams_;
  kernel::FaultSeam* faults_ = nullptr;
  int rank_ = -1;
};

}  // namespace racesim::device
