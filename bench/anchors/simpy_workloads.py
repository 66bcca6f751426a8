#!/usr/bin/python3
"""The kernel benchmark workloads of bench/workloads.h on SimPy, for side-by-side ratios
(bench/anchors/run_anchors.sh). One workload per invocation, one JSON line, as
simgrid_workloads does:

    simpy_workloads.py timers|ring|barrier N [LOOPS]
    {"engine":"simpy","workload":"timers","n":1000,"items":100000,"seconds":0.9,...}

SimPy here is Debian's python3-simpy, SimPy 2.3 (the classic process-interaction API: processes
are generators that yield `hold`, `put`/`get` on a Store, `waitevent` on a SimEvent); SimPy 3
and later are not packaged. Run with Debian's /usr/bin/python3, which that package serves.

Time is wall time around process creation plus simulate() (as the other engines' figures include
spawning); LOOPS replaces the workload's loop count (K, M or R), for the steady-state rate of a
short and a long run (run_anchors.sh); memory is the growth of the peak resident set (VmHWM) from just before the processes
are created, divided by N. Each run checks that it simulated what the workload says (its end
time, and that every process finished) and exits 1 otherwise, so a ratio never compares unlike work.
"""
import json
import sys
import time

from SimPy.Simulation import (Process, SimEvent, Simulation, Store, get, hold, put,
                              waitevent)

TIMER_LOOPS = 100   # K
RING_LAPS = 10      # M
BARRIER_ROUNDS = 10  # R
MASK = (1 << 64) - 1
finished = [0]  # processes that ran their whole loop


def lcg_next(x):
    return (x * 6364136223846793005 + 1442695040888963407) & MASK


def timer_delays(pid, loops):
    x = (pid * 0x9E3779B97F4A7C15 + 12345) & MASK
    for _ in range(loops):
        x = lcg_next(x)
        yield 1 + (x >> 33) % 1000


class Timer(Process):
    def run(self, pid, loops):
        for d in timer_delays(pid, loops):
            yield hold, self, d
        finished[0] += 1


class RingMember(Process):
    def run(self, pid, n, boxes, laps):
        token = 0
        for lap in range(laps):
            if not (pid == 0 and lap == 0):
                yield get, self, boxes[pid], 1
                token = self.got[0]
            yield hold, self, 1
            if not (pid == n - 1 and lap == laps - 1):
                yield put, self, boxes[(pid + 1) % n], [token + 1]
        finished[0] += 1


class Barrier:
    """A reusable barrier: the last of n arrivals releases the others and passes through."""

    def __init__(self, sim, n):
        self.sim, self.n, self.count = sim, n, 0
        self.event = SimEvent(sim=sim)

    def arrive(self):
        """Returns the event to wait for, or None for the last arrival."""
        self.count += 1
        if self.count < self.n:
            return self.event
        self.count = 0
        released, self.event = self.event, SimEvent(sim=self.sim)
        released.signal()
        return None


class BarrierMember(Process):
    def run(self, barrier, rounds):
        for _ in range(rounds):
            ev = barrier.arrive()
            if ev is not None:
                yield waitevent, self, ev
        finished[0] += 1


def status_kib(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1])
    return 0


def main():
    if len(sys.argv) not in (3, 4) or sys.argv[1] not in ("timers", "ring", "barrier"):
        sys.exit(f"usage: {sys.argv[0]} timers|ring|barrier N [LOOPS]")
    workload, n = sys.argv[1], int(sys.argv[2])
    default = {"timers": TIMER_LOOPS, "ring": RING_LAPS, "barrier": BARRIER_ROUNDS}[workload]
    loops = int(sys.argv[3]) if len(sys.argv) == 4 else default
    if n < 2 or loops < 1:
        sys.exit(f"usage: {sys.argv[0]} timers|ring|barrier N [LOOPS] (N >= 2, LOOPS >= 1)")
    expected_end = None
    if workload == "timers":
        expected_end = max(sum(timer_delays(pid, loops)) for pid in range(n))
    elif workload == "ring":
        expected_end = n * loops
    else:
        expected_end = 0

    rss_before = status_kib("VmRSS:")
    start = time.perf_counter()
    sim = Simulation()
    sim.initialize()
    if workload == "timers":
        items = n * loops
        for pid in range(n):
            p = Timer(sim=sim)
            sim.activate(p, p.run(pid, loops))
    elif workload == "ring":
        items = n * loops
        boxes = [Store(capacity=1, sim=sim) for _ in range(n)]
        for pid in range(n):
            p = RingMember(sim=sim)
            sim.activate(p, p.run(pid, n, boxes, loops))
    else:
        items = n * loops
        barrier = Barrier(sim, n)
        for _ in range(n):
            p = BarrierMember(sim=sim)
            sim.activate(p, p.run(barrier, loops))
    sim.simulate(until=1e18)
    seconds = time.perf_counter() - start
    hwm = status_kib("VmHWM:")
    if sim.now() != expected_end or finished[0] != n:
        sys.exit(f"simpy {workload} {n}: ended at {sim.now()} with {finished[0]} processes done,"
                 f" expected {expected_end} with {n}")
    print(json.dumps({"engine": "simpy", "workload": workload, "n": n, "loops": loops,
                      "items": items,
                      "seconds": round(seconds, 6), "items_per_second": round(items / seconds, 1),
                      "bytes_per_process": round(max(hwm - rss_before, 0) * 1024.0 / n, 1)}))


if __name__ == "__main__":
    main()
