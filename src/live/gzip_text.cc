// A gzip-compressed text file read whole (see gzip_text.h).
#include "src/live/gzip_text.h"

#include <zlib.h>

#include <cstdio>
#include <memory>
#include <utility>

namespace racesim::live {

bool read_gzip_text(const std::string& path, std::string& text, std::string& error) {
  text.clear();
  error.clear();
  // Every failure leaves no text, whatever had been decompressed by then.
  const auto fail = [&](std::string why) {
    text.clear();
    error = path + ": " + std::move(why);
    return false;
  };
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!file) return false;
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return fail("cannot start zlib's inflate");  // 16: gzip, not zlib
  std::unique_ptr<z_stream, int (*)(z_stream*)> done(&z, inflateEnd);
  unsigned char in[1 << 14];
  char out[1 << 15];
  int status = Z_OK;
  // Bounded by the file's length and kMostGzipTextBytes.
  while (status != Z_STREAM_END) {
    z.avail_in = static_cast<uInt>(std::fread(in, 1, sizeof in, file.get()));
    if (std::ferror(file.get())) return fail("read failed");
    if (z.avail_in == 0) {
      return fail("the gzip stream ends early, after " + std::to_string(text.size()) + " bytes of text");
    }
    z.next_in = in;
    // Bounded: each pass fills `out` or uses up the input.
    do {
      z.avail_out = sizeof out;
      z.next_out = reinterpret_cast<Bytef*>(out);
      status = inflate(&z, Z_NO_FLUSH);
      if (status != Z_OK && status != Z_STREAM_END) {
        return fail("not a gzip stream (zlib: " +
                    (z.msg != nullptr ? std::string(z.msg) : "error " + std::to_string(status)) + ")");
      }
      text.append(out, sizeof out - z.avail_out);
      if (text.size() > kMostGzipTextBytes) {
        return fail("more than " + std::to_string(kMostGzipTextBytes) + " bytes once decompressed");
      }
    } while (z.avail_out == 0 && status != Z_STREAM_END);
  }
  return true;
}

}  // namespace racesim::live
