// Whole-file reads and checked, atomic writes; see files.h.
#include "runtime/kernels/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "runtime/tensor/error.h"

namespace tsl {
namespace {

// What kind of file a non-regular one is, for messages.
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISFIFO(mode)) return "a pipe";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

// Writes all of `data` to fd; false with errno set on failure.
bool write_all(int fd, std::string_view data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

std::string read_file_or_throw(const std::string& path, std::string_view who) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    TSL_ERROR(who, ": cannot open '", path, "': ", std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    TSL_ERROR(who, ": cannot read '", path, "': it is ", kind_of(st.st_mode));
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) TSL_ERROR(who, ": cannot open '", path, "': ", std::strerror(errno));
  std::string out;
  out.reserve(static_cast<size_t>(st.st_size));
  char buf[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      TSL_ERROR(who, ": reading '", path, "' failed: ", std::strerror(e));
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

void write_file_or_throw(const std::string& path, std::string_view data, std::string_view who) {
  struct stat st;
  bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    TSL_ERROR(who, ": cannot write '", path, "': it is a directory");
  }
  if (exists && !S_ISREG(st.st_mode)) {
    // A device or pipe: written in place (renaming over it would replace the node).
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) TSL_ERROR(who, ": cannot open '", path, "' for writing: ", std::strerror(errno));
    bool ok = write_all(fd, data);
    int e = errno;
    if (::close(fd) != 0 && ok) ok = false, e = errno;
    if (!ok) TSL_ERROR(who, ": writing '", path, "' failed: ", std::strerror(e));
    return;
  }
  std::string temp = path + ".tsl-tmp-" + std::to_string(::getpid());
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) TSL_ERROR(who, ": cannot open '", path, "' for writing: ", std::strerror(errno));
  bool ok = write_all(fd, data) && ::fsync(fd) == 0;
  int e = errno;
  if (::close(fd) != 0 && ok) ok = false, e = errno;
  if (ok && ::rename(temp.c_str(), path.c_str()) != 0) ok = false, e = errno;
  if (!ok) {
    ::unlink(temp.c_str());
    TSL_ERROR(who, ": writing '", path, "' failed: ", std::strerror(e));
  }
}

}  // namespace tsl
