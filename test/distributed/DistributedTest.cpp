//===- test/distributed/DistributedTest.cpp - Multi-process DDP / sharding parity ---===//
//
// Each test starts tessel-dist-worker (Worker.cpp) as 2 or 3 Gloo ranks through
// the launcher and checks that every rank exits 0; the worker compares the
// data-parallel result with single-process training itself.
//
//===----------------------------------------------------------------------===//

#include "tools/tessel-run/Launcher.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <unistd.h>

namespace {

struct WorkerRun {
  int exitCode = -1;
  int failedRank = -1;
  double seconds = 0;
  std::string output;
};

WorkerRun runWorker(int ranks, std::vector<std::string> args, double timeoutSeconds = 120) {
  tessel::run::LaunchOptions options;
  options.numProcesses = ranks;
  options.argv = {TESSEL_DIST_WORKER};
  options.argv.insert(options.argv.end(), args.begin(), args.end());
  options.timeoutSeconds = timeoutSeconds;
  options.graceSeconds = 2;
  options.env["OMP_NUM_THREADS"] = "1";
  WorkerRun run;
  std::mutex mutex;
  options.onLine = [&](int rank, int, const std::string &line) {
    std::lock_guard<std::mutex> lock(mutex);
    run.output += "[rank " + std::to_string(rank) + "] " + line + "\n";
  };
  options.onMessage = [&](const std::string &message) {
    std::lock_guard<std::mutex> lock(mutex);
    run.output += "tessel-run: " + message + "\n";
  };
  auto start = std::chrono::steady_clock::now();
  auto result = tessel::run::launch(options);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.exitCode = result.exitCode;
  run.failedRank = result.failedRank;
  return run;
}

/// A shell command's combined output, wait status and duration.
struct CommandRun {
  bool started = false;
  std::string output;
  int status = -1;
  double seconds = 0;
};

CommandRun runCommand(const std::string &command) {
  CommandRun run;
  auto start = std::chrono::steady_clock::now();
  FILE *pipe = ::popen(command.c_str(), "r");
  if (!pipe)
    return run;
  run.started = true;
  char buffer[4096];
  while (size_t got = std::fread(buffer, 1, sizeof(buffer), pipe))
    run.output.append(buffer, got);
  run.status = ::pclose(pipe);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "tessel-dist-" + std::to_string(::getpid()) + "-" + name;
}

} // namespace

class DdpParity : public ::testing::TestWithParam<int> {};

TEST_P(DdpParity, EveryVariantMatchesSingleProcessTraining) {
  WorkerRun run = runWorker(GetParam(), {"ddp"});
  EXPECT_EQ(run.exitCode, 0) << run.output;
  EXPECT_EQ(run.output.find("FAIL"), std::string::npos) << run.output;
}

TEST_P(DdpParity, BothShardingModesMatchSingleProcessTraining) {
  WorkerRun run = runWorker(GetParam(), {"shard"});
  EXPECT_EQ(run.exitCode, 0) << run.output;
  EXPECT_EQ(run.output.find("FAIL"), std::string::npos) << run.output;
}

TEST_P(DdpParity, Zero1BucketsReducedDuringBackwardMatchSingleProcessTraining) {
  WorkerRun run = runWorker(GetParam(), {"zero1-buckets"});
  EXPECT_EQ(run.exitCode, 0) << run.output;
  EXPECT_EQ(run.output.find("FAIL"), std::string::npos) << run.output;
}

TEST_P(DdpParity, FullyShardedMatchesSingleProcessTrainingAndRefusesMisuse) {
  WorkerRun run = runWorker(GetParam(), {"fsdp"});
  EXPECT_EQ(run.exitCode, 0) << run.output;
  EXPECT_EQ(run.output.find("FAIL"), std::string::npos) << run.output;
}

INSTANTIATE_TEST_SUITE_P(Ranks, DdpParity, ::testing::Values(2, 3),
                         [](const auto &info) { return std::to_string(info.param) + "ranks"; });

