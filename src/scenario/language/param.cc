// A param's value (see param.h).
#include "src/scenario/language/param.h"

#include <cctype>

#include "src/scenario/language/distribution.h"
#include "src/scenario/language/expr.h"
#include "src/scenario/file/quantity.h"
#include "src/scenario/file/value_reader.h"

namespace racesim::scenario {

bool parse_param_value(const Value& node, const std::string& file, Diagnostics& diags, Param& p) {
  p.value = Distribution{};
  p.text.reset();
  p.expr.reset();
  if (node.is_scalar()) {
    const std::string& s = node.scalar();
    if (s.find("${") != std::string::npos) {
      p.expr = whole_expression(s);
      if (!p.expr) {
        diags.error(at(node, file), "param '" + p.name + "': an expression is one ${...} with nothing around it, "
                                    "got '" + s + "'");
        return false;
      }
      return true;
    }
    const bool numeric = !s.empty() && (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '.' ||
                                        s[0] == '-' || s[0] == '+');
    if (!s.empty() && !numeric && !infer_unit(s)) {
      p.text = s;
      return true;
    }
  }
  // `per:` beside a distribution's kind says how often it is drawn (distribution.h's DrawScope).
  DrawScope scope = DrawScope::kUse;
  Value dist = node;
  if (node.is_map() && node["per"]) {
    const Value per = node["per"];
    const auto s = per.is_scalar() ? parse_scope(per.scalar()) : std::nullopt;
    if (!s) {
      diags.error(at(per, file), "param '" + p.name + "': per: expected use (a draw at each use, the default), rank "
                                 "(one per rank) or run (one per run, shared by every rank), got " +
                                     (per.is_scalar() ? "'" + per.scalar() + "'" : kind_of(per)));
      return false;
    }
    scope = *s;
    dist = node.without_entry("per");
    if (dist.size() == 0) {
      diags.error(at(node, file), "param '" + p.name + "': per: " + scope_name(scope) +
                                      " needs a distribution beside it ({uniform: {min: 1s, max: 5s}, per: " +
                                      scope_name(scope) + "})");
      return false;
    }
  }
  auto d = parse_distribution(dist, std::nullopt, file, diags);
  if (!d) return false;
  if (scope != DrawScope::kUse && !d->random()) {
    diags.error(at(node["per"], file), "param '" + p.name + "': per: " + scope_name(scope) + " draws a value, but " +
                                           d->describe() + " is a constant: drop per:, or give a distribution");
    return false;
  }
  p.value = scope == DrawScope::kUse ? *d : d->with_scope(scope, p.name);
  return true;
}

}  // namespace racesim::scenario
