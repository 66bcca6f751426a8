// SIGINT and SIGTERM during a campaign: the first one asks the campaign to stop starting runs
// (the handler then gives way to the default, so a second one ends the process at once).
//
// The flag lives in static storage because a signal handler can reach nothing else; it is the
// command line's only state outside an object, written by the handler and read by the campaign.
#pragma once

#include <atomic>

namespace racesim::cli {

// Installs the handler for SIGINT and SIGTERM (once per campaign).
void catch_interrupts();
// Set once a signal arrived: what runs check between runs.
const std::atomic<bool>& stop_requested();
// The signal that arrived (0: none).
int interrupt_signal();

}  // namespace racesim::cli
