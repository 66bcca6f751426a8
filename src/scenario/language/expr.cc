// Expressions (see expr.h): a recursive-descent parser to reverse Polish, with units checked as
// it goes, and a small stack machine.
#include "src/scenario/language/expr.h"

#include <array>
#include <cassert>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace racesim::scenario {

namespace {

bool dimensionless(Unit u) { return u == Unit::kCount || u == Unit::kNumber; }

const char* unit_name(Unit u) {
  switch (u) {
    case Unit::kDuration: return "a duration";
    case Unit::kBytes: return "a size";
    case Unit::kBandwidth: return "a bandwidth";
    case Unit::kCount: return "a count";
    case Unit::kNumber: return "a number";
  }
  return "?";
}

constexpr std::size_t kMaxStack = 64;

}  // namespace

// Builds an Expr from its source; each parse_* leaves its value's unit in `unit` and appends its
// operations.
class ExprParser {
 public:
  ExprParser(std::string_view s, const Lookup& lookup, const KnownNames& known, Expr& out)
      : s_(s), lookup_(lookup), known_(known), out_(out) {}

  bool run() {
    skip();
    if (pos_ == s_.size()) return fail("an empty expression (expected a name, a number or a quantity)");
    Unit u;
    if (!parse_comparison(u, 0)) return false;
    skip();
    if (pos_ != s_.size()) {
      return fail("unexpected '" + std::string(s_.substr(pos_, 1)) + "' at column " + std::to_string(pos_ + 1) +
                  " (supported: == != < <= > >= + - * / // % ( ) min(a, b) max(a, b))");
    }
    out_.unit_ = u;
    if (depth_max_ > static_cast<int>(kMaxStack)) return fail("too many values in one expression");
    return true;
  }
  const std::string& error() const { return error_; }

 private:
  using Kind = Expr::Op::Kind;

  bool fail(std::string m) {
    if (error_.empty()) error_ = std::move(m);
    return false;
  }
  void skip() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool eat(std::string_view tok) {
    skip();
    if (s_.substr(pos_, tok.size()) != tok) return false;
    pos_ += tok.size();
    return true;
  }
  void push(Expr::Op op, int stack_change) {
    out_.ops_.push_back(op);
    depth_ += stack_change;
    depth_max_ = std::max(depth_max_, depth_);
  }

  // The unit of `a OP b`, or an error naming both.
  bool combine(Kind op, Unit a, Unit b, Unit& out) {
    const bool both_counts = a == Unit::kCount && b == Unit::kCount;
    const char* sym = op == Kind::kAdd ? "+" : op == Kind::kSub ? "-" : op == Kind::kMul ? "*"
                    : op == Kind::kDiv ? "/" : op == Kind::kFloorDiv ? "//" : op == Kind::kMod ? "%"
                    : op == Kind::kMin ? "min" : op == Kind::kMax ? "max" : comparison_symbol(op);
    auto bad = [&] {
      return fail(std::string(unit_name(a)) + " " + sym + " " + unit_name(b) + " is not supported (+, -, min "
                  "and max join values of one unit; * scales by a number; / divides by a number or by "
                  "the same unit; size / bandwidth is a duration, size / duration a bandwidth)");
    };
    switch (op) {
      case Kind::kAdd:
      case Kind::kSub:
      case Kind::kMin:
      case Kind::kMax:
        if (a == b) { out = a; return true; }
        if (dimensionless(a) && dimensionless(b)) { out = Unit::kNumber; return true; }
        return bad();
      case Kind::kMul:
        if (dimensionless(a) && dimensionless(b)) { out = both_counts ? Unit::kCount : Unit::kNumber; return true; }
        if (dimensionless(a)) { out = b; return true; }
        if (dimensionless(b)) { out = a; return true; }
        if ((a == Unit::kBandwidth && b == Unit::kDuration) || (a == Unit::kDuration && b == Unit::kBandwidth)) {
          out = Unit::kBytes;  // bytes/s * ns: scaled by 1e-9 below
          return true;
        }
        return bad();
      case Kind::kDiv:
      case Kind::kFloorDiv:
        if (dimensionless(a) && dimensionless(b)) {
          out = op == Kind::kFloorDiv && both_counts ? Unit::kCount : Unit::kNumber;
          return true;
        }
        if (dimensionless(b)) { out = a; return true; }
        if (a == b) { out = op == Kind::kFloorDiv ? Unit::kCount : Unit::kNumber; return true; }
        if (op == Kind::kDiv && a == Unit::kBytes && b == Unit::kBandwidth) { out = Unit::kDuration; return true; }
        if (op == Kind::kDiv && a == Unit::kBytes && b == Unit::kDuration) { out = Unit::kBandwidth; return true; }
        return bad();
      case Kind::kMod:
        if (dimensionless(a) && dimensionless(b)) { out = both_counts ? Unit::kCount : Unit::kNumber; return true; }
        if (a == b || dimensionless(b)) { out = a; return true; }
        return bad();
      case Kind::kEq:
      case Kind::kNe:
      case Kind::kLt:
      case Kind::kLe:
      case Kind::kGt:
      case Kind::kGe:
        if (a == b || (dimensionless(a) && dimensionless(b))) { out = Unit::kNumber; return true; }
        return fail(std::string(unit_name(a)) + " " + sym + " " + unit_name(b) +
                    " is not supported (a comparison joins values of one unit, or two numbers)");
      default:
        return bad();
    }
  }

