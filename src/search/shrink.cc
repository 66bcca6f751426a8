// The shrinker (see shrink.h).
#include "src/search/shrink.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>

#include "src/scenario/file/quantity.h"
#include "src/search/search.h"

namespace racesim::search {

std::vector<std::string> override_texts(const OverrideList& overrides) {
  std::vector<std::string> out;
  for (const auto& [k, v] : overrides) out.push_back(k + "=" + v);
  return out;
}

namespace {

std::size_t nonzero(const std::vector<kernel::Choice>& tape) {
  return static_cast<std::size_t>(std::count_if(tape.begin(), tape.end(), [](const kernel::Choice& c) { return c.value != 0; }));
}

// Shortlex on tapes as their runs record them: shorter first, then smaller option by option.
bool simpler_tape(const std::vector<kernel::Choice>& a, const std::vector<kernel::Choice>& b) {
  if (a.size() != b.size()) return a.size() < b.size();
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].value != b[i].value) return a[i].value < b[i].value;
  }
  return false;
}

void set(OverrideList& list, const std::string& key, const std::string& value) {
  for (auto& [k, v] : list) {
    if (k == key) {
      v = value;
      return;
    }
  }
  list.emplace_back(key, value);
}

// ddmin's reduction to complements (Zeller 2002) over `count()` items: `without(lo, hi)` tries the
// run without items [lo, hi) and says whether that was kept (count() is then smaller). Halves
// first, then finer spans, down to single items; ends when every single item was tried without
// success, or `stopped()`. Whether anything was kept.
template <typename Count, typename Without, typename Stopped>
bool reduce_spans(Count count, Without without, Stopped stopped) {
  bool any = false;
  std::size_t chunks = 2;
  while (!stopped()) {
    const std::size_t n = count();
    if (n == 0) break;
    chunks = std::min(chunks, n);
    bool reduced = false;
    for (std::size_t c = 0; c < chunks && !stopped(); ++c) {
      if (without(c * n / chunks, (c + 1) * n / chunks)) {
        reduced = any = true;
        break;
      }
    }
    if (reduced) {
      chunks = std::max<std::size_t>(2, chunks - 1);
    } else if (chunks >= n) {
      break;  // every single item tried
    } else {
      chunks = std::min(n, chunks * 2);
    }
  }
  return any;
}

// The value a param drawn from `d` is simplest at (its median; a choice's first value); nullopt
// for a constant or an expression.
// The platform's durations that are not 0 (latencies, jitter, cache timeouts), by their dotted
// keys as --set takes them ("platform.storage.cache.meta_jitter"), in the file's order.
void platform_durations(const scenario::Value& node, const std::string& key, std::vector<std::string>& out) {
  if (node.is_map()) {
    for (const auto& kv : node.entries()) {
      if (kv.first.is_scalar()) platform_durations(kv.second, key + "." + kv.first.scalar(), out);
    }
    return;
  }
  if (!node.is_scalar()) return;
  const auto unit = scenario::infer_unit(node.scalar());
  if (!unit || *unit != scenario::Unit::kDuration) return;
  const auto v = scenario::parse_quantity(node.scalar(), scenario::Unit::kDuration);
  if (v && *v > 0) out.push_back(key);
}

std::optional<double> median_of(const scenario::Distribution& d) {
  using Kind = scenario::Distribution::Kind;
  switch (d.kind) {
    case Kind::kUniform:
      return (d.a + d.b) / 2;
    case Kind::kExponential:
      return d.a * std::log(2.0);
    case Kind::kNormal:
    case Kind::kLognormal:
      return d.a;
    case Kind::kChoice:
      return d.values.empty() ? std::nullopt : std::optional<double>(d.values.front());
    case Kind::kConstant:
    case Kind::kExpr:
      break;
  }
  return std::nullopt;
}

class Shrinker {
 public:
  Shrinker(const CompileFn& compile, std::uint64_t seed, const ShrinkOptions& o)
      : compile_(compile), seed_(seed), o_(o), started_(std::chrono::steady_clock::now()) {}

  bool out_of_budget() const {
    if (replays_ >= o_.max_replays) return true;
    if (o_.max_seconds <= 0) return false;
    const std::chrono::duration<double> spent = std::chrono::steady_clock::now() - started_;
    return spent.count() >= o_.max_seconds;
  }

