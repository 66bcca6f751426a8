#include "sim/device/device.h"

#include "sim/kernel/bytes.h"

#include <cassert>
#include <cmath>
#include <cstdio>
#include <vector>

namespace racesim::device {

namespace {


// Wakes the processes in `queue` whose target in `targets` is at most `reached`.
void wake_reached(kernel::Simulation& sim, const kernel::WaitQueue& queue,
                  const std::map<const kernel::Process*, std::uint64_t>& targets, std::uint64_t reached) {
  std::vector<kernel::Process*> ready;
  queue.for_each([&](kernel::Process& p) {
    auto it = targets.find(&p);
    if (it != targets.end() && it->second <= reached) ready.push_back(&p);
  });
  for (kernel::Process* p : ready) sim.wake(p);
}

}  // namespace

Stream::Stream(Device& device, std::string name)
    : NamedWaitable(device.sim(), "stream", device.name() + "/" + name),
      device_(device),
      work_(device.sim(), this->name() + " work", 0) {
  worker_ = sim_.spawn(this->name(), [this] { loop(); },
                       {.daemon = true, .group = device.name(), .lane = name});
}

Stream::~Stream() = default;

void Stream::loop() {
  // Runs until the simulation ends: each pass takes one enqueued operation.
  for (;;) {
    work_.acquire();
    assert(!queue_.empty() && "the work semaphore counts the queued operations");
    Op op = std::move(queue_.front());
    queue_.pop_front();
    doing_ = op.what;
    if (device_.config().launch_latency > 0) sim_.sleep_for(device_.config().launch_latency);
    sim_.trace_record('B', "stream", op.what);
    kernel::Status st = failed_.is_ok() ? op.run() : kernel::Status::ok();
    sim_.trace_record('E', "stream", op.what);
    if (!st.is_ok() && failed_.is_ok()) failed_ = st;
    doing_.clear();
    done_one();
  }
}

void Stream::done_one() {
  ++completed_;
  assert(completed_ <= enqueued_ && "a stream completes only what was enqueued, in order");
  wake_reached(sim_, syncers_, targets_, completed_);
  wake_reached(sim_, event_waiters_, targets_, completed_);
}

void Stream::kernel(Time duration) {
  enqueue("kernel", [this, duration] {
    // The fault point device.compute: a straggler rank's kernels take FACTOR times longer.
    kernel::FaultSeam* f = device_.faults();
    sim_.sleep_for(f ? f->compute_time(device_.rank(), duration) : duration);
    return kernel::Status::ok();
  });
}

void Stream::copy(std::uint64_t bytes, bool host_to_device) {
  const double bw = host_to_device ? device_.config().h2d_bandwidth : device_.config().d2h_bandwidth;
  const Time t = kernel::transfer_time(static_cast<double>(bytes), bw);
  enqueue(host_to_device ? "h2d" : "d2h", [this, t] {
    sim_.sleep_for(t);
    return kernel::Status::ok();
  });
}

void Stream::enqueue(std::string what, std::function<kernel::Status()> op) {
  queue_.push_back({std::move(what), std::move(op)});
  ++enqueued_;
  work_.release();
}

void Stream::wait_event(Stream& other, std::uint64_t event) {
  assert(event <= other.enqueued_ && "a stream waits only on an event recorded on the other stream");
  assert(&other != this && "a stream waiting on its own event would wait on itself");
  enqueue("wait_event " + other.name(), [this, &other, event] {
    if (other.completed_ < event) {
      other.targets_[worker_] = event;
      sim_.wait_on(&other.event_waiters_, kernel::kTimeMax);
      other.targets_.erase(worker_);
    }
    return kernel::Status::ok();
  });
}

kernel::Status Stream::sync(Time timeout) {
  const std::uint64_t target = enqueued_;
  if (completed_ < target) {
    kernel::Process* self = sim_.current();
    targets_[self] = target;
    const auto st = sim_.wait_on(&syncers_, sim_.deadline_after(timeout));
    targets_.erase(self);
    if (st == kernel::WaitStatus::kTimeout) {
      return kernel::Status::error("sync on stream '" + name() + "' timed out after " +
                                   kernel::format_duration(timeout) +
                                   (doing_.empty() ? std::string() : " in " + doing_));
    }
  }
  return failed_;
}

void Stream::releasers(const kernel::WaitQueue&, const kernel::Process&,
                       std::vector<const kernel::Process*>& out) const {
  out.push_back(worker_);
}

Device::Device(kernel::Simulation& sim, std::string name, DeviceConfig config)
    : sim_(sim), name_(std::move(name)), config_(config), memory_("device memory on " + name_, config_.memory) {}

Stream& Device::stream(const std::string& name) {
  auto& slot = streams_[name];
  if (!slot) slot = std::make_unique<Stream>(*this, name);
  return *slot;
}

}  // namespace racesim::device
