// Expressions in values and names (expr.h): parsing, units, evaluation, and their use through
// the compiler (per-rank values, names, params defined from params, text params).
#include "src/scenario/language/expr.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/src/scenario/fixture.h"

namespace racesim::scenario {
namespace {

using ::testing::HasSubstr;

// Names for the parser alone: n = 8 (a count), t = 2s, p = "/cache/run1", d = uniform(1s, 3s).
std::optional<Binding> names(std::string_view name) {
  Binding b;
  if (name == "n") {
    b.number = 8;
    b.unit = Unit::kCount;
  } else if (name == "t") {
    b.number = 2e9;
    b.unit = Unit::kDuration;
  } else if (name == "p") {
    b.kind = Binding::Kind::kText;
    b.text = "/cache/run1";
  } else if (name == "d") {
    b.kind = Binding::Kind::kDistribution;
    b.dist = {Distribution::Kind::kUniform, Unit::kDuration, 1e9, 3e9, {}, {}, nullptr};
  } else if (name == "rank") {
    b.kind = Binding::Kind::kRank;
  } else if (name == "node") {
    b.kind = Binding::Kind::kNode;
  } else if (name == "local_rank") {
    b.kind = Binding::Kind::kLocalRank;
  } else {
    return std::nullopt;
  }
  return b;
}

std::shared_ptr<const Expr> parse(const std::string& s) {
  auto e = Expr::parse(s, names, [] { return std::string("n, t, p, d, rank"); }, 4);
  EXPECT_TRUE(e) << s << ": " << e.message();
  return e ? *e : nullptr;
}
std::string error_of(const std::string& s) {
  auto e = Expr::parse(s, names, [] { return std::string("n, t, p, d, rank"); }, 4);
  EXPECT_FALSE(e) << s;
  return e ? "" : e.message();
}
double at(const std::string& s, int rank = 0) { return *parse(s)->eval(rank, nullptr); }

TEST(ExprTest, ArithmeticFollowsPrecedenceAndFloorDivision) {
  EXPECT_EQ(at("2 + 3 * 4"), 14);
  EXPECT_EQ(at("(2 + 3) * 4"), 20);
  EXPECT_EQ(at("-n + 10"), 2);
  EXPECT_EQ(at("7 // 2"), 3);
  EXPECT_EQ(at("-7 // 2"), -4) << "floor, as Python";
  EXPECT_EQ(at("-7 % 3"), 2) << "the sign of the divisor, as Python";
  EXPECT_EQ(at("7 / 2"), 3.5);
  EXPECT_EQ(at("max(n - 10, 0)"), 0);
  EXPECT_EQ(at("min(n, 3) * 2"), 6);
  EXPECT_EQ(at("rank // 8", 17), 2);
  EXPECT_EQ(at("node", 9), 2) << "4 ranks per node";
  EXPECT_EQ(at("local_rank", 9), 1);
  EXPECT_FALSE(parse("1 // (rank - 3)")->eval(3, nullptr)) << "division by zero is no value";
}

TEST(ExprTest, UnitsFollowTheQuantities) {
  auto e = parse("rank * 100ms");
  EXPECT_EQ(e->unit(), Unit::kDuration);
  EXPECT_TRUE(e->uses_rank());
  EXPECT_FALSE(e->random());
  EXPECT_EQ(*e->eval(3, nullptr), 3e8);
  EXPECT_EQ(parse("t / 500ms")->unit(), Unit::kNumber);
  EXPECT_EQ(at("t / 500ms"), 4);
  EXPECT_EQ(parse("t // 3")->unit(), Unit::kDuration);
  EXPECT_EQ(parse("n // 3")->unit(), Unit::kCount);
  EXPECT_EQ(parse("2GiB / 1GiB")->unit(), Unit::kNumber);
  // A size over a bandwidth is a duration; over a duration, a bandwidth. (A bandwidth literal
  // would read as a division by 's': a bandwidth enters as a param.)
  EXPECT_EQ(at("1GB / (1GB / 2s)"), 2e9);
  EXPECT_THAT(error_of("1GB / 500MB/s"), HasSubstr("unknown name 's'"));
  EXPECT_THAT(error_of("t * t"), HasSubstr("a duration * a duration is not supported"));
  EXPECT_THAT(error_of("t + 1GiB"), HasSubstr("a duration + a size is not supported"));
  EXPECT_THAT(error_of("n - 1s"), HasSubstr("a count - a duration is not supported"));
}

// A comparison is 1 when it holds and 0 when not, loosest of all operators, between values of one
// unit; it does not chain; over the rank it is evaluated at every rank (a step, not monotone).
TEST(ExprTest, ComparisonsAreOneOrZeroBetweenValuesOfOneUnit) {
  EXPECT_EQ(at("n % 3 == 2"), 1);
  EXPECT_EQ(at("n % 3 != 2"), 0);
  EXPECT_EQ(at("t < 3s"), 1);
  EXPECT_EQ(at("t <= 2s"), 1);
  EXPECT_EQ(at("t > 2s"), 0);
  EXPECT_EQ(at("t >= 2000ms"), 1);
  EXPECT_EQ(at("1 + 1 == 2"), 1) << "looser than +";
  EXPECT_EQ(at("(n > 4) * 3 + 1"), 4) << "in parentheses, a number";
  EXPECT_EQ(at("0.5 < n"), 1) << "a number and a count";
  for (int r = 0; r < 4; ++r) EXPECT_EQ(at("rank >= 2", r), r >= 2 ? 1 : 0);
  EXPECT_EQ(parse("rank >= 2")->unit(), Unit::kNumber);
  EXPECT_FALSE(parse("rank >= 2")->extreme_ranks(8, true));
  EXPECT_THAT(error_of("t < 2"), HasSubstr("a duration < a count is not supported (a comparison joins values of one unit, or two numbers)"));
  EXPECT_THAT(error_of("1 < n < 3"), HasSubstr("comparisons do not chain"));
  EXPECT_THAT(error_of("n == "), HasSubstr("ends where a value was expected"));
}

TEST(ExprTest, ErrorsSayWhatIsSupported) {
  EXPECT_THAT(error_of("rnak + 1"), HasSubstr("unknown name 'rnak' (known: n, t, p, d, rank)"));
  EXPECT_THAT(error_of("n ^ 2"), HasSubstr("unexpected '^' at column 3 (supported: == != < <= > >= + - * / // % ( ) min(a, b) max(a, b))"));
  EXPECT_THAT(error_of("(n + 1"), HasSubstr("a '(' is not closed"));
  EXPECT_THAT(error_of(""), HasSubstr("an empty expression"));
  EXPECT_THAT(error_of("n +"), HasSubstr("ends where a value was expected"));
  EXPECT_THAT(error_of("3parsecs"), HasSubstr("'3parsecs' is not a number or a quantity"));
  EXPECT_THAT(error_of("min(n)"), HasSubstr("min(a, b) takes two values"));
  EXPECT_THAT(error_of(std::string(40, '(') + "1" + std::string(40, ')')), HasSubstr("nested more than 16 deep"));
  EXPECT_THAT(error_of(std::string(600, '1')), HasSubstr("longer than 512 characters"));
}

TEST(ExprTest, TextStandsAloneAndDistributionsAreDrawn) {
  EXPECT_EQ(*parse(" p ")->text(), "/cache/run1");
  EXPECT_THAT(error_of("p + 1"), HasSubstr("'p' is text (\"/cache/run1\"): it may stand alone"));
  auto e = parse("d + rank * 1s");
  EXPECT_TRUE(e->random());
  EXPECT_FALSE(e->divides_by_random());
  EXPECT_TRUE(parse("10s / (d / 1s)")->divides_by_random());
  kernel::RandomStream rng(7);
  for (int i = 0; i < 100; ++i) {
    const double v = *e->eval(2, &rng);
    EXPECT_GE(v, 3e9);
    EXPECT_LT(v, 5e9);
  }
  EXPECT_EQ(format_for_name(3, Unit::kCount), "3");
  EXPECT_EQ(format_for_name(2.5, Unit::kNumber), "2.5");
  EXPECT_EQ(format_for_name(1e8, Unit::kDuration), "100ms");
}

// Through the compiler: rank 0 sleeps 0 s, rank 1 100 ms, ...; marks named per node.
TEST(ExprTest, ValuesAndNamesPerRank) {
  auto f = make(4, "  - sleep: ${rank * 100ms + base}\n  - mark: {name: \"node${node}_r${local_rank}\", metric: true}\n  - count: \"c${rank // 2}\"\n",
                "platform: {ranks_per_node: 2}\nparams:\n  base: 1s\n");
  ASSERT_TRUE(f.study);
  const auto m = run(f).metrics;
  EXPECT_DOUBLE_EQ(m.at("node0_r0_s"), 1.0);
  EXPECT_DOUBLE_EQ(m.at("node0_r1_s"), 1.1);
  EXPECT_DOUBLE_EQ(m.at("node1_r1_s"), 1.3);
  EXPECT_EQ(m.at("c0"), 2.0);
  EXPECT_EQ(m.at("c1"), 2.0);
}

TEST(ExprTest, ParamsFromParamsFollowOverrides) {
  const std::string extra = "params:\n  steps: 4\n  total: \"${steps * 2}\"\n  every: \"${1s * total}\"\n  dir: /c/run1\n";
  const std::string program = "  - repeat: {times: \"${total}\", do: [{count: iters}]}\n  - sleep: ${every}\n"
                              "  - mark: {name: \"${dir}_done\", metric: true}\n";
  auto f = make(1, program, extra);
  ASSERT_TRUE(f.study);
  auto m = run(f).metrics;
  EXPECT_EQ(m.at("iters"), 8.0);
  EXPECT_DOUBLE_EQ(m.at("makespan_s"), 8.0);
  EXPECT_TRUE(m.count("/c/run1_done_s"));
  Diagnostics d;
  auto over = compile_study({.path = "t.yaml",
                             .text = "name: t\nranks: 1\n" + extra + "program:\n" + program + "strategies: {only: }\n",
                             .overrides = {"params.steps=10"}},
                            d);
  ASSERT_TRUE(over) << d.to_string();
  EXPECT_EQ(run::run_one(*over->programs[0], 1, {}).metrics.at("iters"), 20.0);
}

// A use's argument that depends on the rank, a world or a loop is no draw: it may stand in a
// name, as an expression ("${rank * 1}") or as text around expressions ("x${rank}y", "k.${stage}");
// one that draws from a distribution still may not.
TEST(ExprTest, UseArgumentsOfTheRankAreNamesAndOnlyDrawsAreRefused) {
  const std::string extra = R"(platform:
  storage:
    c: {kind: local, mount: /c}
params:
  t: {uniform: {min: 1s, max: 2s}}
define:
  mk:
    args: [sub, key]
    do:
      - mkdir: "/c/d${sub}"
      - mark: {name: "${key}", metric: true}
)";
  const std::string program = R"(  - use: {name: mk, sub: "${rank * 1}", key: "k.${rank}"}
  - for_each: {var: stage, in: [a, b], do: [{use: {name: mk, sub: "x${rank}y.${stage}", key: "done.${stage}"}}]}
  - if: {exists: "/c/d${rank}", then: [{count: found}]}
  - if: {exists: "/c/dx${rank}y.b", then: [{count: found}]}
)";
  auto f = make(4, program, extra);
  ASSERT_TRUE(f.study);
  const auto m = run(f).metrics;
  EXPECT_EQ(m.at("found"), 8.0) << "every rank made /c/d<rank> and /c/dx<rank>y.b";
  for (const char* k : {"k.0_s", "k.3_s", "done.a_s", "done.b_s"}) EXPECT_TRUE(m.count(k)) << k;
  EXPECT_THAT(compile_errors(4, "  - use: {name: mk, sub: \"${t}\", key: k}\n", extra),
              HasSubstr("${sub} draws from a distribution, and a name cannot be random"));
  EXPECT_THAT(compile_errors(4, "  - use: {name: mk, sub: \"a${t}\", key: k}\n", extra),
              HasSubstr("${t} draws from a distribution, and a name cannot be random"));
  // Text resolved per rank stays text: it takes no arithmetic.
  EXPECT_THAT(compile_errors(4, "  - use: {name: wait_for, sub: \"d${rank}\"}\n",
                             extra + "  wait_for:\n    args: [sub]\n    do: [{sleep: \"${1s * sub}\"}]\n"),
              HasSubstr("'sub' is text: it may stand alone, as ${sub}, but takes no arithmetic"));
}

