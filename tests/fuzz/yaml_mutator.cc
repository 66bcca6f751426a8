// The scenario fuzzer's structure-aware mutator (libFuzzer's LLVMFuzzerCustomMutator): most
// mutations edit one YAML value in place with an edge value of its kind (0, the grain, the
// largest value and one past it, 2^63, NaN, a negative, a huge or broken text), or give a key a
// second time; the rest are libFuzzer's own byte mutations. Byte flips alone rarely keep a file
// parseable, so they seldom reach the range checks, units and duplicate-key handling behind the
// parser; this mutator aims at exactly those.
//
// Linked only into the libFuzzer program (scripts/fuzz.sh), never into racesim: its randomness is
// libFuzzer's seed, through splitmix64, and no simulation sees it.
#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/kernel/random.h"
#include "src/scenario/file/quantity.h"

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

namespace {

using racesim::scenario::Unit;

// Edge values of each kind of value, and of none (text).
const std::vector<std::string>& edges(std::optional<Unit> unit) {
  static const std::vector<std::string> kDuration = {"0s", "1ns", "0.5ns", "2400h", "2401h", "9223372036854775807ns",
                                                     "18446744073709551616ns", "-1s", "1e309s", "0.0000000001s"};
  static const std::vector<std::string> kBytes = {"0B", "1B", "0.5B", "4096TiB", "4097TiB", "9223372036854775807B",
                                                  "-1B", "1.5KiB"};
  static const std::vector<std::string> kBandwidth = {"1B/s", "0B/s", "0.5B/s", "1000TB/s", "1001TB/s", "-1GB/s"};
  static const std::vector<std::string> kCount = {"0", "1", "2147483647", "2147483648", "9223372036854775808",
                                                  "18446744073709551616", "-1", "1e3", "100000", "1000001"};
  static const std::vector<std::string> kNumber = {"0", "-0", "0.5", "1e15", "1e16", "-1e16", "nan", "inf", "-inf",
                                                   ".nan", "1e-320", "9223372036854775808", "-1"};
  static const std::vector<std::string> kText = {"", "\"\"", "${rank}", "${", "}", "${x}", "~", "null", "true",
                                                 "\"${rank * 1ms}\"", "[]", "{}", std::string(3000, 'a')};
  if (!unit) return kText;
  switch (*unit) {
    case Unit::kDuration:
      return kDuration;
    case Unit::kBytes:
      return kBytes;
    case Unit::kBandwidth:
      return kBandwidth;
    case Unit::kCount:
      return kCount;
    case Unit::kNumber:
      return kNumber;
  }
  return kText;
}

struct Span {
  std::size_t begin, end;
};

// Where the scalar values are: after "key: ", "- ", "[" or ", " inside a flow, up to the end of
// the line, a comment, or a flow's comma or bracket.
std::vector<Span> scalar_values(std::string_view text) {
  std::vector<Span> out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool after_key = text[i] == ':' && i + 1 < text.size() && text[i + 1] == ' ';
    const bool after_item = (text[i] == '-' && i + 1 < text.size() && text[i + 1] == ' ') || text[i] == '[' ||
                            (text[i] == ',' && i + 1 < text.size() && text[i + 1] == ' ');
    if (!after_key && !after_item) continue;
    std::size_t b = i + 1;
    while (b < text.size() && text[b] == ' ') ++b;
    std::size_t e = b;
    while (e < text.size() && text[e] != '\n' && text[e] != ',' && text[e] != ']' && text[e] != '}' && text[e] != '#') ++e;
    while (e > b && text[e - 1] == ' ') --e;
    if (e > b && text[b] != '{' && text[b] != '[' && text[b] != '-') out.push_back({b, e});
  }
  return out;
}

}  // namespace

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  std::uint64_t state = seed;
  const auto next = [&state](std::uint64_t n) { return racesim::kernel::splitmix64(state) % n; };
  if (next(4) == 0) return LLVMFuzzerMutate(data, size, max_size);
  std::string text(reinterpret_cast<const char*>(data), size);
  if (next(6) == 0) {
    // A key given twice: a copy of one "key: value" line right after it.
    std::vector<Span> lines;
    for (std::size_t b = 0; b < text.size();) {
      const std::size_t e = std::min(text.find('\n', b), text.size());
      const std::string_view line(text.data() + b, e - b);
      if (line.find(": ") != std::string_view::npos && line.find("- ") == std::string_view::npos) lines.push_back({b, e});
      b = e + 1;
    }
    if (!lines.empty()) {
      const Span l = lines[next(lines.size())];
      text.insert(l.end, "\n" + text.substr(l.begin, l.end - l.begin));
    }
  } else {
    const std::vector<Span> values = scalar_values(text);
    if (values.empty()) return LLVMFuzzerMutate(data, size, max_size);
    const Span v = values[next(values.size())];
    std::optional<Unit> unit;
    if (auto u = racesim::scenario::infer_unit(text.substr(v.begin, v.end - v.begin))) unit = *u;
    // Mostly an edge of the value's own kind; sometimes one of another kind.
    const auto& pool = next(5) == 0 ? edges(static_cast<Unit>(next(5))) : edges(unit);
    text.replace(v.begin, v.end - v.begin, pool[next(pool.size())]);
  }
  if (text.size() > max_size) return LLVMFuzzerMutate(data, size, max_size);
  std::memcpy(data, text.data(), text.size());
  return text.size();
}
