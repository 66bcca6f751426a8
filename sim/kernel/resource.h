// Resource: c identical servers with one FIFO queue (a G/G/c station). Processes acquire a
// server, hold it for their service, and release it; queue length and utilisation are
// integrated over virtual time for reports and for validation against queueing theory
// (M/M/1 mean wait rho / (mu - lambda)).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/kernel/sync.h"

namespace racesim::kernel {

class Resource final : public NamedWaitable {
 public:
  struct Stats {
    std::size_t servers = 0;
    std::size_t busy = 0;
    std::size_t queue_length = 0;
    std::size_t queue_length_peak = 0;
    double queue_length_mean = 0;  // time-weighted since creation
    double utilisation = 0;        // busy server-time / (servers * elapsed), in [0, 1]
    std::uint64_t acquisitions = 0;
    std::uint64_t timeouts = 0;
    Time wait_total = 0;           // summed over acquisitions
    Time wait_max = 0;
  };

  // REQUIRES: servers >= 1.
  Resource(Simulation& sim, std::string name, std::size_t servers);

  // Waits for a free server (FIFO, unless the schedule policy decides wake order: a kWake choice,
  // tape.h). kOk or kTimeout.
  WaitStatus acquire(Time timeout = kTimeMax);
  // REQUIRES: the calling process holds a server (or the call comes from a callback on behalf
  // of a holder that is recorded as such).
  void release();
  // acquire(); sleep_for(service); release().
  void use(Time service) {
    acquire();
    sim_.sleep_for(service);
    release();
  }
  Stats stats() const;
  void releasers(const WaitQueue&, const Process&,
                 std::vector<const Process*>& out) const override;

 private:
  void integrate();

  std::size_t servers_;
  std::size_t busy_ = 0;
  std::vector<const Process*> holders_;
  Time created_;
  Time last_change_;
  double queue_area_ = 0;  // integral of queue length dt (ns)
  double busy_area_ = 0;   // integral of busy servers dt (ns)
  std::size_t queue_peak_ = 0;
  std::uint64_t acquisitions_ = 0;
  std::uint64_t timeouts_ = 0;
  Time wait_total_ = 0;
  Time wait_max_ = 0;
  WaitQueue waiters_{this, "acquire"};
};

}  // namespace racesim::kernel
