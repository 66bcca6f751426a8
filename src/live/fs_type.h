// The kind of file system a directory is on (statfs(2)'s f_type), by name: what a live run's
// results say they were measured on ("tmpfs", "ext4", "nfs", ...).
#pragma once

#include <cstdint>
#include <string>

namespace racesim::live {

// "tmpfs", "ext4" (ext2/3/4 share the magic), "xfs", "btrfs", "nfs", "lustre", "overlay", "zfs",
// "fuse", "cifs", ...; an unknown kind as "fs-0x<hex magic>"; "unknown" when statfs fails.
std::string file_system_name(const std::string& dir);
// The name of statfs's f_type `magic`, as file_system_name gives it.
std::string file_system_kind(std::uint64_t magic);
// Whether writes to a file system of kind `fs_type` (as file_system_name names it) go through
// Linux's page cache and its write-back: ext4, xfs, btrfs, overlay (not tmpfs and ramfs, which
// are the page cache, nor network file systems, whose clients cache by their own rules).
bool local_write_back(const std::string& fs_type);

}  // namespace racesim::live