  // Appends the binary operation and the scaling that mixed units need (base units: ns, bytes,
  // bytes per second).
  bool binary(Kind op, Unit a, Unit b, Unit& out, bool right_random) {
    if (!combine(op, a, b, out)) return false;
    if ((op == Kind::kDiv || op == Kind::kFloorDiv || op == Kind::kMod) && right_random) {
      out_.divides_by_random_ = true;
    }
    push({op}, -1);
    double scale = 1;
    if (op == Kind::kMul && out == Unit::kBytes && !dimensionless(a) && !dimensionless(b)) scale = 1e-9;
    if (op == Kind::kDiv && a == Unit::kBytes && b == Unit::kBandwidth) scale = 1e9;
    if (op == Kind::kDiv && a == Unit::kBytes && b == Unit::kDuration) scale = 1e9;
    if (scale != 1) {
      push({Kind::kConst, scale}, +1);
      push({Kind::kMul}, -1);
    }
    return true;
  }

  static const char* comparison_symbol(Kind op) {
    switch (op) {
      case Kind::kEq: return "==";
      case Kind::kNe: return "!=";
      case Kind::kLt: return "<";
      case Kind::kLe: return "<=";
      case Kind::kGt: return ">";
      case Kind::kGe: return ">=";
      default: return "?";
    }
  }

  // A sum, or two sums compared (one comparison: they do not chain).
  bool parse_comparison(Unit& u, int depth) {
    if (!parse_sum(u, depth)) return false;
    auto comparison = [&](Kind& op) {
      // Two-character operators first, so that "<=" is not read as "<" then "=".
      for (Kind k : {Kind::kEq, Kind::kNe, Kind::kLe, Kind::kGe, Kind::kLt, Kind::kGt}) {
        if (eat(comparison_symbol(k))) {
          op = k;
          return true;
        }
      }
      return false;
    };
    Kind op;
    if (!comparison(op)) return true;
    Unit r;
    if (!parse_sum(r, depth)) return false;
    if (!binary(op, u, r, u, false)) return false;
    Kind again;
    if (comparison(again)) return fail("comparisons do not chain: write (a < b) * (b < c) for a < b < c");
    return true;
  }

  bool parse_sum(Unit& u, int depth) {
    if (depth > Expr::kMaxDepth) return fail("nested more than " + std::to_string(Expr::kMaxDepth) + " deep");
    if (!parse_product(u, depth)) return false;
    for (;;) {
      Kind op;
      if (eat("+")) op = Kind::kAdd;
      else if (eat("-")) op = Kind::kSub;
      else return true;
      Unit r;
      if (!parse_product(r, depth)) return false;
      if (!binary(op, u, r, u, false)) return false;
    }
  }

  bool parse_product(Unit& u, int depth) {
    if (!parse_unary(u, depth)) return false;
    for (;;) {
      Kind op;
      if (eat("//")) op = Kind::kFloorDiv;
      else if (eat("/")) op = Kind::kDiv;
      else if (eat("*")) op = Kind::kMul;
      else if (eat("%")) op = Kind::kMod;
      else return true;
      const bool before = operand_random_;
      operand_random_ = false;
      Unit r;
      if (!parse_unary(r, depth)) return false;
      const bool right_random = operand_random_;
      operand_random_ = before || right_random;
      if (!binary(op, u, r, u, right_random)) return false;
    }
  }