// An expression monotone in one use of the rank is decided by two ranks; anything else (two uses,
// %, the rank in a divisor, a fraction where a count is wanted) is evaluated at every rank. The two
// ranks give the same extremes as evaluating every rank does.
TEST(ExprTest, AnExpressionMonotoneInTheRankIsDecidedByTwoRanks) {
  using Ends = std::optional<std::pair<int, int>>;
  EXPECT_EQ(parse("rank * 2 + n")->extreme_ranks(16, true), Ends({0, 15}));
  EXPECT_EQ(parse("t - rank * 1ms")->extreme_ranks(16, false), Ends({0, 15}));
  EXPECT_EQ(parse("max(rank // 4, 2) * t")->extreme_ranks(16, false), Ends({0, 15}));
  EXPECT_EQ(parse("-node + 3")->extreme_ranks(16, true), Ends({0, 15}));
  EXPECT_EQ(parse("local_rank * 2")->extreme_ranks(16, true), Ends({0, 3}));  // ranks_per_node 4
  EXPECT_EQ(parse("local_rank * 2")->extreme_ranks(2, true), std::nullopt);   // no full node
  EXPECT_EQ(parse("rank / 2")->extreme_ranks(16, false), Ends({0, 15}));
  EXPECT_EQ(parse("rank / 2")->extreme_ranks(16, true), std::nullopt);  // 0.5 at rank 1
  EXPECT_EQ(parse("rank * 0.5")->extreme_ranks(16, true), std::nullopt);
  EXPECT_EQ(parse("rank % 4")->extreme_ranks(16, true), std::nullopt);
  EXPECT_EQ(parse("rank - rank")->extreme_ranks(16, true), std::nullopt);
  EXPECT_EQ(parse("n // (rank + 1)")->extreme_ranks(16, true), std::nullopt);
  EXPECT_EQ(parse("rank * 1ms + d")->extreme_ranks(16, false), std::nullopt);  // random
  for (const std::string s : {"rank * 2 + n", "t - rank * 1ms", "max(rank // 4, 2) * t", "-node + 3", "local_rank * 2",
                              "min(7 - rank, 3) * 5"}) {
    const auto e = parse(s);
    const auto ends = e->extreme_ranks(16, false);
    ASSERT_TRUE(ends) << s;
    double lo = 1e300, hi = -1e300;
    for (int r = 0; r < 16; ++r) lo = std::min(lo, *e->eval(r, nullptr)), hi = std::max(hi, *e->eval(r, nullptr));
    const double a = *e->eval(ends->first, nullptr), b = *e->eval(ends->second, nullptr);
    EXPECT_EQ(std::min(a, b), lo) << s;
    EXPECT_EQ(std::max(a, b), hi) << s;
  }
}

