//===- tools/tessel-run/Launcher.h - Start N local ranks of a program -*- C++ -*-===//
//
// The engine of `tessel-run -n N -- program args...`: fork/exec N copies of a
// program on this machine with the variables every c10d program reads
// (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE),
// forward each rank's stdout/stderr line by line, and when one rank fails end
// all the others (SIGTERM, then SIGKILL after a grace period) so nothing hangs.
//
// No LibTorch here: the launcher is plain POSIX, and tests use it directly.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TOOLS_TESSEL_RUN_LAUNCHER_H
#define TESSEL_TOOLS_TESSEL_RUN_LAUNCHER_H

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace tessel::run {

struct LaunchOptions {
  int numProcesses = 1;
  /// argv[0] is the program (searched in PATH when it has no '/').
  std::vector<std::string> argv;
  std::string masterAddr = "127.0.0.1";
  /// 0: pick a free port.
  int masterPort = 0;
  /// Seconds between SIGTERM and SIGKILL when ranks are being ended.
  double graceSeconds = 5.0;
  /// End every rank when the whole job runs longer than this; 0: no limit.
  double timeoutSeconds = 0.0;
  /// Extra environment for every rank (on top of the launcher's own).
  std::map<std::string, std::string> env;
  /// Receives each complete output line of a rank (without the newline);
  /// stream is 1 (stdout) or 2 (stderr). The default prints "[rank k] line"
  /// to the launcher's stdout or stderr.
  std::function<void(int rank, int stream, const std::string &line)> onLine;
  /// Receives the launcher's own messages (rank failures, timeouts). The
  /// default prints "tessel-run: ..." to stderr.
  std::function<void(const std::string &message)> onMessage;
};

struct LaunchResult {
  /// 0 when every rank exited with 0; otherwise the first failing rank's exit
  /// code (128 + signal for a rank killed by a signal), or 124 on timeout.
  int exitCode = 0;
  /// The first rank that failed, or -1.
  int failedRank = -1;
  bool timedOut = false;
  /// Each rank's own exit code (128 + signal when killed), in rank order.
  std::vector<int> rankExitCodes;
};

/// A TCP port on 127.0.0.1 that nothing listens on right now.
int findFreePort();

/// Asks a running launch() to end every rank (SIGTERM, then SIGKILL after the
/// grace period) and return 128 + signal. Async-signal-safe: call it from a
/// SIGINT/SIGTERM handler.
void requestStop(int signal);

/// Runs the job to completion. Throws std::runtime_error when it cannot start
/// (bad options, no pipes); a rank whose program cannot be executed exits 127.
LaunchResult launch(const LaunchOptions &options);

} // namespace tessel::run

#endif // TESSEL_TOOLS_TESSEL_RUN_LAUNCHER_H
