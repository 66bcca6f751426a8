// racesim list: the primitives, the families' platform sections, fault kinds, checks and schedule
// policies a scenario can use, and the explore modes and choice kinds of a search.
#include <iostream>

#include "src/cli/command.h"
#include "src/scenario/compile/registry.h"

namespace racesim::cli {
namespace {

int list_command() {
  const auto& registry = scenario::builtin_registry();
  std::cout << "primitives:\n";
  for (const auto* p : registry.all()) std::cout << "  " << p->help << "\n";
  std::cout << "platform sections of the families (besides ranks_per_node, storage, device, collective, mesh, model):\n";
  for (const auto* s : registry.all_sections()) std::cout << "  " << s->help << "\n";
  std::cout << "faults (faults: [{kind: K, name: N, on: RANKS | {ranks: RANKS, mount: M, comm: C, "
               "link: intra|inter}, probability: P, fires: P, times: N, ARG: VALUE}]; probability arms it per run and "
               "rank, fires per site where it could act, times bounds the sites it fires at):\n";
  for (const auto* f : registry.all_faults()) {
    std::string args;
    for (const auto& a : f->args) {
      args += (args.empty() ? "" : ", ") + a.name + ": " +
              (a.default_value.empty() ? std::string("a ") + scenario::to_string(a.unit) : a.default_value);
    }
    std::string aim;
    for (auto k : f->aimable) aim += std::string(aim.empty() ? "; aim at a " : " or a ") + kernel::to_string(k);
    std::cout << "  " << f->name << " {" << args << "} - " << f->help << aim << "\n";
  }
  std::cout << "checks (hard: always on; soft: on when `checks:` lists it or is absent):\n";
  for (const auto* c : registry.all_checks()) {
    std::cout << "  " << c->name << " (" << (c->hard ? "hard" : "soft") << ") - " << c->description << "\n";
  }
  std::cout << "policies (run, replay, check --determinism --policy):\n"
               "  fifo, random, pct[:DEPTH[:STEPS]]\n"
               "explore modes (explore --mode):\n"
               "  random, pct[:DEPTH], swarm, exhaustive[:DELAYS]\n"
               "choice kinds (on a run's tape; choice files):\n"
               "  schedule, wake, model, fault, draw\n";
  return kExitOk;
}

}  // namespace

Command add_list_command(CLI::App& parent) {
  auto* cmd = parent.add_subcommand("list", "list primitives, faults, checks, policies, explore modes and choice kinds");
  return {cmd, [] { return list_command(); }};
}

}  // namespace racesim::cli
