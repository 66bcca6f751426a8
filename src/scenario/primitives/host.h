// What the host family gives the other families: each node's CPU cores (sim/host/cpu_scheduler.h)
// when platform.host sets `cores`, for the host work their steps and models do (a compute step,
// a compile, a profiler's analysis, the storage client's copies through the page cache).
#pragma once

#include "sim/host/cpu_scheduler.h"
#include "src/scenario/compile/step.h"
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
// For a step's compile function: whether its host work runs on the node's cores here (the
// platform has them); if so, the CPU model's metrics are declared (host.cpu_busy_s,
// host.cpu_wait_s, host.cpu_preemptions, host.cpu_migrations, host.cpu_runnable_max).
bool host_work_on_cpu(Compiler& c);
// host_work_on_cpu for a compute step: false too when platform.host.compute is `sleep` (a live
// run sleeps through compute steps, scaled; its cores run the rest of the host work).
bool compute_on_cpu(Compiler& c);
// `t` of host work for the rank of `ctx` (a compute step, a compile, a profiler's analysis): on
// its node's cores when `on_cpu` (host_work_on_cpu, decided when the step was compiled), else a
// sleep, as on a core of its own.
void host_work(RankContext& ctx, kernel::Time t, bool on_cpu);

}  // namespace racesim::scenario
