#!/usr/bin/python3
"""The compiled-model cache race (scenarios/om_read_while_write.yaml) on a `local` mount, written
directly on SimPy, for the scenario-level ratio of bench/anchors/run_anchors.sh. It is what an
expert would write by hand for this one question: no scenario language, no fault seam, no trace,
only the file-system mechanism the race depends on and the eleven strategies.

    simpy_om_cache.py RANKS SEEDS [--first-seed S]
    {"engine":"simpy","scenario":"om_read_while_write","mount":"local","ranks":8,"seeds":200,
     "runs":2200,"seconds":...,"runs_per_second":...,"failures":{"poll_glob":37,...}}

A run is one seed of one strategy; every strategy runs the same seeds. The model is the one
sim/storage/fs.h documents for `local` (one node, every write visible at once), with the
scenario's parameters:
  - each metadata operation (open, stat, glob, mkdir, rename, fsync, close, flock) costs 1 ms
    plus a jitter uniform in [0, 1 ms) drawn from the mount's own stream;
  - data moves in 4 MiB chunks, each at min(500 MiB/s / the client's transfers, 1 GiB/s / all
    transfers), the rate fixed when the chunk starts; written bytes are visible chunk by chunk;
  - O_TRUNC empties the same inode in place (its content identity changes), O_EXCL fails on an
    existing name, rename moves the inode atomically;
  - a read sees the size at open, transfers it, and is intact when the content identity did not
    change meanwhile and it read the writer's whole length;
  - flock is FIFO with shared and exclusive modes.
Ranks start at uniform(0, 60 s), compiling takes lognormal(median 40 s, sigma 0.25), the file is
180 MiB (plus a 16-byte trailer for validate_retry), polls are every 200 ms. A run fails at the
first torn load or failed open/read, and stops there, as racesim's runs stop at their first
failed check. The random streams are Python's (seeded per seed, rank and mount), not racesim's,
so runs match racesim's in distribution, not seed by seed: run_anchors.sh compares the failure
rates with racesim's on the same point (--validate).

SimPy is Debian's SimPy 2.3 (see simpy_workloads.py). Sub-steps are generators delegated to with
`yield from`, which SimPy 2's process loop passes through.
"""
import json
import math
import random
import sys
import time

from SimPy.Simulation import Process, SimEvent, Simulation, hold, waitevent

MIB = 1 << 20
META_LATENCY = 1e-3
META_JITTER = 1e-3
BANDWIDTH = 1 << 30          # 1 GiB/s, every transfer
CLIENT_BANDWIDTH = 500 * MIB  # one node's transfers
CHUNK = 4 * MIB
OM_SIZE = 180 * MIB
OM_SIZE_WITH_TRAILER = 188743696
POLL = 0.2
POLL_TIMEOUT = 300.0
LOAD_TIMEOUT = 300.0
STRATEGIES = ["poll_glob", "exists_check", "flock_as_in_pr", "tmp_rename", "tmp_dir_rename",
              "size_stable", "size_stable_excl", "done_marker", "barrier_after_publish",
              "private_cache", "validate_retry"]


class Failed(Exception):
    """The run's first failed check: a torn load, or an open or read that failed."""


class Inode:
    __slots__ = ("content", "written", "writers")

    def __init__(self, content):
        self.content = content  # (writer rank, version, final length)
        self.written = 0
        self.writers = 0


class FlockState:
    def __init__(self):
        self.holders = []
        self.exclusive = False
        self.waiters = []  # (process, exclusive, event), FIFO

    def fits(self, exclusive):
        return not self.holders or (not exclusive and not self.exclusive)


