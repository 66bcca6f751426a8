// A device's communication engine: collectives are enqueued per communicator (one in-order
// stream per communicator, as ProcessGroupNCCL/HCCL keep one stream per group and device) and
// executed one at a time by the device, in the order in which they become ready. A collective
// becomes ready when its input exists: `ready_after` the enqueue (the device work that produces
// it, such as slicing a broadcast tensor).
//
// This is where an order inversion across communicators comes from: two ranks enqueue the same
// collectives in the same program order, but on one rank the input of scatter #k on a
// sub-communicator is ready only after broadcast #k+1 on world was enqueued, so that device
// starts the broadcast first and waits in it for the other rank, whose device started the
// scatter and waits for the first: a cycle, reported as a deadlock (or, with an exec timeout,
// as the timeout of the host's sync). With every collective on one communicator the order is
// the program order on every rank and no cycle can form.
//
// The device needs no process of its own: it starts a collective when the host enqueues it or
// when its input becomes ready (a callback at that time), and the engine tells it when the
// collective ends (Arrival), from one callback per collective for all its members. So a rank
// costs one fiber (its host) and a collective one event per member (the host's wake from sync)
// plus one per collective. In deadlock reports the host blocked in sync names what its device
// is running and waits for the hosts of the members that have not arrived:
//
//   rank 0: sync on comm queue 'rank 0/comm' (running scatter #1 on efsdp{0,1}): waiting for
//     rank 1 (blocked in sync on comm queue 'rank 1/comm' (running broadcast #2 on world))
//
// When several lanes' fronts are ready at once, which the device starts is a model choice on the
// run's tape (fifo: the earliest ready, then the earliest enqueued), so a search can try the
// inversions that ties allow.
//
// Cost: enqueue, starting a collective and completing one are O(log L) in the number L of this
// rank's communicators (a rank of a point-to-point fan-out has one per peer) and O(S) in the
// number S of hosts blocked in sync, never O(L) per collective.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "sim/collective/engine.h"
#include "sim/kernel/sync.h"

namespace racesim::collective {

class CommQueue final : public kernel::NamedWaitable, private Arrival {
 public:
  // The queue of rank R, named "rank R/comm". In the engine's deadlock reports rank R is
  // the process that last synced here (before any sync: the first that enqueued).
  CommQueue(kernel::Simulation& sim, Engine& engine, int rank);
  CommQueue(const CommQueue&) = delete;
  CommQueue& operator=(const CommQueue&) = delete;

  // Enqueues `call` on `comm` for this rank (the host does not wait).
  void enqueue(Communicator& comm, const Call& call, Time ready_after = 0);
  // Blocks the host until every collective enqueued so far on `comm` (nullptr: on every
  // communicator) has completed. Errors: the timeout (naming the collective the device is in)
  // or a failed collective.
  kernel::Status sync(const Communicator* comm, Time timeout = kernel::kTimeMax);
  // The stackless form of sync (REQUIRES: a stackless process, Simulation::arm_wait): true when
  // it armed the host's wait; false when nothing is left to wait for, and status() is what sync
  // returns.
  bool arm_sync(const Communicator* comm, Time timeout = kernel::kTimeMax);
  // Once the wait that arm_sync armed ended with `status` (kOk or kTimeout), what sync returns;
  // kKilled (a kill while the run goes on) forgets the wait. `timeout` as given to arm_sync.
  // REQUIRES: not at teardown (the queue may be gone then).
  kernel::Status sync_ended(kernel::WaitStatus status, Time timeout);
  // What sync returns when nothing is left to wait for: ok, or the first failed collective's error.
  kernel::Status status() const { return failed_ ? failure_ : kernel::Status::ok(); }
  std::uint64_t pending() const { return pending_; }
  // How many collectives this rank has enqueued on `comm`: the next one it enqueues there is
  // its collective number enqueued(comm) + 1 on it (a rank's calls on a communicator start in
  // the order it enqueued them), the sequence number the engine matches members by.
  std::uint64_t enqueued(const Communicator& comm) const;

  // "comm queue 'rank 0/comm'", with " (running scatter #1 on efsdp{0,1})" while the device
  // runs a collective.
  std::string describe() const override;
  // For a host blocked in sync: the hosts of the members that the running collective waits
  // for.
  void releasers(const kernel::WaitQueue&, const kernel::Process&,
                 std::vector<const kernel::Process*>& out) const override;

