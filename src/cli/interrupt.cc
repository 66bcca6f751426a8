// SIGINT and SIGTERM during a campaign (interrupt.h).
#include "src/cli/interrupt.h"

#include <csignal>

namespace racesim::cli {
namespace {

std::atomic<int> g_signal{0};
std::atomic<bool> g_stop{false};
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<bool>::is_always_lock_free,
              "set from a signal handler");

extern "C" void on_interrupt(int sig) {
  g_signal.store(sig);
  g_stop.store(true);
}

}  // namespace

void catch_interrupts() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

const std::atomic<bool>& stop_requested() { return g_stop; }

int interrupt_signal() { return g_signal.load(); }

}  // namespace racesim::cli