TEST(Checkpoint, SavedAtTwoRanksResumesIdenticallyAtThree) {
  std::string ckpt = tempPath("zero1.pt"), ref = tempPath("reference.pt");
  WorkerRun save = runWorker(2, {"save", ckpt, ref});
  ASSERT_EQ(save.exitCode, 0) << save.output;
  WorkerRun load = runWorker(3, {"load", ckpt, ref});
  EXPECT_EQ(load.exitCode, 0) << load.output;
  EXPECT_EQ(load.output.find("FAIL"), std::string::npos) << load.output;
  std::remove(ckpt.c_str());
  std::remove(ref.c_str());
}

TEST(Checkpoint, SavedAtThreeRanksResumesIdenticallyAtTwo) {
  // Both runs step in several groups of buckets, with different groupings.
  std::string ckpt = tempPath("zero1-3to2.pt"), ref = tempPath("reference-3to2.pt");
  WorkerRun save = runWorker(3, {"save", ckpt, ref});
  ASSERT_EQ(save.exitCode, 0) << save.output;
  EXPECT_EQ(save.output.find("FAIL"), std::string::npos) << save.output;
  WorkerRun load = runWorker(2, {"load", ckpt, ref});
  EXPECT_EQ(load.exitCode, 0) << load.output;
  EXPECT_EQ(load.output.find("FAIL"), std::string::npos) << load.output;
  std::remove(ckpt.c_str());
  std::remove(ref.c_str());
}

TEST(Checkpoint, FullyShardedSavedAtTwoRanksResumesIdenticallyAtThreeAndAtOne) {
  std::string ckpt = tempPath("fsdp.pt"), ref = tempPath("fsdp-reference.pt");
  WorkerRun save = runWorker(2, {"fsdp-save", ckpt, ref});
  ASSERT_EQ(save.exitCode, 0) << save.output;
  for (int ranks : {3, 1}) {
    WorkerRun load = runWorker(ranks, {"fsdp-load", ckpt, ref});
    EXPECT_EQ(load.exitCode, 0) << ranks << " ranks: " << load.output;
    EXPECT_EQ(load.output.find("FAIL"), std::string::npos) << ranks << " ranks: " << load.output;
    EXPECT_NE(load.output.find("ok "), std::string::npos) << ranks << " ranks: " << load.output;
  }
  std::remove(ckpt.c_str());
  std::remove(ref.c_str());
}

TEST(Checkpoint, FullyShardedPerRankFilesResumeIdenticallyAtTheSameWorldSizeOnly) {
  std::string dir = tempPath("fsdp-sharded"), ref = tempPath("fsdp-sharded-reference.pt");
  WorkerRun save = runWorker(2, {"fsdp-save-sharded", dir, ref});
  ASSERT_EQ(save.exitCode, 0) << save.output;
  WorkerRun load = runWorker(2, {"fsdp-load-sharded", dir, ref});
  EXPECT_EQ(load.exitCode, 0) << load.output;
  EXPECT_EQ(load.output.find("FAIL"), std::string::npos) << load.output;
  EXPECT_NE(load.output.find("ok sharded fsdp checkpoint resumed"), std::string::npos) << load.output;
  // Three ranks cannot read two ranks' shards: a clear error, pointing at the other format.
  WorkerRun other = runWorker(3, {"fsdp-load-sharded", dir, ref});
  EXPECT_NE(other.exitCode, 0) << other.output;
  EXPECT_NE(other.output.find("was written by 2 ranks"), std::string::npos) << other.output;
  EXPECT_NE(other.output.find("load a consolidated checkpoint"), std::string::npos) << other.output;
  for (const char *file : {"/index.pt", "/rank0.pt", "/rank1.pt"})
    std::remove((dir + file).c_str());
  ::rmdir(dir.c_str());
  std::remove(ref.c_str());
}

