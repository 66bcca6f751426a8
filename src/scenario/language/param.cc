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
  auto d = parse_distribution(node, std::nullopt, file, diags);
  if (!d) return false;
  p.value = *d;
  return true;
}

}  // namespace racesim::scenario