  // Runs a candidate; when it fails the same way, returns its study and record (with the tape
  // it recorded).
  struct Outcome {
    std::shared_ptr<scenario::Study> study;
    run::RunOptions options;
    run::RunRecord record;
  };
  std::optional<Outcome> attempt(const OverrideList& overrides, const std::vector<int>& rank_streams,
                                 const std::vector<kernel::Choice>& tape, const std::string& signature) {
    if (out_of_budget()) return std::nullopt;
    // The tape passes replay one set of overrides many times: compile it once.
    const std::vector<std::string> key = override_texts(overrides);
    if (key != cached_key_ || !compiled_once_) {
      compiled_once_ = true;
      cached_key_ = key;
      cached_ = compile_(key);
    }
    if (!cached_) return std::nullopt;
    std::shared_ptr<scenario::Study> study = cached_;
    if (!rank_streams.empty() && rank_streams.size() != static_cast<std::size_t>(study->programs[0]->scenario->ranks)) {
      return std::nullopt;
    }
    ++replays_;
    run::RunOptions opts;
    opts.policy = kernel::PolicySpec::replay(tape);
    opts.policy.sticky = o_.sticky;
    opts.rank_streams = rank_streams;
    opts.record_choices = true;
    run::RunRecord r = run::run_one_caught(*study->programs[0], seed_, opts);
    if (!run::failed(r.outcome)) return std::nullopt;
    if (!signature.empty() && failure_signature(r) != signature) return std::nullopt;
    // What it recorded replays exactly: keep that, with a strict replay of it.
    opts.policy = kernel::PolicySpec::replay(r.tape);
    opts.policy.sticky = o_.sticky;
    return Outcome{std::move(study), std::move(opts), std::move(r)};
  }
  std::uint64_t replays() const { return replays_; }

 private:
  const CompileFn& compile_;
  std::uint64_t seed_;
  ShrinkOptions o_;
  std::chrono::steady_clock::time_point started_;
  std::uint64_t replays_ = 0;
  std::vector<std::string> cached_key_;
  std::shared_ptr<scenario::Study> cached_;
  bool compiled_once_ = false;
};

}  // namespace