  bool parse_unary(Unit& u, int depth) {
    if (eat("-")) {
      if (!parse_unary(u, depth + 1)) return false;
      push({Kind::kNeg}, 0);
      return true;
    }
    return parse_primary(u, depth);
  }

  bool parse_primary(Unit& u, int depth) {
    skip();
    if (pos_ >= s_.size()) return fail("the expression ends where a value was expected");
    const char c = s_[pos_];
    if (c == '(') {
      ++pos_;
      if (!parse_comparison(u, depth + 1)) return false;
      if (!eat(")")) return fail("a '(' is not closed");
      return true;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') return parse_literal(u);
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') return parse_name(u, depth);
    return fail("unexpected '" + std::string(1, c) + "' at column " + std::to_string(pos_ + 1) +
                " (expected a name, a number, a quantity like 100ms or 2GiB, or '(')");
  }

  bool parse_literal(Unit& u) {
    const std::size_t start = pos_;
    while (pos_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '.')) ++pos_;
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E') && pos_ + 1 < s_.size() &&
        (std::isdigit(static_cast<unsigned char>(s_[pos_ + 1])) || s_[pos_ + 1] == '-' || s_[pos_ + 1] == '+')) {
      pos_ += 2;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    }
    while (pos_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    const std::string_view lit = s_.substr(start, pos_ - start);
    auto unit = infer_unit(lit);
    if (!unit) return fail("'" + std::string(lit) + "' is not a number or a quantity (" + unit.message() + ")");
    auto v = parse_quantity(lit, *unit);
    if (!v) return fail("'" + std::string(lit) + "': " + v.message());
    u = *unit;
    push({Kind::kConst, *v}, +1);
    return true;
  }

  bool parse_name(Unit& u, int depth) {
    const std::size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    const std::string name(s_.substr(start, pos_ - start));
    if (name == "min" || name == "max") {
      if (!eat("(")) return fail(name + " is a function: " + name + "(a, b)");
      Unit a, b;
      if (!parse_sum(a, depth + 1)) return false;
      if (!eat(",")) return fail(name + "(a, b) takes two values");
      if (!parse_sum(b, depth + 1)) return false;
      if (!eat(")")) return fail(name + "(a, b): expected ')'");
      return binary(name == "min" ? Kind::kMin : Kind::kMax, a, b, u, false);
    }
    const std::optional<Binding> b = lookup_(name);
    if (!b) return fail("unknown name '" + name + "' (known: " + known_() + ")");
    switch (b->kind) {
      case Binding::Kind::kNumber:
        u = b->unit;
        push({Kind::kConst, b->number}, +1);
        return true;
      case Binding::Kind::kLocal:
        u = b->unit;
        out_.uses_locals_ = true;
        operand_random_ = true;  // known only when it runs: a division by it could be by 0
        push({Kind::kLocal, 0, static_cast<std::size_t>(b->slot)}, +1);
        return true;
      case Binding::Kind::kLocalText:
        if (!out_.ops_.empty() || !at_end_alone(start)) {
          return fail("'" + name + "' is text (a name of a listing): it may stand alone, as ${" + name +
                      "}, but takes no arithmetic");
        }
        out_.text_parts_ = {TextPart{std::string(), nullptr, b->slot}};
        out_.uses_locals_ = true;
        u = Unit::kNumber;
        return true;
      case Binding::Kind::kText:
      case Binding::Kind::kTextTemplate:
        if (!out_.ops_.empty() || !at_end_alone(start)) {
          return fail("'" + name + "' is text" + (b->kind == Binding::Kind::kText ? " (\"" + b->text + "\")" : "") +
                      ": it may stand alone, as ${" + name + "}, but takes no arithmetic");
        }
        if (b->kind == Binding::Kind::kText) {
          out_.text_ = b->text;
        } else {
          out_.text_parts_ = b->parts;
        }
        u = Unit::kNumber;
        return true;
      case Binding::Kind::kDistribution:
        u = b->dist.unit;
        // A value bound to an expression of the rank (a use's argument "${rank * 2}") is no draw.
        if (b->dist.random()) {
          out_.random_ = true;
          operand_random_ = true;
        }
        out_.dists_.push_back(b->dist);
        if (b->dist.uses_rank()) out_.uses_rank_ = true;
        if (b->dist.uses_locals()) {
          out_.uses_locals_ = true;
          operand_random_ = true;
        }
        push({Kind::kDraw, 0, out_.dists_.size() - 1}, +1);
        return true;
      case Binding::Kind::kRank:
      case Binding::Kind::kNode:
      case Binding::Kind::kLocalRank:
        u = Unit::kCount;
        out_.uses_rank_ = true;
        push({b->kind == Binding::Kind::kRank ? Kind::kRank : b->kind == Binding::Kind::kNode ? Kind::kNode
                                                                                               : Kind::kLocalRank},
             +1);
        return true;
    }
    return fail("unknown name '" + name + "'");
  }

