// The kind of file system a directory is on (see fs_type.h).
#include "src/live/fs_type.h"

#include <sys/vfs.h>

#include <cstdint>
#include <cstdio>

namespace racesim::live {

std::string file_system_name(const std::string& dir) {
  struct statfs st {};
  if (statfs(dir.c_str(), &st) != 0) return "unknown";
  return file_system_kind(static_cast<std::uint64_t>(static_cast<std::uint32_t>(st.f_type)));
}

std::string file_system_kind(std::uint64_t magic) {
  // The magic numbers of linux/magic.h (and Lustre's and ZFS's own).
  static constexpr struct {
    std::uint64_t magic;
    const char* name;
  } kKinds[] = {{0x01021994, "tmpfs"},    {0xEF53, "ext4"},       {0x58465342, "xfs"},
                {0x9123683E, "btrfs"},    {0x6969, "nfs"},        {0x0BD00BD0, "lustre"},
                {0x794C7630, "overlay"},  {0x2FC12FC1, "zfs"},    {0x65735546, "fuse"},
                {0xFF534D42, "cifs"},     {0xFE534D42, "smb2"},   {0x47504653, "gpfs"},
                {0x00C36400, "ceph"},     {0x73717368, "squashfs"}, {0x858458F6, "ramfs"}};
  for (const auto& k : kKinds) {
    if (k.magic == magic) return k.name;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "fs-0x%llx", static_cast<unsigned long long>(magic));
  return buf;
}

bool local_write_back(const std::string& fs_type) {
  return fs_type == "ext4" || fs_type == "xfs" || fs_type == "btrfs" || fs_type == "overlay";
}

}  // namespace racesim::live
