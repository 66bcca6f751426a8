// Failed runs by kind: see failure_kind.h.
#include "src/report/failure_kind.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <cctype>
#include <string_view>

namespace racesim::report {

namespace {

bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }
bool letter(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }

// Where a number stands alone: what may come just before it.
bool opens_figure(char before) {
  return before == ' ' || before == '(' || before == '[' || before == '#';
}

// The end of the number at s[i] (digits, then a fraction's dot and digits). REQUIRES: digit(s[i]).
std::size_t number_end(std::string_view s, std::size_t i) {
  assert(i < s.size() && digit(s[i]));
  while (i < s.size() && digit(s[i])) ++i;
  if (i + 1 < s.size() && s[i] == '.' && digit(s[i + 1])) {
    ++i;
    while (i < s.size() && digit(s[i])) ++i;
  }
  return i;
}

// The end of the unit at s[i] (after a space or none), or i when none is there: a unit is one of
// the figures' units followed by neither a letter nor a digit.
std::size_t unit_end(std::string_view s, std::size_t i) {
  static constexpr std::array<std::string_view, 14> kUnits = {
      "KiB", "MiB", "GiB", "TiB", "KB", "MB", "GB", "ns", "us", "ms", "s", "B", "%", "x"};
  const std::size_t at = i < s.size() && s[i] == ' ' ? i + 1 : i;
  for (std::string_view u : kUnits) {
    if (s.substr(at, u.size()) != u) continue;
    const std::size_t end = at + u.size();
    if (end == s.size() || (!letter(s[end]) && !digit(s[end]))) return end;
  }
  return i;
}

// `word` without the punctuation that may follow it in a sentence.
std::string_view trimmed(std::string_view word) {
  while (!word.empty() &&
         (word.back() == ':' || word.back() == ',' || word.back() == ')' || word.back() == ';')) {
    word.remove_suffix(1);
  }
  return word;
}

// An errno's name: 'E' and two or more capitals ("EIO", "ENOENT").
bool error_code(std::string_view word) {
  return word.size() >= 3 && word[0] == 'E' &&
         std::all_of(word.begin(), word.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

// The step's location that ends `text`, "FILE:LINE:COLUMN" in parentheses, or "".
std::string_view location_of(std::string_view text) {
  if (text.empty() || text.back() != ')') return {};
  const std::size_t open = text.rfind('(');
  if (open == std::string_view::npos) return {};
  const std::string_view inner = text.substr(open + 1, text.size() - open - 2);
  const std::size_t col = inner.rfind(':');
  if (col == std::string_view::npos || col == 0) return {};
  const std::size_t line = inner.rfind(':', col - 1);
  const auto digits = [](std::string_view d) {
    return !d.empty() && std::all_of(d.begin(), d.end(), digit);
  };
  if (line == std::string_view::npos || line == 0 || !digits(inner.substr(col + 1)) ||
      !digits(inner.substr(line + 1, col - line - 1))) {
    return {};
  }
  return inner;
}

}  // namespace

std::string mask_figures(const std::string& diagnosis) {
  const std::string_view s = diagnosis;
  std::string out;
  out.reserve(s.size());
  // Bounded: every pass moves i on by at least one character.
  for (std::size_t i = 0; i < s.size();) {
    if (!digit(s[i]) || (i > 0 && !opens_figure(s[i - 1]))) {
      out += s[i++];
      continue;
    }
    std::size_t end = number_end(s, i);
    if (const std::size_t u = unit_end(s, end); u != end) {
      end = u;
    } else {
      // A list of numbers ("0-4,7", "1, 2, 3") is one figure.
      for (;;) {
        std::size_t next = end;
        if (next < s.size() && (s[next] == '-' || s[next] == ',')) ++next;
        if (next > end && next < s.size() && s[next] == ' ' && s[next - 1] == ',') ++next;
        if (next == end || next >= s.size() || !digit(s[next])) break;
        end = number_end(s, next);
      }
      // A number glued to a word that is not a unit ("3rd", "2nd") is a word.
      if (end < s.size() && letter(s[end])) {
        out.append(s.substr(i, end - i));
        i = end;
        continue;
      }
    }
    out += '_';
    i = end;
  }
  return out;
}

std::string failure_kind(const run::RunRecord& r) {
  assert(run::failed(r.outcome));
  // A live run cannot tell a deadlock from work still running: its hang is a timeout.
  if (r.outcome == run::Outcome::kDeadlock || r.outcome == run::Outcome::kTimeout)
    return std::string(kHang);
  const std::string check = r.check.empty() ? std::string(run::to_string(r.outcome)) : r.check;
  const std::string_view d = r.diagnosis;
  std::string paths, codes;
  // Bounded: every pass moves past one word.
  for (std::size_t at = 0; at < d.size();) {
    const std::size_t end = std::min(d.find(' ', at), d.size());
    const std::string_view word = trimmed(d.substr(at, end - at));
    if (word.size() > 1 && word[0] == '/') {
      paths += (paths.empty() ? "" : ", ") + std::string(word);
    } else if (error_code(word)) {
      codes += " " + std::string(word);
    }
    at = end + 1;
  }
  const std::string_view where = location_of(d);
  std::string kind = paths.empty()
                         ? check + ": " + mask_figures(r.diagnosis)
                         : check + ": " + paths + codes +
                               (where.empty() ? std::string() : " (" + std::string(where) + ")");
  std::replace(kind.begin(), kind.end(), '\n', ' ');
  std::replace(kind.begin(), kind.end(), '\r', ' ');
  return kind;
}

}  // namespace racesim::report
