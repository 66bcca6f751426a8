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
// The same with the file's directories left out ("om_read_while_write.yaml:40:7"): what run
// results (diagnoses) say, so that they do not depend on how the path was spelled or where the
// run was started (shards run from different directories merge into the whole run's results).
std::string where_text(const Location& where);

struct Diagnostic {
  Location where;
  std::string message;
};

// A bounded list of distinct errors (an identical error at the same place is shown once). After
// kMaxErrors, further errors are counted, not stored, so a pathological file cannot exhaust
// memory; to_string() says how many were dropped.
//
// count() counts every error raised, repeats included: code that compares count() before and
// after a piece of work learns that the work failed even when its error repeats one already
// shown (the same program compiled for a second strategy or sweep point).
class Diagnostics {
 public:
  static constexpr std::size_t kMaxErrors = 100;

  void error(const Location& where, std::string message);
  bool ok() const { return raised_ == 0; }
  std::size_t count() const { return raised_; }
  const std::vector<Diagnostic>& all() const { return list_; }
  // One line per error: "file:line:column: error: message".
  std::string to_string() const;

 private:
  std::vector<Diagnostic> list_;
  std::size_t distinct_ = 0;  // distinct errors, shown or dropped
  std::size_t raised_ = 0;    // every error, repeats included
};

}  // namespace racesim::scenario
