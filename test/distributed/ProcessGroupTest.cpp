//===- test/distributed/ProcessGroupTest.cpp - Launcher variables and option names ---===//

#include "bench/distributed/DataParallel.h"
#include "bench/distributed/ProcessGroup.h"
#include "bench/distributed/ProcessGroupBackends.h"
#include "bench/distributed/ShardedOptimizer.h"

#include <gtest/gtest.h>
#include <torch/nn/modules/linear.h>

#include <cstdlib>

using namespace tessel::dist;

namespace {

/// Sets the launcher variables for one test and restores "unset" afterwards.
class EnvScope {
public:
  EnvScope(const char *rank, const char *world, const char *port = nullptr) {
    set("RANK", rank);
    set("WORLD_SIZE", world);
    set("MASTER_PORT", port);
  }
  ~EnvScope() {
    for (const char *name : {"RANK", "WORLD_SIZE", "MASTER_PORT", "LOCAL_RANK", "MASTER_ADDR"})
      ::unsetenv(name);
  }

private:
  static void set(const char *name, const char *value) {
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
};

} // namespace

TEST(Environment, DefaultsToOneProcess) {
  EnvScope env(nullptr, nullptr);
  Environment e = Environment::fromEnvironment();
  EXPECT_EQ(e.rank, 0);
  EXPECT_EQ(e.worldSize, 1);
  EXPECT_EQ(e.localRank, 0);
  EXPECT_EQ(e.masterAddr, "127.0.0.1");
  EXPECT_EQ(e.masterPort, 0); // any free port for a lone process
}

TEST(Environment, DefaultPortWithSeveralRanks) {
  EnvScope env("1", "2");
  EXPECT_EQ(Environment::fromEnvironment().masterPort, 29500);
}

TEST(Environment, ReadsTheLauncherVariables) {
  EnvScope env("3", "4", "12345");
  ::setenv("LOCAL_RANK", "1", 1);
  ::setenv("MASTER_ADDR", "node7", 1);
  Environment e = Environment::fromEnvironment();
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.worldSize, 4);
  EXPECT_EQ(e.localRank, 1);
  EXPECT_EQ(e.masterAddr, "node7");
  EXPECT_EQ(e.masterPort, 12345);
}

TEST(Environment, RejectsInconsistentValues) {
  {
    EnvScope env("2", "2");
    EXPECT_THROW(Environment::fromEnvironment(), std::invalid_argument);
  }
  {
    EnvScope env("x", "2");
    EXPECT_THROW(Environment::fromEnvironment(), std::invalid_argument);
  }
  {
    EnvScope env("0", "2", "70000");
    EXPECT_THROW(Environment::fromEnvironment(), std::invalid_argument);
  }
}

TEST(OptionNames, RoundTrip) {
  for (const char *name : {"naive", "flat", "overlapped", "bucketed"})
    EXPECT_STREQ(toString(parseDdpMode(name)), name);
  for (const char *name : {"none", "bf16"})
    EXPECT_STREQ(toString(parseCommHook(name)), name);
  for (const char *name : {"broadcast", "zero1"})
    EXPECT_STREQ(toString(parseShardMode(name)), name);
  for (const char *name : {"auto", "nccl", "gloo"})
    EXPECT_STREQ(toString(parseBackendKind(name)), name);
  EXPECT_THROW(parseDdpMode("fast"), std::invalid_argument);
  EXPECT_THROW(parseShardMode("zero3"), std::invalid_argument);
  EXPECT_THROW(parseBackendKind("mpi"), std::invalid_argument);
}

TEST(ProcessGroup, SingleProcessGlooGroupWorks) {
  EnvScope env(nullptr, nullptr);
  ProcessGroupOptions options;
  options.backend = BackendKind::Gloo;
  auto pg = ProcessGroup::fromEnvironment(options);
  torch::Tensor t = torch::full({4}, 3.0);
  pg->wait(pg->allReduceMean(t));
  EXPECT_TRUE(torch::allclose(t, torch::full({4}, 3.0)));
  pg->barrier();
}

// Gloo runs one collective at a time: PyTorch's ProcessGroupGloo::runLoop updates its
// status string (the last completed op's name) outside its lock after every op, so two
// worker threads finishing ops whose names exceed std::string's inline capacity at once
// (ALLGATHER_COALESCED: ZeRO-1's step-group all-gathers) free the same buffer twice.
TEST(ProcessGroup, GlooRunsOneCollectiveAtATime) {
  EnvScope env(nullptr, nullptr);
  ProcessGroupOptions options;
  options.backend = BackendKind::Gloo;
  auto pg = ProcessGroup::fromEnvironment(options);
  EXPECT_EQ(tessel::dist::detail::glooWorkerThreads(pg->backend()), 1);
}

// A second backward before the first one's gradients were synchronised (outside noSync)
// is an error, as in PyTorch's DDP: its hooks would add to buckets already on the wire.
TEST(DataParallel, SecondBackwardBeforeSynchronisingIsAnError) {
  EnvScope env(nullptr, nullptr);
  ProcessGroupOptions options;
  options.backend = BackendKind::Gloo;
  auto pg = ProcessGroup::fromEnvironment(options);
  auto model = std::make_shared<torch::nn::LinearImpl>(4, 3);
  for (DdpMode mode : {DdpMode::Bucketed, DdpMode::Overlapped}) {
    DdpOptions ddpOptions;
    ddpOptions.mode = mode;
    DataParallel ddp(model, pg, ddpOptions);
    torch::Tensor x = torch::randn({2, 4});
    ddp.zeroGrad();
    model->forward(x).sum().backward();
    try {
      model->forward(x).sum().backward();
      ADD_FAILURE() << toString(mode) << ": the second backward did not throw";
    } catch (const std::exception &error) {
      EXPECT_NE(std::string(error.what()).find("got a second gradient before "
                                               "finishGradientSynchronization()"),
                std::string::npos)
          << error.what();
    }
  }
  // Accumulating inside noSync, then one synchronised backward, is the way.
  DataParallel ddp(model, pg, DdpOptions{});
  torch::Tensor x = torch::randn({2, 4});
  ddp.zeroGrad();
  {
    auto guard = ddp.noSync();
    model->forward(x).sum().backward();
  }
  model->forward(x).sum().backward();
  ddp.finishGradientSynchronization();
  torch::Tensor twice = model->weight.grad().clone();
  ddp.zeroGrad();
  model->forward(x).sum().backward();
  ddp.finishGradientSynchronization();
  EXPECT_TRUE(torch::allclose(twice, 2 * model->weight.grad()));
}