  // Whether the name that starts at `start` is the whole expression.
  bool at_end_alone(std::size_t start) {
    std::size_t b = 0;
    while (b < start && std::isspace(static_cast<unsigned char>(s_[b]))) ++b;
    std::size_t e = pos_;
    while (e < s_.size() && std::isspace(static_cast<unsigned char>(s_[e]))) ++e;
    return b == start && e == s_.size();
  }

  std::string_view s_;
  const Lookup& lookup_;
  const KnownNames& known_;
  Expr& out_;
  std::size_t pos_ = 0;
  int depth_ = 0, depth_max_ = 0;
  bool operand_random_ = false;  // the operand just parsed draws from a distribution
  std::string error_;
};

kernel::Result<std::shared_ptr<const Expr>> Expr::parse(std::string_view source, const Lookup& lookup,
                                                        const KnownNames& known, int ranks_per_node) {
  using R = kernel::Result<std::shared_ptr<const Expr>>;
  if (source.size() > kMaxLength) {
    return R::error("an expression longer than " + std::to_string(kMaxLength) + " characters");
  }
  auto e = std::make_shared<Expr>();
  e->source_ = std::string(source);
  e->ranks_per_node_ = std::max(1, ranks_per_node);
  ExprParser p(source, lookup, known, *e);
  if (!p.run()) return R::error(p.error());
  return std::shared_ptr<const Expr>(std::move(e));
}

std::optional<double> Expr::eval(int rank, kernel::RandomStream* rng, DrawDecider* decider,
                                 const double* locals) const {
  assert(!is_text() && "eval REQUIRES a number, not text");
  assert((locals != nullptr || !uses_locals_) && "an expression of locals REQUIRES the rank's locals");
  std::array<double, kMaxStack> st;
  std::size_t n = 0;
  for (const Op& op : ops_) {
    switch (op.kind) {
      case Op::Kind::kConst: st[n++] = op.value; break;
      case Op::Kind::kRank: st[n++] = rank; break;
      case Op::Kind::kNode: st[n++] = rank / ranks_per_node_; break;
      case Op::Kind::kLocalRank: st[n++] = rank % ranks_per_node_; break;
      case Op::Kind::kLocal: st[n++] = locals[op.dist]; break;
      case Op::Kind::kDraw: {
        const Distribution& d = dists_[op.dist];
        if (!d.random()) {
          // An expression of the rank (or of locals): evaluated, with no stream (a name's text has none).
          const auto v = d.kind == Distribution::Kind::kExpr ? d.expr->eval(rank, rng, decider, locals)
                                                             : std::optional<double>(d.a);
          if (!v) return std::nullopt;
          st[n++] = *v;
          break;
        }
        assert(rng != nullptr && "a draw needs the rank's stream");
        st[n++] = d.sample_decided(*rng, rank, decider, locals);
        break;
      }
      case Op::Kind::kNeg: st[n - 1] = -st[n - 1]; break;
      default: {
        const double b = st[--n];
        double& a = st[n - 1];
        switch (op.kind) {
          case Op::Kind::kAdd: a += b; break;
          case Op::Kind::kSub: a -= b; break;
          case Op::Kind::kMul: a *= b; break;
          case Op::Kind::kMin: a = std::min(a, b); break;
          case Op::Kind::kMax: a = std::max(a, b); break;
          case Op::Kind::kDiv:
          case Op::Kind::kFloorDiv:
          case Op::Kind::kMod:
            if (b == 0) return std::nullopt;
            a = op.kind == Op::Kind::kDiv ? a / b : op.kind == Op::Kind::kFloorDiv ? std::floor(a / b)
                                                                                  : a - b * std::floor(a / b);
            break;
          case Op::Kind::kEq: a = a == b ? 1 : 0; break;
          case Op::Kind::kNe: a = a != b ? 1 : 0; break;
          case Op::Kind::kLt: a = a < b ? 1 : 0; break;
          case Op::Kind::kLe: a = a <= b ? 1 : 0; break;
          case Op::Kind::kGt: a = a > b ? 1 : 0; break;
          case Op::Kind::kGe: a = a >= b ? 1 : 0; break;
          default: break;
        }
      }
    }
  }
  return n == 1 ? std::optional<double>(st[0]) : std::nullopt;
}

