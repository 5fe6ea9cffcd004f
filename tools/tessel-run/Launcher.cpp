//===- tools/tessel-run/Launcher.cpp - Start N local ranks of a program ---===//

#include "tools/tessel-run/Launcher.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace tessel::run {
namespace {

using Clock = std::chrono::steady_clock;

volatile sig_atomic_t gStopSignal = 0;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::string describeStatus(int status) {
  if (WIFSIGNALED(status)) {
    const char *name = strsignal(WTERMSIG(status));
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" +
           (name ? name : "?") + ")";
  }
  return "exited with code " + std::to_string(WEXITSTATUS(status));
}

int exitCodeOf(int status) {
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

/// One rank's process and its two output pipes.
struct Rank {
  pid_t pid = -1;
  int fds[2] = {-1, -1};   // read ends: stdout, stderr
  std::string pending[2];  // bytes after the last newline
  bool running = false;
  int exitCode = -1;
};

void closeFd(int &fd) {
  if (fd >= 0)
    ::close(fd);
  fd = -1;
}

[[noreturn]] void execChild(const LaunchOptions &options, int rank, int port, int outFd,
                            int errFd) {
  // Own process group, so ending a rank also ends what it started; die with the launcher.
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  ::dup2(outFd, STDOUT_FILENO);
  ::dup2(errFd, STDERR_FILENO);
  for (const auto &[key, value] : options.env)
    ::setenv(key.c_str(), value.c_str(), 1);
  std::string n = std::to_string(options.numProcesses), r = std::to_string(rank);
  ::setenv("MASTER_ADDR", options.masterAddr.c_str(), 1);
  ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
  ::setenv("RANK", r.c_str(), 1);
  ::setenv("LOCAL_RANK", r.c_str(), 1);
  ::setenv("WORLD_SIZE", n.c_str(), 1);
  ::setenv("LOCAL_WORLD_SIZE", n.c_str(), 1);
  ::setenv("GROUP_RANK", "0", 1);
  std::vector<char *> args;
  for (const std::string &arg : options.argv)
    args.push_back(const_cast<char *>(arg.c_str()));
  args.push_back(nullptr);
  ::execvp(args[0], args.data());
  std::fprintf(stderr, "tessel-run: cannot execute '%s': %s\n", args[0], std::strerror(errno));
  std::fflush(stderr);
  ::_exit(127);
}

void signalAll(std::vector<Rank> &ranks, int sig) {
  for (Rank &rank : ranks)
    if (rank.running)
      ::kill(-rank.pid, sig); // the rank's whole process group
}

} // namespace

void requestStop(int signal) { gStopSignal = signal; }

int findFreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (::bind(fd, reinterpret_cast<sockaddr *>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr *>(&addr), &len) != 0) {
    int err = errno;
    ::close(fd);
    throw std::runtime_error(std::string("cannot find a free port: ") + std::strerror(err));
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

LaunchResult launch(const LaunchOptions &options) {
  if (options.numProcesses < 1)
    throw std::runtime_error("the number of processes must be at least 1");
  if (options.argv.empty())
    throw std::runtime_error("no program to run");
  auto onLine = options.onLine;
  if (!onLine)
    onLine = [](int rank, int stream, const std::string &line) {
      std::FILE *out = stream == 2 ? stderr : stdout;
      std::fprintf(out, "[rank %d] %s\n", rank, line.c_str());
      std::fflush(out);
    };
  auto onMessage = options.onMessage;
  if (!onMessage)
    onMessage = [](const std::string &message) {
      std::fprintf(stderr, "tessel-run: %s\n", message.c_str());
      std::fflush(stderr);
    };

  int port = options.masterPort > 0 ? options.masterPort : findFreePort();
  int n = options.numProcesses;
  std::vector<Rank> ranks(n);
  std::fflush(nullptr);
  for (int r = 0; r < n; ++r) {
    int out[2], err[2];
    if (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
      throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
    pid_t pid = ::fork();
    if (pid < 0)
      throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0)
      execChild(options, r, port, out[1], err[1]);
    ::setpgid(pid, pid);
    ::close(out[1]);
    ::close(err[1]);
    ranks[r].pid = pid;
    ranks[r].fds[0] = out[0];
    ranks[r].fds[1] = err[0];
    ranks[r].running = true;
  }

  LaunchResult result;
  Clock::time_point start = Clock::now(), killAt{};
  bool ending = false, killed = false;
  int running = n;
  auto endAll = [&](const std::string &why) {
    if (ending)
      return;
    ending = true;
    onMessage(why);
    signalAll(ranks, SIGTERM);
    killAt = Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(options.graceSeconds * 1000));
  };
  auto flushLine = [&](int r, int stream, bool all) {
    std::string &buf = ranks[r].pending[stream];
    size_t pos;
    while ((pos = buf.find('\n')) != std::string::npos) {
      onLine(r, stream + 1, buf.substr(0, pos));
      buf.erase(0, pos + 1);
    }
    if (all && !buf.empty()) {
      onLine(r, stream + 1, buf);
      buf.clear();
    }
  };
  Clock::time_point allExited{};

  for (;;) {
    std::vector<pollfd> polls;
    std::vector<std::pair<int, int>> owners;
    for (int r = 0; r < n; ++r)
      for (int s = 0; s < 2; ++s)
        if (ranks[r].fds[s] >= 0) {
          polls.push_back({ranks[r].fds[s], POLLIN, 0});
          owners.emplace_back(r, s);
        }
    if (polls.empty() && running == 0)
      break;
    // After every rank is gone, a pipe may still be held by something a rank
    // left behind: give it a moment, then stop listening.
    if (running == 0 && secondsSince(allExited) > 1.0)
      break;
    int ready = ::poll(polls.data(), polls.size(), 50);
    if (ready < 0 && errno != EINTR)
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    for (size_t i = 0; ready > 0 && i < polls.size(); ++i) {
      if (!(polls[i].revents & (POLLIN | POLLHUP | POLLERR)))
        continue;
      auto [r, s] = owners[i];
      char chunk[8192];
      ssize_t got = ::read(ranks[r].fds[s], chunk, sizeof(chunk));
      if (got > 0) {
        ranks[r].pending[s].append(chunk, static_cast<size_t>(got));
        flushLine(r, s, false);
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        flushLine(r, s, true);
        closeFd(ranks[r].fds[s]);
      }
    }
    // Reap exited ranks.
    for (int r = 0; r < n; ++r) {
      if (!ranks[r].running)
        continue;
      int status = 0;
      pid_t got = ::waitpid(ranks[r].pid, &status, WNOHANG);
      if (got != ranks[r].pid)
        continue;
      ranks[r].running = false;
      ranks[r].exitCode = exitCodeOf(status);
      if (--running == 0)
        allExited = Clock::now();
      ::kill(-ranks[r].pid, SIGKILL); // anything the rank left in its group
      if (ranks[r].exitCode != 0 && !ending) {
        result.failedRank = r;
        result.exitCode = ranks[r].exitCode;
        std::string others = running > 0 ? "; ending the other " + std::to_string(running) +
                                               " rank" + (running == 1 ? "" : "s")
                                         : "";
        endAll("rank " + std::to_string(r) + " (pid " + std::to_string(ranks[r].pid) + ") " +
               describeStatus(status) + others);
      }
    }
    if (int sig = gStopSignal; sig && !ending) {
      result.exitCode = 128 + sig;
      const char *name = strsignal(sig);
      endAll("received signal " + std::to_string(sig) + " (" + (name ? name : "?") +
             "); ending all " + std::to_string(running) + " running ranks");
    }
    if (!ending && options.timeoutSeconds > 0 && secondsSince(start) > options.timeoutSeconds) {
      result.timedOut = true;
      result.exitCode = 124;
      char seconds[32];
      std::snprintf(seconds, sizeof(seconds), "%g", options.timeoutSeconds);
      endAll(std::string("timed out after ") + seconds + " s; ending all " +
             std::to_string(running) + " running ranks");
    }
    if (ending && !killed && running > 0 && Clock::now() >= killAt) {
      killed = true;
      char seconds[32];
      std::snprintf(seconds, sizeof(seconds), "%g", options.graceSeconds);
      onMessage(std::string("ranks still running ") + seconds + " s after SIGTERM; sending SIGKILL");
      signalAll(ranks, SIGKILL);
    }
  }
  for (int r = 0; r < n; ++r)
    for (int s = 0; s < 2; ++s) {
      flushLine(r, s, true);
      closeFd(ranks[r].fds[s]);
    }
  for (const Rank &rank : ranks)
    result.rankExitCodes.push_back(rank.exitCode);
  return result;
}

} // namespace tessel::run
