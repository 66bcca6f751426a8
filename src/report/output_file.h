// Writing an output file so that it is whole or absent: the text goes to PATH.tmp in the same
// directory, is flushed and fsync'd, and is renamed over PATH; every step is checked. A full
// disk, a read-only directory or a path that cannot be a regular file (/proc/version) is an
// error naming the file and the system's reason, never a silently empty or partial file.
#pragma once

#include <string>

namespace racesim::report {

// Returns false with `error` ("cannot write PATH.tmp: No space left on device") on failure, after
// removing the temporary file.
bool write_output_file(const std::string& path, const std::string& text, std::string& error);

}  // namespace racesim::report
