// An override file (`--set-file FILE`): a KEY=VALUE per line, as `--set` takes it; blank lines and
// lines that start with # are skipped. `racesim live --calibrate` writes one. The text is read by
// the one bounded reader (file/input_file.h); this parses it, line by line, with located errors.
#pragma once

#include <string>
#include <vector>

#include "src/scenario/file/diagnostics.h"

namespace racesim::scenario {

// The most lines an override file may hold.
inline constexpr int kMaxOverrideLines = 10'000;

// Appends each assignment of `text` (the contents of `file`) to `texts`, and where it was
// written (file, line, column of its first character) to `origins`. False, with the error in
// `diags` at its line and column, on a line that is not KEY=VALUE, a NUL byte, or more than
// kMaxOverrideLines lines; the error quotes at most 80 characters of the line.
bool parse_override_file(const std::string& text, const std::string& file, std::vector<std::string>& texts,
                         std::vector<Location>& origins, Diagnostics& diags);

}  // namespace racesim::scenario
