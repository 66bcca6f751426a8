// Every input racesim reads whole (a scenario, an override file, a choice file, a results file)
// goes through one reader with one bound: a regular file only (a directory, a device or a pipe is
// an error, never an empty input), at most `max_bytes` (a larger file is refused after reading one
// byte past the bound, never read whole), and an error that says which (its reader names the file).
//
// Errors that quote an input's text quote a prefix with control bytes escaped (`excerpt`), so a
// binary or huge line never reaches a terminal as it is.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "sim/kernel/status.h"

namespace racesim::scenario {

// What a file larger than the bound gives: an error, or its first max_bytes + 1 bytes, for a
// reader that says where in the text the bound is crossed (the scenario loader, by line and
// column).
enum class Oversize : bool { kError, kFirstBytes };

// The whole of the file at `path`, or an error saying why not, for the caller to print after the
// file's name: a directory, a device or a pipe, cannot be opened or read (the system's reason),
// or larger than `max_bytes`. `what` names what the file should be in the error ("a scenario file").
// REQUIRES: max_bytes > 0.
kernel::Result<std::string> read_input_file(const std::string& path, std::size_t max_bytes, std::string_view what,
                                            Oversize oversize = Oversize::kError);

// `text` as an error quotes it: at most `max_chars` characters, then "...", control bytes and
// DEL escaped as \xNN.
std::string excerpt(std::string_view text, std::size_t max_chars = 80);

}  // namespace racesim::scenario
