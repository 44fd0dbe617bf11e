// Reading and writing whole files with every failure reported: a directory, a device
// that never ends, a full disk or a vanished folder is a user error naming the path,
// never a crash, a hang or a silently missing file.
#pragma once

#include <string>
#include <string_view>

namespace tsl {

// The bytes of the regular file at `path`. A missing file, a directory, a device or
// FIFO (which may never end: /dev/zero) and a read error are user errors that start
// with `who` ("load: cannot read '/tmp': it is a directory").
std::string read_file_or_throw(const std::string& path, std::string_view who);

// Writes `data` to `path`: through a temporary file in the same folder renamed over
// `path` (a failure leaves any old file whole), or straight into an existing device
// (/dev/null, /dev/full). Every write, the close and the rename are checked; a
// failure is a user error starting with `who` that names the path and the reason.
void write_file_or_throw(const std::string& path, std::string_view data, std::string_view who);

}  // namespace tsl
