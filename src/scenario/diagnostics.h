// Located errors for scenario files: every problem names file:line:column and what was
// expected, and a load reports all of them at once (up to a limit), before anything runs.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace racesim::scenario {

// A place in a source file; line and column are 1-based (0 = unknown).
struct Location {
  std::string file;
  int line = 0;
  int column = 0;
};
// "file:line:column" (or "file" when the position is unknown).
std::string to_string(const Location& where);

struct Diagnostic {
  Location where;
  std::string message;
};

// A bounded list of distinct errors (an identical error at the same place is kept once). After
// kMaxErrors, further errors are counted, not stored, so a
// pathological file cannot exhaust memory; to_string() says how many were dropped.
class Diagnostics {
 public:
  static constexpr std::size_t kMaxErrors = 100;

  void error(const Location& where, std::string message);
  bool ok() const { return count_ == 0; }
  std::size_t count() const { return count_; }
  const std::vector<Diagnostic>& all() const { return list_; }
  // One line per error: "file:line:column: error: message".
  std::string to_string() const;

 private:
  std::vector<Diagnostic> list_;
  std::size_t count_ = 0;
};

}  // namespace racesim::scenario