 private:
  struct Item {
    Call call;
    Time ready = 0;
    std::uint64_t order = 0;  // enqueue order on this rank, over every lane
  };
  template <typename T, std::size_t N>
  using Small = boost::container::small_vector<T, N>;
  // Its communicator: lane_comms_ at its index. Items wait in a FIFO whose first two live in
  // the lane itself (a rank rarely has more in flight on one communicator).
  struct Lane {
    Small<Item, 2> items;  // items[head..] wait, oldest first
    std::uint32_t head = 0;
    std::uint64_t enqueued = 0, completed = 0;
    std::size_t size() const { return items.size() - head; }
    bool empty() const { return size() == 0; }
    const Item& front() const { return items[head]; }
    void pop_front() {
      if (++head == items.size()) {
        items.clear();
        head = 0;
      } else if (2 * head >= items.size()) {
        // Half the items are done: drop them, so a lane that never drains stays bounded.
        items.erase(items.begin(), items.begin() + head);
        head = 0;
      }
    }
  };
  // The front item of a non-empty lane, in `fronts_`: a min-heap on (ready, order), so its top
  // is the item the device starts next. Each non-empty lane has exactly one entry.
  struct Front {
    Time ready = 0;
    std::uint64_t order = 0;
    std::uint32_t lane = 0;
  };
  // What a host blocked in sync waits for: lane `lane`'s completed count to reach `target`, or
  // (lane == kAllLanes) `remaining` more completions of items enqueued before it called sync.
  struct Syncer {
    const kernel::Process* host = nullptr;
    std::uint32_t lane = 0;
    std::uint64_t target = 0;     // a lane: its completed count then; every lane: next_order_
    std::uint64_t remaining = 0;  // every lane: items enqueued before the sync not yet done
  };
  static constexpr std::uint32_t kAllLanes = ~std::uint32_t{0};  // Syncer::lane: every lane
  static constexpr std::uint32_t kNoLane = ~std::uint32_t{0};    // find_lane: none
  // Up to this many lanes a scan of `lane_comms_` (one cache line) finds a lane; beyond, the
  // index does.
  static constexpr std::size_t kScannedLanes = 8;

  std::uint32_t lane(Communicator& comm);  // its index; created on first use
  // With lane `first` just taken from `fronts_` as the next to start and other fronts ready too:
  // which to start is a model choice (sim/kernel/tape.h; option 0 is `first`). Returns the lane
  // chosen; the rest are back in `fronts_`.
  std::uint32_t choose_among_ready(std::uint32_t first);
  std::uint32_t find_lane(const Communicator* comm) const;  // kNoLane: none
  void push_front_of(std::uint32_t lane);
  // Makes the calling process stand for this rank in the engine's reports.
  void note_host();
  // The first half of sync and arm_sync: true when the calling host must wait (its Syncer is in
  // syncers_waiting_).
  bool add_syncer(const Communicator* comm);
  // Removes host `p`'s Syncer (its wait ended, or it was killed).
  void forget_syncer(const kernel::Process* p);
  // What sync returns once its wait ended with `status` (not kKilled).
  kernel::Status wait_result(kernel::WaitStatus status, Time timeout) const;
  // Starts ready collectives, one at a time, while the device is idle; when the next one's
  // input is not ready, arms a callback for its ready time. Callable from a process or a
  // callback; bounded by the number of items waiting.
  void pump();
  void collective_done(const kernel::Status& st) override;  // the running collective ended
  // Counts the completion of `item` on `lane` against every blocked host and wakes those
  // whose sync is satisfied (in the order they blocked).
  void completed(std::uint32_t lane, const Item& item);

  // A rank's queue is read at every collective it runs, and with thousands of ranks it is cold
  // each time: every line of it touched is a miss. So what enqueue, start, completion and sync
  // use comes first and together, the first two lanes, fronts and syncer live in this object
  // (not behind a pointer each), and what only a failure, a timer or a rank of many
  // communicators needs comes last (bench/README.md, "Why the kernel and the models are built this way").
  Engine& engine_;
  int rank_;
  bool running_ = false;  // the device is in a collective: `running_item_` on `running_lane_`
  // A collective failed: the rest complete unrun. The same as !failure_.is_ok(), kept here so
  // that the hot path reads no line of the cold `failure_`.
  bool failed_ = false;
  std::uint32_t running_lane_ = 0;
  std::uint64_t next_order_ = 0;
  std::uint64_t pending_ = 0;
  const kernel::Process* host_ = nullptr;  // who stands for the rank (note_host)
  Time pump_at_ = kernel::kTimeMax;         // when the armed pump callback runs (kTimeMax: none)
  Small<Communicator*, 2> lane_comms_;      // lane i's communicator (compact for the scan)
  Small<Front, 2> fronts_;
  Small<Syncer, 1> syncers_waiting_;  // one per host blocked in sync, in the order they blocked
  Item running_item_;
  kernel::WaitQueue syncers_{this, "sync"};
  Small<Lane, 2> lanes_;  // in order of first use (deterministic)
  // Cold.
  kernel::Status failure_ = kernel::Status::ok();  // the first failed collective's error
  kernel::EventHandle pump_timer_;
  std::unordered_map<const Communicator*, std::uint32_t> lane_index_;  // filled past kScannedLanes
};

}  // namespace racesim::collective
