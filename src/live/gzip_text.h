// A gzip-compressed text file read whole (zlib), for the kernel's configuration where the
// kernel shows it only as /proc/config.gz (CONFIG_IKCONFIG_PROC; distributions' kernels have
// /boot/config-RELEASE instead).
//
// This is live code: it reads a file. Nothing here runs inside a simulation.
#pragma once

#include <cstddef>
#include <string>

namespace racesim::live {

// The most bytes a text read this way may have once decompressed (a kernel's configuration has
// some 300 KB); a larger one is refused.
inline constexpr std::size_t kMostGzipTextBytes = 16 << 20;

// Reads and decompresses `path` into `text`. Returns false with `error` "" when the file is
// absent or not readable (nothing to read), and false with `error` naming the file and what is
// wrong when it is not a whole gzip stream or decompresses to more than kMostGzipTextBytes;
// `text` is empty whenever it returns false.
bool read_gzip_text(const std::string& path, std::string& text, std::string& error);

}  // namespace racesim::live
