// Whether the VM reports its free memory to the host (see free_page_reporting.h).
#include "src/live/free_page_reporting.h"

#include <filesystem>
#include <string>
#include <system_error>

#include "src/live/cpu_calibrate.h"

namespace racesim::live {

namespace {
constexpr std::size_t kReportingBit = 5;  // VIRTIO_BALLOON_F_REPORTING (include/uapi/linux/virtio_balloon.h)
constexpr int kQuietOrder = 10;            // the order at which the stalls were not seen here
}  // namespace

FreePageReporting free_page_reporting(const std::string& balloon_features, const std::string& order) {
  FreePageReporting r;
  r.on = balloon_features.size() > kReportingBit && balloon_features[kReportingBit] == '1';
  std::size_t used = 0;
  try {
    const int o = std::stoi(order, &used);
    if (used > 0 && o >= 0 && o < 64) r.order = o;
  } catch (const std::exception&) {
    // Not a number: not readable.
  }
  return r;
}

FreePageReporting read_free_page_reporting() {
  std::string features;
  std::error_code ec;
  const std::filesystem::path drivers = "/sys/bus/virtio/drivers/virtio_balloon";
  // Bounded: a driver directory lists its few devices.
  for (std::filesystem::directory_iterator it(drivers, ec), end; !ec && it != end; it.increment(ec)) {
    if (it->path().filename().string().rfind("virtio", 0) != 0) continue;
    features = read_text((it->path() / "features").string());
    if (!features.empty()) break;
  }
  return free_page_reporting(features, read_text("/sys/module/page_reporting/parameters/page_reporting_order"));
}

std::string format_free_page_reporting(const FreePageReporting& r) {
  if (!r.on) return "";
  const std::string order = r.order >= 0 ? std::to_string(r.order) : std::string("unknown");
  std::string s = "# memory: this VM reports free memory to its host (virtio-balloon free page reporting, order " + order + "):\n";
  if (r.order >= kQuietOrder) {
    return s + "#   at this order a writer filling the page cache did not stall on this project's VM (at order 9 it\n"
               "#   stalled 45-60 ms about every 2.3 s while freed pages were reported)\n";
  }
  return s + "#   a writer filling the page cache can stall tens of ms while freed pages are reported, which the\n"
             "#   model does not model; for live comparisons raise /sys/module/page_reporting/parameters/"
             "page_reporting_order\n#   (10 took the stalls away on this project's VM)\n";
}

}  // namespace racesim::live
