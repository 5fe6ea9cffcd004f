//===- package/FileUtil.cpp - Whole-file reads and atomic writes ----------===//
#include "package/FileUtil.h"

#include "package/Error.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tessel;

static std::string errnoText() { return std::strerror(errno); }

std::string tessel::readFile(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error("cannot open '" + path + "': " + errnoText());
  std::string content;
  char buf[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR)
        continue;
      std::string message = "cannot read '" + path + "': " + errnoText();
      ::close(fd);
      throw Error(message);
    }
    if (n == 0)
      break;
    content.append(buf, size_t(n));
  }
  ::close(fd);
  return content;
}

static void writeAll(int fd, std::string_view content) {
  const char *data = content.data();
  size_t left = content.size();
  while (left > 0) {
    ssize_t n = ::write(fd, data, left);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      throw Error(errnoText());
    }
    data += n;
    left -= size_t(n);
  }
}

void tessel::writeFileAtomic(const std::string &path,
                             std::string_view content) {
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  if (dir.empty())
    dir = "/";
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty())
    throw Error("cannot write '" + path + "': not a file name");

  // Unique per process, thread and call: pid + counter + clock.
  static std::atomic<unsigned> counter{0};
  std::string temp = dir + "/." + base + ".tmp." + std::to_string(::getpid()) +
                     "." + std::to_string(counter++) + "." +
                     std::to_string(std::chrono::steady_clock::now()
                                        .time_since_epoch()
                                        .count() %
                                    1000000007);
  int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error("cannot write '" + path + "': cannot create '" + temp +
                "': " + errnoText());
  try {
    writeAll(fd, content);
    if (::fsync(fd) != 0)
      throw Error("fsync: " + errnoText());
    if (::close(fd) != 0) {
      fd = -1;
      throw Error("close: " + errnoText());
    }
    fd = -1;
    if (::rename(temp.c_str(), path.c_str()) != 0)
      throw Error("rename to '" + path + "': " + errnoText());
  } catch (const Error &error) {
    if (fd >= 0)
      ::close(fd);
    ::unlink(temp.c_str());
    throw Error("cannot write '" + path + "': " + error.what());
  }
  // Make the rename itself durable; failure here does not undo the write.
  int dirFd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dirFd >= 0) {
    ::fsync(dirFd);
    ::close(dirFd);
  }
}