TEST(PeerFailure, ARankThatExitsMakesTheOthersFailClearly) {
  // Rank 1 exits 0 without warning, so the launcher does not end the others:
  // they must notice on their own, with a clear error, within the timeout.
  WorkerRun run = runWorker(2, {"peer-exits"}, /*timeoutSeconds=*/60);
  EXPECT_NE(run.exitCode, 0) << run.output;
  EXPECT_EQ(run.failedRank, 0) << run.output;
  EXPECT_NE(run.output.find("did another rank exit or time out?"), std::string::npos) << run.output;
  EXPECT_LT(run.seconds, 40) << run.output;
}

TEST(PeerFailure, FullyShardedForwardOnOneRankFailsClearlyOnBoth) {
  WorkerRun run = runWorker(2, {"fsdp-one-rank-forward"}, /*timeoutSeconds=*/60);
  EXPECT_NE(run.exitCode, 0) << run.output;
  EXPECT_NE(run.output.find("FSDP"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("failed"), std::string::npos) << run.output;
  EXPECT_LT(run.seconds, 40) << run.output;
}

TEST(PeerFailure, FullyShardedRankThatDiesMidStepMakesTheOtherFailClearly) {
  WorkerRun run = runWorker(2, {"fsdp-rank-dies"}, /*timeoutSeconds=*/60);
  EXPECT_NE(run.exitCode, 0) << run.output;
  EXPECT_EQ(run.failedRank, 0) << run.output;
  EXPECT_NE(run.output.find("rank 0 of 2: FSDP"), std::string::npos) << run.output;
  EXPECT_LT(run.seconds, 40) << run.output;
}

TEST(PeerFailure, TesselRunEndsTheOthersWhenARankCrashes) {
  // The same through the tessel-run executable, with a rank that fails.
  std::string command = std::string(TESSEL_RUN) + " -n 2 --grace 2 -- /bin/sh -c "
                        "'if [ $RANK = 1 ]; then exit 3; fi; exec " TESSEL_DIST_WORKER " ddp' 2>&1";
  CommandRun run = runCommand(command);
  ASSERT_TRUE(run.started);
  const std::string &output = run.output;
  int status = run.status;
  double seconds = run.seconds;
  EXPECT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 3) << output;
  EXPECT_NE(output.find("rank 1 (pid"), std::string::npos) << output;
  EXPECT_NE(output.find("exited with code 3; ending the other 1 rank"), std::string::npos) << output;
  EXPECT_LT(seconds, 30) << output;
}

TEST(PeerFailure, ARankKilledBySegfaultEndsTheOthersWithItsRankAndSignal) {
  // What a crash looks like to the job (issue 37: rank 0 killed by SIGSEGV in ZeRO-1):
  // rank 0 dies by signal 11 (its shell signals itself, so the timing cannot let the
  // training finish first); rank 1, a worker that cannot go on without rank 0, is ended.
  // tessel-run names the rank and the signal and exits 128 + 11.
  std::string command = std::string(TESSEL_RUN) + " -n 2 --grace 2 -- /bin/sh -c "
                        "'if [ $RANK = 0 ]; then sleep 1; kill -SEGV $$; fi; exec " TESSEL_DIST_WORKER
                        " zero1-buckets' 2>&1";
  CommandRun run = runCommand(command);
  ASSERT_TRUE(run.started);
  const std::string &output = run.output;
  int status = run.status;
  double seconds = run.seconds;
  EXPECT_TRUE(WIFEXITED(status)) << output;
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGSEGV) << output;
  EXPECT_NE(output.find("rank 0 (pid"), std::string::npos) << output;
  EXPECT_NE(output.find("was killed by signal 11"), std::string::npos) << output;
  EXPECT_NE(output.find("ending the other 1 rank"), std::string::npos) << output;
  EXPECT_LT(seconds, 30) << output;
}
