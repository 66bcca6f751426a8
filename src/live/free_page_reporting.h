// Whether the machine is a VM that reports its free memory to the host (virtio-balloon free
// page reporting, VIRTIO_BALLOON_F_REPORTING), as `racesim live --calibrate` states it. Some 2 s
// after pages are freed, the guest hands free blocks of 2^order pages to the host; a process
// allocating memory meanwhile waits. On this project's VM a writer filling the page cache of an
// ext4 file (its pages from a file removed just before) stalls 45-60 ms in one write(2) about
// every 2.3 s at order 9 (2 MiB blocks), and not at order 10: a pause that Linux on a machine
// without a balloon does not have and the model does not model, so the calibration says so.
//
// This is live code: it reads sysfs. Nothing here runs inside a simulation.
#pragma once

#include <string>

namespace racesim::live {

struct FreePageReporting {
  bool on = false;  // a virtio balloon offers VIRTIO_BALLOON_F_REPORTING
  int order = -1;   // page_reporting_order (-1: not readable)
};

// From the texts of a virtio balloon's `features` (a string of '0'/'1' by feature bit, as
// /sys/bus/virtio/devices/virtioN/features shows it; "" when there is none) and of
// /sys/module/page_reporting/parameters/page_reporting_order ("" when absent).
FreePageReporting free_page_reporting(const std::string& balloon_features, const std::string& order);
// Reads them: the first virtio balloon's features under /sys/bus/virtio/drivers/virtio_balloon/.
FreePageReporting read_free_page_reporting();
// Comment lines for the calibration's output ("" when the memory is not reported).
std::string format_free_page_reporting(const FreePageReporting& r);

}  // namespace racesim::live
