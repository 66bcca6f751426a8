// LiveLink: what a run needs from outside its simulation when it runs live (racesim live, src/live/):
// each rank is its own OS process running a one-rank simulation paced by the real clock, so the
// mounts are real directories and barriers and marks are shared with the other ranks' processes.
// RunState routes barriers and marks through it, and StorageRuntime takes its mounts from it; a
// simulated run has none (RunState::live() is nullptr) and nothing changes.
#pragma once

#include <memory>
#include <string>

#include "sim/kernel/time.h"
#include "sim/storage/files.h"
#include "src/scenario/language/platform.h"

namespace racesim::scenario {

class LiveLink {
 public:
  virtual ~LiveLink() = default;
  // Mount `m` as a real directory; `instance` is the model's name for it ("cache", or
  // "scratch@node0" for a node's local mount).
  virtual std::unique_ptr<storage::Files> mount(const MountSpec& m, const std::string& instance) = 0;
  // Blocks the calling rank until all `parties` ranks have arrived at barrier `name` (cyclic, as
  // RunState::barrier). REQUIRES: called from the rank's simulated process.
  virtual void arrive_and_wait(const std::string& name, int parties) = 0;
  virtual void set_mark(const std::string& name) = 0;
  virtual bool marked(const std::string& name) = 0;
  // Waits up to `timeout` (virtual ns) for mark `name`; false when it timed out.
  // REQUIRES: called from the rank's simulated process.
  virtual bool wait_mark(const std::string& name, kernel::Time timeout) = 0;
  // Enters cluster-wide semaphore `name` (created at its first use with `permits`), waiting in
  // arrival order, as RunState::semaphore_enter. Returns the semaphore's permits; when they
  // are not `permits`, it was not entered. REQUIRES: called from the rank's simulated process.
  virtual int semaphore_enter(const std::string& name, int permits) = 0;
  virtual void semaphore_leave(const std::string& name) = 0;
};

}  // namespace racesim::scenario
