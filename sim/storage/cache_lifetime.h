// How long an nfs client trusts a cached entry (an attribute, a negative lookup, a directory
// listing) without asking the server: Linux's attribute timeout, as fs/nfs/inode.c keeps it.
//
//   - An entry answers from the cache while less than its lifetime has passed since it was last
//     refreshed from the server (nfs_attribute_timeout: read_cache_jiffies + attrtimeo).
//   - A refresh that finds the entry changed starts its lifetime again at the minimum (acregmin,
//     or acdirmin for directories and negative lookups) from that moment.
//   - A refresh that finds it unchanged doubles the lifetime, up to the maximum (acregmax,
//     acdirmax), only if the lifetime has run out since it was last set (nfs_update_inode:
//     !time_in_range(now, attrtimeo_timestamp, attrtimeo_timestamp + attrtimeo)); otherwise
//     the lifetime and when it was set stay. Two lookups of one name that reach the server at
//     once therefore leave it at its minimum: the second finds the first's lifetime running.
//     Linux's range is closed, so a refresh exactly at the end does not double there; here it
//     does (a client polling every 500 ms revalidates at 0, 3, 9, 21 s, not at 0, 3, 6, 12 s),
//     which only moves the instant of a doubling by one lifetime, never whether a change is
//     seen at the next revalidation.
#pragma once

#include <algorithm>
#include <cassert>

#include "sim/kernel/time.h"

namespace racesim::storage {

struct CacheLifetime {
  bool refreshed = false;         // the server has answered once
  kernel::Time refreshed_at = 0;  // its last answer
  kernel::Time lifetime = 0;      // 0 (a minimum of 0, noac): every lookup asks the server
  kernel::Time lifetime_set_at = 0;

  // Whether the cache answers at `now` without a round trip.
  bool fresh(kernel::Time now) const { return refreshed && now - refreshed_at < lifetime; }

  // The server answered at `now`; `changed`: its answer differs from the cached one (ignored for
  // an entry never refreshed). REQUIRES: 0 <= lo <= hi, now >= the last refresh.
  void refresh(kernel::Time now, bool changed, kernel::Time lo, kernel::Time hi) {
    assert(lo >= 0 && lo <= hi && "a cache lifetime's bounds are 0 <= min <= max");
    assert((!refreshed || now >= refreshed_at) && "refreshes come in time order");
    if (changed || !refreshed) {
      lifetime = lo;
      lifetime_set_at = now;
    } else if (now - lifetime_set_at >= lifetime) {
      lifetime = std::max(lo, lifetime > hi / 2 ? hi : std::min(hi, 2 * lifetime));
      lifetime_set_at = now;
    }
    refreshed = true;
    refreshed_at = now;
  }
};

}  // namespace racesim::storage