class LocalFs:
    """One node's file system, shared by every rank of the run."""

    def __init__(self, sim, seed):
        self.sim = sim
        self.jitter = random.Random(seed * 7919 + 17)
        self.names = {}
        self.dirs = {"/cache"}
        self.version = 0
        self.active = 0
        self.locks = {}

    def meta(self, proc):
        yield hold, proc, META_LATENCY + self.jitter.random() * META_JITTER

    def transfer(self, proc, nbytes):
        # All ranks are on one node: the client's transfers are all transfers.
        self.active += 1
        left = nbytes
        while left > 0:
            step = min(left, CHUNK)
            rate = min(CLIENT_BANDWIDTH / self.active, BANDWIDTH / self.active)
            yield hold, proc, math.ceil(step / rate * 1e9) / 1e9
            left -= step
        self.active -= 1

    def create(self, proc, path, rank, mode, length):
        """Returns the inode opened for writing; raises FileExistsError for O_EXCL."""
        yield from self.meta(proc)
        f = self.names.get(path)
        if f is not None:
            if mode == "exclusive":
                raise FileExistsError(path)
            self.version += 1
            f.content = (rank, self.version, length)  # O_TRUNC: the same inode, emptied
            f.written = 0
        else:
            self.version += 1
            f = Inode((rank, self.version, length))
            self.names[path] = f
        f.writers += 1
        return f

    def write(self, proc, f, offset, nbytes):
        left = nbytes
        while left > 0:
            step = min(left, CHUNK)
            yield from self.transfer(proc, step)
            offset += step
            f.written = max(f.written, offset)
            left -= step
        return offset

    def close(self, proc, f):
        yield from self.meta(proc)
        f.writers -= 1

    def write_file(self, proc, path, rank, nbytes, mode="truncate", fsync=False):
        f = yield from self.create(proc, path, rank, mode, nbytes)
        yield from self.write(proc, f, 0, nbytes)
        if fsync:
            yield from self.meta(proc)
        yield from self.close(proc, f)

    def exists(self, proc, path):
        yield from self.meta(proc)
        return path in self.names or path in self.dirs

    def size(self, proc, path):
        yield from self.meta(proc)
        f = self.names.get(path)
        return None if f is None else f.written

    def glob_om(self, proc, directory):
        # glob("/cache/*.om"): non-hidden names directly in the directory ending in ".om".
        yield from self.meta(proc)
        prefix = directory + "/"
        return any(p.startswith(prefix) and "/" not in p[len(prefix):] and p.endswith(".om")
                   and not p[len(prefix):].startswith(".") for p in self.names)

    def mkdir(self, proc, path):
        yield from self.meta(proc)
        self.dirs.add(path)

    def rename(self, proc, src, dst):
        yield from self.meta(proc)
        self.names[dst] = self.names.pop(src)

    def read(self, proc, path):
        """Returns True when the read was intact; raises FileNotFoundError."""
        yield from self.meta(proc)
        f = self.names.get(path)
        if f is None:
            raise FileNotFoundError(path)
        nbytes, content = f.written, f.content
        yield from self.transfer(proc, nbytes)
        changed = f.content != content or f.written < nbytes
        return not changed and nbytes == content[2]

    def lock(self, proc, path, exclusive):
        yield from self.meta(proc)
        if path not in self.names:
            raise FileNotFoundError(path)
        lk = self.locks.setdefault(path, FlockState())
        if not lk.waiters and lk.fits(exclusive):
            lk.holders.append(proc)
            lk.exclusive = exclusive
            return
        ev = SimEvent(sim=self.sim)
        lk.waiters.append((proc, exclusive, ev))
        yield waitevent, proc, ev  # granted before the signal

    def unlock(self, proc, path):
        lk = self.locks[path]
        lk.holders.remove(proc)
        if not lk.holders:
            lk.exclusive = False
        while lk.waiters and lk.fits(lk.waiters[0][1]):
            p, exclusive, ev = lk.waiters.pop(0)
            lk.holders.append(p)
            lk.exclusive = exclusive
            ev.signal()
        return
        yield  # a generator like the other operations