std::optional<ShrinkResult> shrink(const CompileFn& compile, std::uint64_t seed, const std::vector<kernel::Choice>& tape,
                                   const std::vector<int>& rank_streams, const ShrinkOptions& o, std::string& error) {
  assert(o.max_replays >= 1);
  Shrinker s(compile, seed, o);
  ShrinkResult res;
  auto first = s.attempt({}, rank_streams, tape, "");
  if (!first) {
    error = s.out_of_budget() ? "the budget ended before the run was made" : "the run passes: there is no failure to shrink";
    return std::nullopt;
  }
  res.signature = failure_signature(first->record);
  res.ranks_before = first->study->programs[0]->scenario->ranks;
  res.nonzero_before = nonzero(first->record.tape);
  Shrinker::Outcome best = std::move(*first);
  OverrideList overrides;
  auto take = [&](OverrideList o2, Shrinker::Outcome&& out) {
    overrides = std::move(o2);
    best = std::move(out);
  };
  bool progress = true, stopped = false;
  // One override more, kept when the run still fails the same way.
  auto try_override = [&](const std::string& key, const std::string& value) {
    if (stopped) return;
    OverrideList o2 = overrides;
    set(o2, key, value);
    if (auto out = s.attempt(o2, best.options.rank_streams, best.record.tape, res.signature)) {
      take(std::move(o2), std::move(*out));
      progress = true;
    }
    stopped = s.out_of_budget();
  };
  while (progress && !stopped) {
    progress = false;
    // Ranks: ddmin over the ranks, each candidate the others renumbered, drawing what they drew.
    std::vector<int> streams = best.options.rank_streams;
    if (streams.empty()) {
      for (int r = 0; r < best.study->programs[0]->scenario->ranks; ++r) streams.push_back(r);
    }
    // (At least one rank stays.)
    const auto rank_count = [&] { return streams.size() > 1 ? streams.size() : 0; };
    const auto without_ranks = [&](std::size_t lo, std::size_t hi) {
      std::vector<int> kept(streams.begin(), streams.begin() + static_cast<std::ptrdiff_t>(lo));
      kept.insert(kept.end(), streams.begin() + static_cast<std::ptrdiff_t>(hi), streams.end());
      OverrideList o2 = overrides;
      set(o2, "ranks", std::to_string(kept.size()));
      auto out = s.attempt(o2, kept, best.record.tape, res.signature);
      stopped = s.out_of_budget();
      if (!out) return false;
      take(std::move(o2), std::move(*out));
      streams = std::move(kept);
      return true;
    };
    progress |= reduce_spans(rank_count, without_ranks, [&] { return stopped; });
    // Faults that can fire, turned off one at a time.
    // (Names first: taking a candidate replaces the study they would be read from.)
    std::vector<std::string> can_fire;
    for (const scenario::CompiledFault& f : best.study->programs[0]->faults) {
      if (f.probability > 0) can_fire.push_back(f.name);
    }
    for (const std::string& fault : can_fire) try_override("faults." + fault + ".probability", "0");
    // Params drawn from a distribution, each made a constant: its median (a choice: its first
    // value), the same for every rank and use.
    std::vector<std::pair<std::string, std::string>> medians;  // (param, its median as --set takes it)
    for (const auto& [name, param] : best.study->scenario.params) {
      const auto median = median_of(param.value);
      if (median && !param.text && !param.expr) {
        medians.emplace_back(name, scenario::format_quantity(*median, param.value.unit));
      }
    }
    for (const auto& [name, median] : medians) try_override("params." + name, median);
    // Platform durations, each set to 0 where the failure does not need it.
    std::vector<std::string> durations;
    platform_durations(best.study->scenario.platform, "platform", durations);
    for (const std::string& key : durations) try_override(key, "0s");
    // The tape: spans of its choices not at their first option set to it (ddmin's complements,
    // halves down to single choices), then each remaining one lowered by one.
    // (Over the choices not at their first option, as they stand after each reduction.)
    std::vector<std::size_t> at;
    const auto choice_count = [&] {
      at.clear();
      for (std::size_t i = 0; i < best.record.tape.size(); ++i) {
        if (best.record.tape[i].value != 0) at.push_back(i);
      }
      return at.size();
    };
    const auto without_choices = [&](std::size_t lo, std::size_t hi) {
      std::vector<kernel::Choice> t = best.record.tape;
      for (std::size_t k = lo; k < hi; ++k) t[at[k]].value = 0;
      auto out = s.attempt(overrides, best.options.rank_streams, t, res.signature);
      stopped = s.out_of_budget();
      if (!out || !simpler_tape(out->record.tape, best.record.tape)) return false;
      take(overrides, std::move(*out));
      return true;
    };
    progress |= reduce_spans(choice_count, without_choices, [&] { return stopped; });
    for (std::size_t i = 0; i < best.record.tape.size() && !stopped; ++i) {
      if (best.record.tape[i].value < 2) continue;  // 1 was tried as part of the spans (to 0)
      std::vector<kernel::Choice> t = best.record.tape;
      --t[i].value;
      if (auto out = s.attempt(overrides, best.options.rank_streams, t, res.signature);
          out && simpler_tape(out->record.tape, best.record.tape)) {
        take(overrides, std::move(*out));
        progress = true;
      }
      stopped = s.out_of_budget();
    }
  }
  res.complete = !stopped;
  // Which choices vary freely: every other option tried (up to 3) fails the same way too.
  res.free_choices_complete = true;
  for (std::size_t i = 0; i < best.record.tape.size(); ++i) {
    if (s.out_of_budget()) {
      res.free_choices_complete = false;
      break;
    }
    const kernel::Choice c = best.record.tape[i];
    bool free = true;
    int tried = 0;
    for (std::uint64_t v = 0; v < c.options && tried < 3 && free; ++v) {
      if (v == c.value) continue;
      ++tried;
      std::vector<kernel::Choice> t = best.record.tape;
      t[i].value = v;
      free = s.attempt(overrides, best.options.rank_streams, t, res.signature).has_value();
    }
    if (!free && s.out_of_budget()) {
      res.free_choices_complete = false;  // the budget ended while this one was tried
      break;
    }
    if (free && tried > 0) res.free_choices.push_back(i);
  }
  res.overrides = std::move(overrides);
  res.study = std::move(best.study);
  res.options = std::move(best.options);
  res.record = std::move(best.record);
  res.nonzero_after = nonzero(res.record.tape);
  res.replays = s.replays();
  return res;
}

}  // namespace racesim::search
