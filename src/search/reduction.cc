// Partial-order reduction (see reduction.h).
#include "src/search/reduction.h"

#include <algorithm>
#include <cassert>

#include "src/scenario/compile/step.h"

namespace racesim::search {

namespace {

// A dispatch as the reduction sees it. What it touched is the footprints of the steps it ran:
// footprints[first, last) of the run's flat list (no allocation per dispatch).
struct Dispatch {
  std::int32_t entity = -1;  // who ran: a process id, or a callback's own id (below -1)
  std::int32_t owner = -1;   // whose option picked it: the process, or the callback's owner
  int rank = -1;             // the rank it acts for (-1: none, which depends on everything)
  bool everything = false;   // it ran outside the program's steps
  std::uint32_t first = 0, last = 0;
  kernel::Time at = 0;
  std::int32_t choice = -1;
};

constexpr std::uint8_t kStart = 0;  // the kernel's event kinds (event_log.h)
constexpr std::uint8_t kCallback = 3;

class Dispatches {
 public:
  explicit Dispatches(const run::RunRecord& r) : all_(r.event_log.size()) {
    std::vector<const void*> last_site(r.process_ranks.size(), nullptr);
    auto known = [&](std::int32_t p) { return p >= 0 && static_cast<std::size_t>(p) < last_site.size(); };
    std::size_t entered = 0;
    for (std::size_t e = 0; e < r.event_log.size(); ++e) {
      const kernel::EventStamp& s = r.event_log[e];
      Dispatch& d = all_[e];
      d.at = s.at;
      d.choice = s.choice;
      d.first = static_cast<std::uint32_t>(footprints_.size());
      if (s.kind == kCallback) {
        // A callback acts on what the step of its owner that scheduled it acts on (a model's
        // completion of that step's operation); one with no owner, on everything.
        d.entity = -2 - static_cast<std::int32_t>(e);
        d.owner = s.owner;
        d.rank = known(s.owner) ? r.process_ranks[static_cast<std::size_t>(s.owner)] : -1;
        add(d, known(s.owner) ? last_site[static_cast<std::size_t>(s.owner)] : nullptr);
      } else {
        d.entity = s.process;
        d.owner = s.process;
        d.rank = known(s.process) ? r.process_ranks[static_cast<std::size_t>(s.process)] : -1;
        // A process's first dispatch starts it before any step: it touches only what it enters.
        if (s.kind != kStart || s.site != nullptr) add(d, s.site);
        if (known(s.process) && s.site != nullptr) last_site[static_cast<std::size_t>(s.process)] = s.site;
      }
      for (; entered < r.entered_sites.size() && r.entered_sites[entered].event == e; ++entered) {
        add(d, r.entered_sites[entered].site);
        if (s.kind != kCallback && known(s.process)) {
          last_site[static_cast<std::size_t>(s.process)] = r.entered_sites[entered].site;
        }
      }
      d.last = static_cast<std::uint32_t>(footprints_.size());
    }
  }

  std::size_t size() const { return all_.size(); }
  const Dispatch& operator[](std::size_t i) const { return all_[i]; }

  // Whether two dispatches of different entities may not commute.
  bool depend(const Dispatch& a, const Dispatch& b) const {
    if (a.everything || b.everything || a.rank < 0 || b.rank < 0 || a.rank == b.rank) return true;
    for (std::uint32_t i = a.first; i < a.last; ++i) {
      for (std::uint32_t j = b.first; j < b.last; ++j) {
        if (footprints_[i]->conflicts(*footprints_[j])) return true;
      }
    }
    return false;
  }

 private:
  // A null site is a process outside the program's steps: it touches everything.
  void add(Dispatch& d, const void* site) {
    if (site == nullptr) {
      d.everything = true;
      return;
    }
    const scenario::Footprint& f = static_cast<const scenario::Step*>(site)->touches;
    if (f.everything) {
      d.everything = true;
    } else if (!f.touches.empty()) {
      footprints_.push_back(&f);
    }
  }

  std::vector<Dispatch> all_;
  std::vector<const scenario::Footprint*> footprints_;
};

}  // namespace

std::vector<Alternative> schedule_alternatives(const run::RunRecord& r) {
  std::vector<Alternative> out;
  const Dispatches ds(r);
  // Options at choice `c` for `owner`: its own, or every other when it had none there (or the
  // owners were not recorded).
  std::vector<char> every_option(r.tape.size(), 0);  // choices given all their options already
  auto alternatives_at = [&](std::int32_t c, std::int32_t owner) {
    const auto pos = static_cast<std::size_t>(c);
    assert(pos < r.tape.size());
    if (every_option[pos]) return;
    const kernel::Choice& choice = r.tape[pos];
    bool had = false;
    if (r.choice_owners.count(pos) == choice.options) {
      const kernel::OwnerId* owners = r.choice_owners.of(pos);
      for (std::uint64_t v = 0; v < choice.options; ++v) {
        if (owners[v] != owner) continue;
        had = true;
        if (v != choice.value) out.push_back({pos, v});
      }
    }
    if (had) return;
    every_option[pos] = 1;
    for (std::uint64_t v = 0; v < choice.options; ++v) {
      if (v != choice.value) out.push_back({pos, v});
    }
  };
  // The most recent context switch with a choice at or before each dispatch (BPOR's conservative
  // point): a dispatch whose entity differs from the one before it.
  std::vector<std::int32_t> last_switch(ds.size(), -1);
  for (std::size_t k = 0; k < ds.size(); ++k) {
    const bool switch_here = k > 0 && ds[k].entity != ds[k - 1].entity && ds[k].choice >= 0;
    last_switch[k] = switch_here ? static_cast<std::int32_t>(k) : (k > 0 ? last_switch[k - 1] : -1);
  }
  // Races are between dispatches of one instant: a window of the log.
  std::size_t from = 0;
  for (std::size_t j = 0; j < ds.size(); ++j) {
    while (ds[from].at != ds[j].at) ++from;
    for (std::size_t i = from; i < j; ++i) {
      if (ds[i].choice < 0 || ds[i].entity == ds[j].entity || !ds.depend(ds[i], ds[j])) continue;
      alternatives_at(ds[i].choice, ds[j].owner);
      if (i > 0 && last_switch[i - 1] >= 0) {
        alternatives_at(ds[static_cast<std::size_t>(last_switch[i - 1])].choice, ds[j].owner);
      }
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace racesim::search
