#include "common/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace overpass {
namespace {

std::string osError(int error) {
  return std::strerror(error);
}

std::string tooLarge(std::size_t maxBytes) {
  return "larger than " + (maxBytes % (std::size_t{1} << 20) == 0
                               ? std::to_string(maxBytes >> 20) + " MiB"
                               : std::to_string(maxBytes) + " bytes");
}

}  // namespace

std::string readRegularFile(const std::string& path, std::string* text, std::size_t maxBytes) {
  text->clear();
  // O_NONBLOCK: opening a FIFO for reading must not wait for a writer; it is refused below.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return osError(errno);
  struct stat st {};
  std::string problem;
  if (::fstat(fd, &st) != 0) {
    problem = osError(errno);
  } else if (!S_ISREG(st.st_mode)) {
    problem = S_ISDIR(st.st_mode) ? "a directory, not a regular file" : "not a regular file";
  } else if (static_cast<std::size_t>(st.st_size) > maxBytes) {
    problem = tooLarge(maxBytes) + " (" + std::to_string(st.st_size) + " bytes)";
  } else {
    text->reserve(static_cast<std::size_t>(st.st_size));
    char buf[65536];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        problem = osError(errno);
        break;
      }
      if (n == 0) break;
      if (text->size() + static_cast<std::size_t>(n) > maxBytes) {  // it grew while being read
        problem = tooLarge(maxBytes);
        break;
      }
      text->append(buf, static_cast<std::size_t>(n));
    }
  }
  ::close(fd);
  if (!problem.empty()) text->clear();
  return problem;
}

std::string checkWritable(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_NONBLOCK | O_CLOEXEC, 0666);
  if (fd < 0)
    return errno == ENXIO ? std::string("a FIFO or socket with no reader") : osError(errno);
  struct stat st {};
  std::string problem;
  if (::fstat(fd, &st) != 0)
    problem = osError(errno);
  else if (S_ISDIR(st.st_mode))
    problem = "a directory";
  ::close(fd);
  return problem;
}

std::string writeWholeFile(const std::string& path, const std::string& text) {
  // Opened without blocking (a FIFO whose reader has gone is refused), then written blocking.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK | O_CLOEXEC, 0666);
  if (fd < 0)
    return errno == ENXIO ? std::string("a FIFO or socket with no reader") : osError(errno);
  std::string problem;
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) problem = osError(errno);
  for (std::size_t done = 0; problem.empty() && done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      problem = n < 0 ? osError(errno) : std::string("nothing written");
      break;
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0 && problem.empty()) problem = osError(errno);
  return problem;
}

}  // namespace overpass
