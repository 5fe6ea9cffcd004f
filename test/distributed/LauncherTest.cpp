//===- test/distributed/LauncherTest.cpp - tessel-run's launcher --------------===//

#include "tools/tessel-run/Launcher.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <unistd.h>
#include <mutex>

using tessel::run::launch;
using tessel::run::LaunchOptions;

namespace {

struct Captured {
  std::mutex mutex;
  std::vector<std::string> lines, messages;
};

LaunchOptions shell(int n, const std::string &script, Captured &out) {
  LaunchOptions options;
  options.numProcesses = n;
  options.argv = {"/bin/sh", "-c", script};
  options.graceSeconds = 1;
  options.onLine = [&out](int rank, int stream, const std::string &line) {
    std::lock_guard<std::mutex> lock(out.mutex);
    out.lines.push_back("[" + std::to_string(rank) + ":" + std::to_string(stream) + "] " + line);
  };
  options.onMessage = [&out](const std::string &message) { out.messages.push_back(message); };
  return options;
}

bool contains(const std::vector<std::string> &lines, const std::string &text) {
  for (const std::string &line : lines)
    if (line.find(text) != std::string::npos)
      return true;
  return false;
}

} // namespace

TEST(Launcher, SetsTheRendezvousVariables) {
  Captured out;
  auto result = launch(shell(3, "echo $RANK/$WORLD_SIZE/$LOCAL_RANK/$MASTER_ADDR; echo e >&2", out));
  EXPECT_EQ(result.exitCode, 0);
  for (int r = 0; r < 3; ++r) {
    std::string rank = std::to_string(r);
    EXPECT_TRUE(contains(out.lines, "[" + rank + ":1] " + rank + "/3/" + rank + "/127.0.0.1"));
    EXPECT_TRUE(contains(out.lines, "[" + rank + ":2] e"));
  }
}

TEST(Launcher, OneFailingRankEndsTheOthers) {
  Captured out;
  auto start = std::chrono::steady_clock::now();
  auto result = launch(shell(3, "if [ $RANK = 2 ]; then exit 7; fi; sleep 60", out));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(result.exitCode, 7);
  EXPECT_EQ(result.failedRank, 2);
  EXPECT_LT(seconds, 10);
  ASSERT_FALSE(out.messages.empty());
  EXPECT_NE(out.messages[0].find("rank 2"), std::string::npos);
  EXPECT_NE(out.messages[0].find("exited with code 7"), std::string::npos);
}

TEST(Launcher, KillsRanksThatIgnoreSigterm) {
  Captured out;
  auto start = std::chrono::steady_clock::now();
  // Rank 1 ignores SIGTERM and says so through a file; then rank 0 fails.
  std::string ready = ::testing::TempDir() + "tessel-run-ready-" + std::to_string(::getpid());
  std::remove(ready.c_str());
  auto result = launch(shell(2,
                             "trap '' TERM; if [ $RANK = 1 ]; then touch " + ready +
                                 "; sleep 60; fi; while [ ! -e " + ready +
                                 " ]; do sleep 0.05; done; exit 1",
                             out));
  std::remove(ready.c_str());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(result.exitCode, 1);
  EXPECT_LT(seconds, 10);
  EXPECT_TRUE(contains(out.messages, "SIGKILL"));
}

TEST(Launcher, TimeoutEndsTheJob) {
  Captured out;
  LaunchOptions options = shell(2, "sleep 60", out);
  options.timeoutSeconds = 0.5;
  auto result = launch(options);
  EXPECT_TRUE(result.timedOut);
  EXPECT_EQ(result.exitCode, 124);
}

TEST(Launcher, MissingProgramFailsCleanly) {
  Captured out;
  LaunchOptions options = shell(2, "", out);
  options.argv = {"/nonexistent/program"};
  auto result = launch(options);
  EXPECT_EQ(result.exitCode, 127);
  EXPECT_TRUE(contains(out.lines, "cannot execute"));
}