TEST(ExprTest, CompileErrorsAreLocated) {
  EXPECT_THAT(compile_errors(2, "  - sleep: ${1s - rank * 2s}\n"),
              HasSubstr("t.yaml:5:12: error: sleep: ${1s - rank * 2s} is -1s at rank 1, and a duration cannot be negative"));
  EXPECT_THAT(compile_errors(2, "  - count: \"x${1 // (rank - 1)}\"\n"), HasSubstr("divides by zero at rank 1"));
  EXPECT_THAT(compile_errors(1, "  - mark: \"m${d}\"\n", "params:\n  d: {uniform: {min: 1s, max: 2s}}\n"),
              HasSubstr("draws from a distribution, and a name cannot be random"));
  EXPECT_THAT(compile_errors(1, "  - sleep: ${a}\n", "params:\n  a: \"${b + 1s}\"\n  b: \"${a}\"\n"),
              HasSubstr("is defined in terms of itself (a -> b -> a)"));
  EXPECT_THAT(compile_errors(1, "  - sleep: ${n}\n", "params:\n  n: 3\n"), HasSubstr("param 'n' is a number (3), expected a duration"));
  EXPECT_THAT(compile_errors(1, "  - sleep: \"${n}s\"\n", "params:\n  n: 3\n"), HasSubstr("one expression ${...} with nothing around it"));
  EXPECT_THAT(compile_errors(1, "  - repeat: {times: \"${n / 2}\", do: []}\n", "params:\n  n: 3\n"),
              HasSubstr("${n / 2} is 1.5, expected a whole number >= 0"));
  EXPECT_THAT(compile_errors(1, "  - sleep: ${dir}\n", "params:\n  dir: /c\n"), HasSubstr("${dir} is text (\"/c\"), expected a duration"));
}

}  // namespace
}  // namespace racesim::scenario