std::optional<std::pair<int, int>> Expr::extreme_ranks(int ranks, bool whole) const {
  assert(uses_rank_ && ranks >= 1);
  if (random_ || uses_locals_) return std::nullopt;
  // Walks the reverse Polish form, knowing of each value on the stack whether it depends on the
  // rank: the rank's one use must reach the result through monotone steps only.
  std::array<bool, kMaxStack> depends{};
  std::size_t n = 0;
  int uses = 0;
  Op::Kind variable = Op::Kind::kRank;
  for (const Op& op : ops_) {
    switch (op.kind) {
      case Op::Kind::kConst:
        if (whole && op.value != std::floor(op.value)) return std::nullopt;
        depends[n++] = false;
        break;
      case Op::Kind::kRank:
      case Op::Kind::kNode:
      case Op::Kind::kLocalRank:
        ++uses;
        variable = op.kind;
        depends[n++] = true;
        break;
      case Op::Kind::kDraw: {
        const Distribution& d = dists_[op.dist];
        // A param that is an expression of the rank is a second, hidden use; a constant one is a literal.
        if (d.kind == Distribution::Kind::kExpr || (whole && d.a != std::floor(d.a))) return std::nullopt;
        depends[n++] = false;
        break;
      }
      case Op::Kind::kNeg:
        break;
      default: {
        const bool right = depends[--n];
        const bool left = depends[n - 1];
        switch (op.kind) {
          case Op::Kind::kMod:
            if (left || right) return std::nullopt;
            break;
          case Op::Kind::kDiv:
            if (whole || right) return std::nullopt;
            break;
          case Op::Kind::kFloorDiv:
            if (right) return std::nullopt;
            break;
          case Op::Kind::kEq:
          case Op::Kind::kNe:
          case Op::Kind::kLt:
          case Op::Kind::kLe:
          case Op::Kind::kGt:
          case Op::Kind::kGe:
            if (left || right) return std::nullopt;  // a step, not monotone in the rank's sense here
            break;
          default:
            break;  // + - * min max: monotone in each side while the other does not depend on the rank
        }
        depends[n - 1] = left || right;
      }
    }
  }
  if (uses != 1) return std::nullopt;
  switch (variable) {
    case Op::Kind::kNode:
      return std::make_pair(0, ranks - 1);  // node 0 and the last node
    case Op::Kind::kLocalRank:
      // local_rank 0 and ranks_per_node - 1, both taken when a node is full.
      if (ranks < ranks_per_node_) return std::nullopt;
      return std::make_pair(0, ranks_per_node_ - 1);
    default:
      return std::make_pair(0, ranks - 1);
  }
}

std::optional<std::string> whole_expression(std::string_view s) {
  if (s.size() < 4 || s.compare(0, 2, "${") != 0 || s.back() != '}' || s.find('}') != s.size() - 1) {
    return std::nullopt;
  }
  return std::string(s.substr(2, s.size() - 3));
}

std::string format_for_name(double value, Unit unit) {
  if (dimensionless(unit)) {
    char buf[64];
    if (value == std::floor(value) && std::fabs(value) < 1e15) {
      // Whole numbers (a rank in a path, resolved at every operation): integer formatting.
      const auto r = std::to_chars(buf, buf + sizeof buf, static_cast<long long>(value));
      return std::string(buf, r.ptr);
    }
    std::snprintf(buf, sizeof buf, "%.6g", value);
    return buf;
  }
  return format_quantity(value, unit);
}

}  // namespace racesim::scenario
