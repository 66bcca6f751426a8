// The collective fault kinds, declared next to the engine where they bite (engine.cc asks the
// run's kernel::FaultSeam for them at collective.enter):
//
//   slow_link   collective.enter  a collective with a member whose slow_link fault hits it
//                                 takes FACTOR times its alpha-beta cost (the largest factor
//                                 among its members). Aim it at a communicator by label
//                                 (`on: {comm: fsdp}`: every fsdp group, not world) or at a link
//                                 (`on: {link: inter}`: collectives that cross nodes).
#pragma once

#include <string_view>
#include <vector>

#include "sim/kernel/faults.h"

namespace racesim::collective {

inline constexpr std::string_view kSlowLink = "slow_link";

const std::vector<kernel::FaultKindSpec>& fault_kinds();

}  // namespace racesim::collective
