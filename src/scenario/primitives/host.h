// What the host family gives the other families: each node's CPU cores (sim/host/cpu_scheduler.h)
// when platform.host sets `cores`, for the host work their steps and models do (a compute step,
// the storage client's copies through the page cache).
#pragma once

#include "sim/host/cpu_scheduler.h"
#include "src/scenario/execute/run_state.h"

namespace racesim::scenario {

struct Platform;
class Compiler;

// Whether the platform's nodes have a CPU model (platform.host.cores > 0). Decided when a step
// is compiled, so that a run without one pays nothing.
bool host_cpus_on(const Platform& platform);
// The CPU scheduler of `rank`'s node, made on first use. REQUIRES: host_cpus_on(run.platform()).
host::CpuScheduler& host_cpu(RunState& run, int rank);
// The same for a node. REQUIRES: host_cpus_on(run.platform()), 0 <= node.
host::CpuScheduler& node_cpu(RunState& run, int node);
// Declares the CPU model's metrics (host.cpu_busy_s, host.cpu_wait_s, host.cpu_preemptions,
// host.cpu_runnable_max), for a step that runs host work on the cores.
void declare_host_cpu_metrics(Compiler& c);

}  // namespace racesim::scenario
