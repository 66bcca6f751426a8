#include "sim/kernel/fiber_scheduler.h"

#include <boost/fiber/operations.hpp>
#include <boost/fiber/type.hpp>

#include "sim/kernel/process.h"

namespace racesim::kernel {

namespace {
thread_local FiberScheduler* tls_scheduler = nullptr;
}

FiberScheduler::FiberScheduler() { tls_scheduler = this; }

FiberScheduler& FiberScheduler::for_this_thread() {
  if (tls_scheduler == nullptr) {
    // Boost moves its ready contexts (its dispatcher) into the new algorithm via awakened().
    boost::fibers::use_scheduling_algorithm<FiberScheduler>();
  }
  return *tls_scheduler;
}

void FiberScheduler::awakened(boost::fibers::context* ctx) noexcept {
  if (ctx->is_context(boost::fibers::type::dispatcher_context)) {
    dispatcher_ = ctx;
    dispatcher_ready_ = true;
    return;
  }
  if (spawning != nullptr && ctx->is_context(boost::fibers::type::worker_context)) {
    // A new process's fiber: the simulation schedules its start as an event.
    spawning->ctx_ = ctx;
    return;
  }
  ready_.push_back(ctx);
}

boost::fibers::context* FiberScheduler::pick_next() noexcept {
  if (reap_pending_ && dispatcher_ready_) {
    reap_pending_ = false;
    dispatcher_ready_ = false;
    return dispatcher_;
  }
  if (next_ != nullptr) {
    boost::fibers::context* c = next_;
    next_ = nullptr;
    return c;
  }
  if (!ready_.empty()) {
    boost::fibers::context* c = ready_.front();
    ready_.pop_front();
    return c;
  }
  if (dispatcher_ready_) {
    dispatcher_ready_ = false;
    return dispatcher_;
  }
  return nullptr;
}

bool FiberScheduler::has_ready_fibers() const noexcept {
  return next_ != nullptr || !ready_.empty() || dispatcher_ready_;
}

}  // namespace racesim::kernel