class Run:
    """One seed of one strategy."""

    def __init__(self, strategy, ranks, seed):
        self.sim = Simulation()
        self.sim.initialize()
        self.fs = LocalFs(self.sim, seed)
        self.strategy = strategy
        self.ranks = ranks
        self.failed = None
        self.finished = 0
        self.arrived = 0
        self.published = SimEvent(sim=self.sim)
        for rank in range(ranks):
            p = Rank(sim=self.sim)
            self.sim.activate(p, p.run(self, rank, random.Random(seed * 1000003 + rank)))

    def fail(self, why):
        if self.failed is None:
            self.failed = why
        self.sim.stopSimulation()

    def execute(self):
        self.sim.simulate(until=3600.0)
        if self.failed is None and self.finished != self.ranks:
            sys.exit(f"simpy_om_cache: {self.strategy} ended with {self.finished} of {self.ranks} "
                     f"ranks done at {self.sim.now()} s")
        return self.failed is None


class Rank(Process):
    def run(self, run, rank, rng):
        try:
            yield hold, self, rng.uniform(0.0, 60.0)
            yield from getattr(self, run.strategy)(run, run.fs, rank, rng)
        except Failed as e:
            run.fail(str(e))
            return
        except (FileNotFoundError, FileExistsError) as e:
            run.fail(f"no_io_errors: {e!r}")
            return
        run.finished += 1

    # ---- the steps the strategies share ----
    def compile_and_write(self, fs, rank, rng, path="/cache/model.om", size=OM_SIZE,
                          mode="truncate", fsync=False):
        yield hold, self, rng.lognormvariate(math.log(40.0), 0.25)
        yield from fs.write_file(self, path, rank, size, mode, fsync)

    def load(self, fs, path="/cache/model.om"):
        if not (yield from fs.read(self, path)):
            raise Failed(f"model_loads_intact: torn read of {path}")

    def if_exists(self, fs, path, then, otherwise):
        """The scenario's `if: {exists: PATH}`: runs the steps `then()` or `otherwise()`."""
        if (yield from fs.exists(self, path)):
            yield from then()
        else:
            yield from otherwise()

    def ort_session(self, fs, rank, rng):
        yield from self.if_exists(fs, "/cache/model.om", lambda: self.load(fs),
                                  lambda: self.compile_and_write(fs, rank, rng))

    def wait_stable_then_load(self, fs):
        start, same, last = self.sim.now(), 0, None
        while self.sim.now() - start < POLL_TIMEOUT:
            size = yield from fs.size(self, "/cache/model.om")
            if size is not None and last is not None and last == size:
                same += 1
                if same >= 3:
                    yield from self.load(fs)
                    return
            else:
                same = 0
            last = size
            yield hold, self, POLL
        raise Failed("no_io_errors: size not stable")

    # ---- the strategies ----
    def poll_glob(self, run, fs, rank, rng):
        if rank == 0:
            yield from self.compile_and_write(fs, rank, rng)
            return
        start = self.sim.now()
        while not (yield from fs.glob_om(self, "/cache")):
            if self.sim.now() - start >= POLL_TIMEOUT:
                break
            yield hold, self, min(POLL, POLL_TIMEOUT - (self.sim.now() - start))
        yield from self.ort_session(fs, rank, rng)

    def exists_check(self, run, fs, rank, rng):
        yield from self.ort_session(fs, rank, rng)

    def flock_as_in_pr(self, run, fs, rank, rng):
        path = "/cache/model.om"
        if (yield from fs.exists(self, path)):
            yield from fs.lock(self, path, exclusive=False)
            yield from self.load(fs)
            yield from fs.unlock(self, path)
        else:
            yield hold, self, rng.lognormvariate(math.log(40.0), 0.25)
            f = yield from fs.create(self, path, rank, "truncate", OM_SIZE)
            yield from fs.lock(self, path, exclusive=True)
            yield from fs.write(self, f, 0, OM_SIZE)
            yield from fs.unlock(self, path)
            yield from fs.close(self, f)

    def tmp_rename(self, run, fs, rank, rng):
        tmp = f"/cache/model.om.tmp.{rank}"

        def publish():
            yield from self.compile_and_write(fs, rank, rng, tmp, fsync=True)
            yield from fs.rename(self, tmp, "/cache/model.om")
        yield from self.if_exists(fs, "/cache/model.om", lambda: self.load(fs), publish)

    def tmp_dir_rename(self, run, fs, rank, rng):
        tmp = f"/cache/.tmp-{rank}/model.om"

        def publish():
            yield hold, self, rng.lognormvariate(math.log(40.0), 0.25)
            yield from fs.mkdir(self, f"/cache/.tmp-{rank}")
            yield from fs.write_file(self, tmp, rank, OM_SIZE, fsync=True)
            yield from fs.rename(self, tmp, "/cache/model.om")
        yield from self.if_exists(fs, "/cache/model.om", lambda: self.load(fs), publish)

    def size_stable(self, run, fs, rank, rng):
        yield from self.if_exists(fs, "/cache/model.om", lambda: self.wait_stable_then_load(fs),
                                  lambda: self.compile_and_write(fs, rank, rng))

    def size_stable_excl(self, run, fs, rank, rng):
        def publish():
            try:
                yield from self.compile_and_write(fs, rank, rng, mode="exclusive")
            except FileExistsError:
                pass  # a later compiler finds the name taken and runs from memory
        yield from self.if_exists(fs, "/cache/model.om", lambda: self.wait_stable_then_load(fs),
                                  publish)

    def done_marker(self, run, fs, rank, rng):
        if (yield from fs.exists(self, "/cache/model.om.done")):
            yield from self.load(fs)
        else:
            yield from self.compile_and_write(fs, rank, rng)
            yield from fs.write_file(self, "/cache/model.om.done", rank, 0)

    def barrier_after_publish(self, run, fs, rank, rng):
        if rank == 0:
            yield from self.compile_and_write(fs, rank, rng)
        run.arrived += 1
        if run.arrived == run.ranks:
            run.published.signal()
        else:
            yield waitevent, self, run.published
        if rank != 0:
            yield from self.load(fs)

    def private_cache(self, run, fs, rank, rng):
        path = f"/cache/rank{rank}/model.om"
        if (yield from fs.exists(self, path)):
            yield from self.load(fs, path)
        else:
            yield from self.compile_and_write(fs, rank, rng, path)

    def validate_retry(self, run, fs, rank, rng):
        path = "/cache/model.om"
        if not (yield from fs.exists(self, path)):
            yield from self.compile_and_write(fs, rank, rng, size=OM_SIZE_WITH_TRAILER)
            return
        start = self.sim.now()
        while not (yield from fs.read(self, path)):
            if self.sim.now() - start >= LOAD_TIMEOUT:
                raise Failed(f"model_loads_intact: {path} still fails validation")
            yield hold, self, POLL


def main():
    args = sys.argv[1:]
    first = 0
    if "--first-seed" in args:
        i = args.index("--first-seed")
        first = int(args[i + 1])
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(f"usage: {sys.argv[0]} RANKS SEEDS [--first-seed S]")
    ranks, seeds = int(args[0]), int(args[1])
    if ranks < 1 or seeds < 1:
        sys.exit(f"usage: {sys.argv[0]} RANKS SEEDS (both >= 1)")
    failures = {s: 0 for s in STRATEGIES}
    start = time.perf_counter()
    for seed in range(first, first + seeds):
        for s in STRATEGIES:  # one seed of every strategy in turn, as BM_OmReadWhileWrite does
            if not Run(s, ranks, seed).execute():
                failures[s] += 1
    seconds = time.perf_counter() - start
    runs = seeds * len(STRATEGIES)
    print(json.dumps({"engine": "simpy", "scenario": "om_read_while_write", "mount": "local",
                      "ranks": ranks, "seeds": seeds, "runs": runs, "seconds": round(seconds, 6),
                      "runs_per_second": round(runs / seconds, 3), "failures": failures}))


if __name__ == "__main__":
    main()
