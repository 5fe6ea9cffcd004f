//===- bench/tools/TrainingBench.cpp - tessel-bench ddp and shard ---------===//
//
//   tessel-run -n 2 -- tessel-bench ddp --model xl --context-length 128 --batch-size 4
//       --precision fp32,bf16 --variants naive,flat,overlapped,bucketed --bucket-mb 1,10,100,1000,auto
//   tessel-run -n 2 -- tessel-bench shard --model xl --context-length 128 --batch-size 4
//
// Data-parallel training steps of the harness's Transformer LM (AdamW). Each
// step: forward, backward, finishGradientSynchronization(), optimizer step, and
// one synchronisation at the end (the step time is host time between two
// synchronisations; no synchronisation inside the step, as in PyTorch).
//
// "comm wait" is the time the device spends, after the last backward kernel,
// waiting for gradient communication: CUDA events on the compute stream, one
// recorded right after backward() returns (it completes when the backward's
// last kernel has run) and one right after finishGradientSynchronization()
// returns (which makes the compute stream wait for every gradient collective,
// and enqueues what the hooks had not launched and any copy-out of the
// averaged gradients); comm wait is the GPU time between the two, plus, with a
// sharded optimizer, the time its step waits for the gradient reduce-scatters
// still in flight after backward (ZeRO-1 launches them bucket by bucket during
// the backward) and for the parameter all-gather (zero1-prefetch: the waits of
// the next step's forward for each block's parameters, counted there). Forward+
// backward and optimizer times are event intervals on the same stream too. On
// the CPU (Gloo) the same marks are host times. "sync call host ms" is the host
// time spent inside the finishGradientSynchronization() call (its launch cost;
// the host does not block on NCCL). --sync-phases restores the older protocol
// (host clock, the stream synchronised after backward and after the call).
// "rank skew" is how far apart (host clock) the ranks return from backward():
// where the host's launches set the pace, the first rank's last all-reduce waits
// that long for the other ranks, which counts as comm wait though no byte moves.
// A step's time is the slowest rank's. --batch-size is the global batch, split
// evenly over the ranks. NVTX ranges (train_step, forward, backward,
// grad_sync_wait, optimizer) make the overlap visible in nsys.
//
// `shard` compares unsharded DDP (bucketed) with optimizer-state sharding
// (broadcast mode over DDP, and ZeRO-1) and reports peak memory after model
// init, before and after the optimizer step, with a breakdown.
//
//===----------------------------------------------------------------------===//

#include "bench/distributed/CommReplay.h"
#include "bench/distributed/ProcessGroup.h"
#include "bench/distributed/Stats.h"
#include "bench/distributed/StepTimer.h"
#include "bench/distributed/Strategy.h"
#include "bench/model/AdamW.h"
#include "bench/model/Autocast.h"
#include "bench/model/Nvtx.h"
#include "bench/model/TransformerLM.h"
#include "bench/tools/CudaSupport.h"
#include "bench/tools/Flags.h"
#include "bench/tools/Report.h"
#include "bench/tools/StepProfile.h"
#include "bench/tools/Subcommand.h"
#include "tools/tessel-plan/Communication.h"
#include "tools/tessel-plan/Memory.h"

#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <optional>

namespace {

using tessel::bench::Record;
using tessel::model::ModelConfig;
using tessel::model::NvtxRange;
using namespace tessel::dist;

constexpr double kGiB = 1024.0 * 1024 * 1024;

struct CommonOptions {
  std::string model = "xl", attention = "sdpa", kernels = "eager", backend = "auto", adamw = "auto";
  std::string matmul = "torch";
  std::vector<std::string> precisions = {"fp32"};
  int64_t context = 128, batch = 4, warmup = 5, steps = 10, seed = 0;
  int64_t dModel = 0, dFF = 0, numLayers = 0, numHeads = 0, vocabSize = 0;
  int64_t kvHeads = 0, attentionWindow = -1;
  int64_t timeoutSeconds = 600;
  double lr = 1e-4;
  std::string json, markdownFile, profile, saveCheckpoint, planAllReduce;
  bool markdown = false;
  bool syncPhases = false;
  bool ncclHighPriority = false;
  bool activationCheckpointing = false;
  bool plan = false;

  void addTo(tessel::bench::FlagParser &flags) {
    flags.add("model", "NAME", "preset: small | medium | large | xl | 2.7B | 10B", model);
    flags.add("context-length", "N", "sequence length", context);
    flags.add("batch-size", "N", "global batch (split evenly over the ranks)", batch);
    flags.addList("precision", "LIST", "fp32 | bf16 (autocast; parameters stay f32)", precisions);
    flags.add("attention", "IMPL", "naive | sdpa | tessel", attention);
    flags.add("kernels", "IMPL",
              "eager | tessel (RMSNorm, SwiGLU, RoPE, cross-entropy and, by default, AdamW)",
              kernels);
    flags.add("matmul", "IMPL",
              "torch | tessel (the linears' forward, dX and dW on Tessel's matmul)", matmul);
    flags.add("warmup", "N", "untimed steps first", warmup);
    flags.add("steps", "N", "timed steps", steps);
    flags.add("d-model", "N", "override d_model", dModel);
    flags.add("d-ff", "N", "override d_ff", dFF);
    flags.add("num-layers", "N", "override the number of layers", numLayers);
    flags.add("num-heads", "N", "override the number of heads", numHeads);
    flags.add("kv-heads", "N",
              "key/value heads: grouped-query attention with fewer than the heads (a divisor)",
              kvHeads);
    flags.add("attention-window", "N",
              "sliding-window attention: each token sees the N tokens before it (-1: all)",
              attentionWindow);
    flags.add("vocab-size", "N", "override the vocabulary size", vocabSize);
    flags.add("backend", "NAME", "auto | nccl | gloo", backend);
    flags.add("adamw", "IMPL",
              "auto (on CUDA tessel with --kernels tessel, else fused; foreach on CPU) | fused | "
              "foreach | tessel",
              adamw);
    flags.add("lr", "X", "AdamW learning rate", lr);
    flags.add("seed", "N", "seed for the weights (and, plus the rank, the batch)", seed);
    flags.add("timeout", "SECONDS", "collective timeout", timeoutSeconds);
    flags.addSwitch("sync-phases",
                    "time phases on the host, synchronising after backward and after the "
                    "gradient sync call (the older protocol; adds idle gaps to the step)",
                    syncPhases);
    flags.addSwitch("activation-checkpointing",
                    "keep only each block's inputs for the backward, which runs the block again",
                    activationCheckpointing);
    flags.addSwitch("plan", "add tessel-plan's predicted peak per rank beside the measured one",
                    plan);
    flags.add("plan-allreduce", "FILE",
              "with --plan: also predict the step's communication time from this all-reduce "
              "benchmark (`tessel-bench allreduce --json`, same GPUs and world size), beside the "
              "last step's collectives issued again on their own after training (`alone ms`)",
              planAllReduce);
    flags.addSwitch("nccl-high-priority",
                    "run NCCL's collectives on a high-priority CUDA stream, so their kernels "
                    "get SMs ahead of the backward's kernels",
                    ncclHighPriority);
    flags.add("profile", "FILE",
              "profile 3 more steps of each configuration under Kineto and append rank 0's GPU "
              "time per kernel source (Tessel, cuBLAS, LibTorch, NCCL) and wall time, as "
              "markdown (CUDA only)",
              profile);
    flags.add("save-checkpoint", "FILE",
              "after training, write a consolidated checkpoint (parameters and AdamW state, one "
              "file that loads at any world size and into `tessel-bench model "
              "--init-checkpoint`); one configuration only",
              saveCheckpoint);
    flags.add("json", "FILE", "write the results as JSON (rank 0)", json);
    flags.add("markdown-file", "FILE", "write the table as markdown (rank 0)", markdownFile);
    flags.addSwitch("markdown", "print the table as markdown", markdown);
  }

  /// --adamw auto: on CUDA Tessel's kernel with Tessel's kernels, PyTorch's fused one
  /// otherwise; foreach on the CPU.
  std::string resolvedAdamW(bool cuda) const {
    if (adamw != "auto")
      return adamw;
    if (!cuda)
      return "foreach";
    return kernels == "tessel" ? "tessel" : "fused";
  }

  ModelConfig modelConfig() const {
    ModelConfig c = ModelConfig::preset(model);
    if (dModel)
      c.dModel = dModel;
    if (dFF)
      c.dFF = dFF;
    if (numLayers)
      c.numLayers = numLayers;
    if (numHeads)
      c.numHeads = numHeads;
    if (vocabSize)
      c.vocabSize = vocabSize;
    c.numKvHeads = kvHeads;
    c.attentionWindow = attentionWindow;
    if (dModel || dFF || numLayers || numHeads || vocabSize || kvHeads || attentionWindow != -1)
      c.name = "custom";
    c.contextLength = context;
    c.attention = tessel::model::parseAttentionImpl(attention);
    c.kernels = tessel::model::parseKernelImpl(kernels);
    c.matmul = tessel::model::parseMatmulImpl(matmul);
    c.validate();
    return c;
  }
};

/// What one configuration runs: a strategy (Strategy.h) and its options.
struct TrainSetup {
  std::string label;
  bool bf16 = false;
  std::string strategy = "ddp";
  StrategyOptions options;
};

struct Measured {
  std::vector<double> stepMs, waitMs, forwardBackwardMs, optimizerMs, syncCallMs;
  /// Per step: host time when backward() returned (steady clock, comparable across the
  /// ranks of one host); afterwards, the spread between the first and the last rank.
  std::vector<double> backwardEndMs, rankSkewMs;
  double initGiB = 0, peakBeforeStepGiB = 0, peakOptimizerGiB = 0, peakGiB = 0;
  double paramGiB = 0, gradGiB = 0, stateGiB = 0;
  int buckets = 0, bucketsFromHooks = 0, peakGatheredUnits = 0;
  std::string waitTiming;
  double bucketMb = 0;
  std::optional<BucketCalibration> calibration;
  /// The last step's loss on this rank and the sum of every parameter after training (f64):
  /// strategies that compute the same update agree on both (a check across --sharding and
  /// --variants lists, which start from the same weights and data).
  double lastLoss = 0, paramChecksum = 0;
  std::optional<tessel::bench::StepProfile> profile; ///< --profile, this rank's
  int gatherGroups = 0; ///< ZeRO-1: the all-gather groups of a step
  /// --plan-allreduce: the last step's collectives, and their time issued alone (ms).
  std::vector<CollectiveCall> collectives;
  double commAloneMs = -1;
};

double msSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

Measured train(const CommonOptions &o, const std::shared_ptr<ProcessGroup> &pg, const TrainSetup &setup) {
  torch::Device device = pg->device();
  bool cuda = device.is_cuda();
  if (o.batch % pg->size() != 0)
    throw std::invalid_argument("--batch-size " + std::to_string(o.batch) +
                                " is not divisible by the world size " + std::to_string(pg->size()));
  if (!o.profile.empty() && !cuda)
    throw std::invalid_argument("--profile needs CUDA GPUs (Kineto's CUPTI records)");
  ModelConfig config = o.modelConfig();
  if (cuda) {
    tessel::bench::cudaEmptyCache();
    tessel::bench::cudaResetPeak();
  }
  Measured m;
  torch::manual_seed(static_cast<uint64_t>(o.seed));
  const StrategyInfo &info = findStrategy(setup.strategy);
  tessel::model::TransformerLM lm(config, info.buildModelOnMeta ? torch::Device(torch::kMeta) : device);
  lm->setActivationCheckpointing(o.activationCheckpointing);
  torch::manual_seed(static_cast<uint64_t>(o.seed + 1 + pg->rank()));
  int64_t local = o.batch / pg->size();
  auto tokenOptions = torch::TensorOptions().dtype(torch::kInt64).device(device);
  torch::Tensor tokens = torch::randint(config.vocabSize, {local, o.context}, tokenOptions);
  torch::Tensor targets = torch::randint(config.vocabSize, {local, o.context}, tokenOptions);

  StrategyOptions options = setup.options;
  options.bf16 = setup.bf16;
  options.adamw.lr = o.lr;
  options.adamw.impl = tessel::model::parseAdamWImpl(o.resolvedAdamW(cuda));
  // A meta-built model is initialised by the strategy, part by part, from the model's seed.
  if (info.buildModelOnMeta)
    torch::manual_seed(static_cast<uint64_t>(o.seed));
  std::unique_ptr<Strategy> strategy = info.make(lm, pg, options);
  if (cuda) {
    tessel::bench::cudaSynchronize();
    m.initGiB = tessel::bench::cudaAllocatedBytes() / kGiB;
  }

  // Marks on the compute stream: 0 step start, 1 backward done, 2 gradients
  // synchronised, 3 optimizer done (see the file comment); 4 and 5 around the
  // sharded optimizer's wait for the gradient reductions, then a pair around each
  // of its waits for parameter all-gathers (in its step, or, overlapped with the
  // forward, in the next step's forward: counted in the step that waits).
  const int maxGatherWaits = strategy->maxParameterWaitsPerStep();
  StepTimer marks(device, 6 + 2 * maxGatherWaits);
  int gatherWaits = 0;
  strategy->onCommunication([&marks, &gatherWaits, maxGatherWaits](int i) {
      if (i < 2)
        return marks.mark(4 + i);
      if (gatherWaits == maxGatherWaits)
        throw std::logic_error("tessel-bench: more parameter all-gather waits in a step than "
                               "marks for them");
      marks.mark(6 + 2 * gatherWaits + (i - 2));
      gatherWaits += i - 2;
    });
  bool hostPhases = o.syncPhases || !marks.onDevice();
  // The phases of a step; the loop below puts marks between them.
  auto zeroGrad = [&] { strategy->zeroGrad(); };
  auto forwardBackward = [&] {
    torch::Tensor loss;
    {
      NvtxRange range("forward");
      tessel::model::AutocastGuard autocast(device.type(), torch::kBFloat16, setup.bf16);
      loss = tessel::model::crossEntropy(lm->forward(tokens), targets, lm->config().kernels);
    }
    NvtxRange range("backward");
    loss.backward();
    return loss.detach();
  };
  auto synchronizeGradients = [&] {
    NvtxRange range("grad_sync_wait");
    return strategy->synchronizeGradients();
  };
  auto optimizerStep = [&] {
    NvtxRange range("optimizer");
    strategy->step();
  };
  torch::Tensor lastLoss;
  for (int64_t step = 0; step < o.warmup + o.steps; ++step) {
    bool timed = step >= o.warmup, memoryStep = step == o.warmup;
    // The last step's collectives, to time them alone afterwards (--plan-allreduce).
    bool lastStep = step == o.warmup + o.steps - 1;
    pg->recordCollectives(lastStep && !o.planAllReduce.empty() ? &m.collectives : nullptr);
    NvtxRange stepRange("train_step");
    zeroGrad();
    if (cuda && memoryStep)
      tessel::bench::cudaResetPeak();
    pg->synchronizeDevice();
    auto start = std::chrono::steady_clock::now();
    gatherWaits = 0;
    marks.mark(0);
    lastLoss = forwardBackward();
    marks.mark(1);
    double backwardEnd =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch())
            .count();
    if (o.syncPhases)
      pg->synchronizeDevice();
    double forwardBackwardHost = msSince(start);
    auto waitStart = std::chrono::steady_clock::now();
    double syncCall = 0;
    if (synchronizeGradients()) {
      syncCall = msSince(waitStart);
      if (o.syncPhases)
        pg->synchronizeDevice();
    }
    marks.mark(2);
    double waitHost = msSince(waitStart);
    // The caching allocator counts at launch time: no synchronisation needed.
    if (cuda && memoryStep) {
      m.peakBeforeStepGiB = tessel::bench::cudaPeakAllocatedBytes() / kGiB;
      tessel::bench::cudaResetPeak();
    }
    auto optimizerStart = std::chrono::steady_clock::now();
    optimizerStep();
    marks.mark(3);
    pg->synchronizeDevice();
    double optimizerHost = msSince(optimizerStart);
    double total = msSince(start);
    if (cuda && memoryStep)
      m.peakOptimizerGiB = tessel::bench::cudaPeakAllocatedBytes() / kGiB;
    if (timed) {
      m.stepMs.push_back(total);
      double shardWait = 0;
      if (!hostPhases) {
        shardWait = strategy->waitsForGradientReductions() ? marks.elapsedMs(4, 5) : 0.0;
        for (int w = 0; w < gatherWaits; ++w)
          shardWait += marks.elapsedMs(6 + 2 * w, 7 + 2 * w);
      }
      m.waitMs.push_back(hostPhases ? waitHost : marks.elapsedMs(1, 2) + shardWait);
      m.forwardBackwardMs.push_back(hostPhases ? forwardBackwardHost : marks.elapsedMs(0, 1));
      m.optimizerMs.push_back(hostPhases ? optimizerHost : marks.elapsedMs(2, 3));
      m.syncCallMs.push_back(syncCall);
      m.backwardEndMs.push_back(backwardEnd);
    }
  }
  pg->recordCollectives(nullptr);
  m.waitTiming = o.syncPhases ? "host, stream synchronised around the call"
                 : marks.onDevice() ? "cuda events on the compute stream"
                                    : "host clock (cpu)";
  if (cuda)
    m.peakGiB = std::max({m.peakBeforeStepGiB, m.peakOptimizerGiB, m.initGiB});
  if (lastLoss.defined())
    m.lastLoss = lastLoss.item<double>();
  if (!o.profile.empty() && cuda) {
    // Three more steps under Kineto (GPU records only), after the timed ones: the GPU time
    // per kernel source next to the steps' wall time says whether the GPU or the host
    // launching for it sets the step's pace.
    m.profile = tessel::bench::profileStepsOrReport(
        [&] {
          zeroGrad();
          gatherWaits = 0;
          forwardBackward();
          synchronizeGradients();
          optimizerStep();
        },
        3, "tessel-bench");
  }
  strategy->onCommunication(nullptr); // what finish() waits for is not a step's
  strategy->finish();
  {
    torch::NoGradGuard noGrad;
    for (const torch::Tensor &p : lm->parameters())
      m.paramChecksum += p.to(torch::kFloat64).sum().item<double>();
  }
  if (!o.saveCheckpoint.empty())
    strategy->saveCheckpoint(o.saveCheckpoint);

  // Memory breakdown of this rank, and the strategy's buckets.
  StrategyReport report = strategy->report();
  m.paramGiB = report.paramBytes / kGiB;
  m.gradGiB = report.gradBytes / kGiB;
  m.stateGiB = report.stateBytes / kGiB;
  m.buckets = report.buckets;
  m.gatherGroups = report.gatherGroups;
  m.bucketsFromHooks = report.bucketsFromHooks;
  m.peakGatheredUnits = report.peakGatheredUnits;
  m.bucketMb = report.bucketMb;
  m.calibration = report.calibration;

  // The slowest rank's time per step.
  int64_t n = static_cast<int64_t>(m.stepMs.size());
  // Rows 5 and 6: the last and (negated) the first rank to return from backward().
  torch::Tensor times = torch::zeros({7, n}, torch::kFloat64);
  for (int64_t i = 0; i < n; ++i) {
    times[0][i] = m.stepMs[i];
    times[1][i] = m.waitMs[i];
    times[2][i] = m.forwardBackwardMs[i];
    times[3][i] = m.optimizerMs[i];
    times[4][i] = m.syncCallMs[i];
    times[5][i] = m.backwardEndMs[i];
    times[6][i] = -m.backwardEndMs[i];
  }
  torch::Tensor all = times.to(device);
  pg->wait(pg->allReduce(all, c10d::ReduceOp::MAX), "timing all-reduce");
  all = all.cpu();
  for (int64_t i = 0; i < n; ++i) {
    m.stepMs[i] = all[0][i].item<double>();
    m.waitMs[i] = all[1][i].item<double>();
    m.forwardBackwardMs[i] = all[2][i].item<double>();
    m.optimizerMs[i] = all[3][i].item<double>();
    m.syncCallMs[i] = all[4][i].item<double>();
    // How far apart the ranks finish launching their backward: when the host sets the
    // pace, the first rank's gradient collectives wait that long for the last rank's.
    m.rankSkewMs.push_back(all[5][i].item<double>() + all[6][i].item<double>());
  }
  return m;
}

void storeSummary(Record &r, const std::string &key, const std::vector<double> &values) {
  Summary s = summarize(values);
  r.set(key + "_mean", s.mean);
  r.set(key + "_std", s.std);
  r.set(key + "_median", s.median);
}

/// NCCL's kernel time per step of a profile (its collectives, overlapped or not).
double ncclKernelMsPerStep(const tessel::bench::StepProfile &profile) {
  double nccl = 0;
  for (const tessel::bench::KernelTime &k : profile.kernels)
    if (k.source == "NCCL")
      nccl += k.ms;
  return nccl / static_cast<double>(std::max<int64_t>(1, profile.steps));
}

/// tessel-plan's sharding for a strategy: DDP keeps everything, the ZeRO-1 variants (and
/// DDP + broadcast) shard the optimizer state, FSDP everything.
tessel::plan::Sharding planSharding(const std::string &strategy) {
  if (strategy == "ddp")
    return tessel::plan::Sharding::Ddp;
  if (strategy.rfind("fsdp", 0) == 0)
    return tessel::plan::Sharding::Zero3;
  return tessel::plan::Sharding::Zero1;
}

/// The predicted peak of a rank's forward and backward (Memory.h) beside the measured one.
void addPlan(Record &r, const CommonOptions &o, int world, const TrainSetup &setup, const Measured &m) {
  ModelConfig config = o.modelConfig();
  tessel::plan::StepSetup s;
  s.model = config.planShape();
  s.batch = o.batch;
  s.context = o.context;
  s.bf16 = setup.bf16;
  s.attention = tessel::plan::parseAttention(o.attention);
  s.kernels = tessel::plan::parseKernels(o.kernels);
  s.activationCheckpointing = o.activationCheckpointing;
  s.workingCopies = setup.options.workingCopies;
  tessel::plan::MemoryPlan p = tessel::plan::planMemory(s, planSharding(setup.strategy), world);
  r.set("plan_peak_GiB", p.stepPeak / kGiB);
  if (m.peakBeforeStepGiB > 0)
    r.set("plan_error_pct", 100.0 * (p.stepPeak / kGiB / m.peakBeforeStepGiB - 1));
  if (o.planAllReduce.empty() || world < 2)
    return;
  tessel::plan::CommunicationSetup c;
  c.model = s.model;
  c.sharding = planSharding(setup.strategy);
  bool bf16Gradients = setup.label.find("bf16grad") != std::string::npos;
  c.gradientBytes = bf16Gradients ? 2 : 4;
  c.gatherBytes = setup.bf16 ? 2 : 4;
  c.workingCopies = setup.options.workingCopies;
  c.buckets = std::max(1, m.buckets);
  c.gatherGroups = std::max(1, m.gatherGroups);
  tessel::plan::CommunicationPlan comm =
      tessel::plan::planCommunication(c, tessel::plan::CollectiveCosts::fromJson(o.planAllReduce));
  r.set("plan_comm_ms", comm.seconds * 1e3);
  r.set("plan_comm_formula", comm.formula);
  r.set("plan_collectives", static_cast<int64_t>(comm.collectives));
  // Like with like: the plan prices collectives on their own, so it is checked against the
  // step's collectives issued alone (CommReplay.h), not their kernel time inside the step.
  r.set("collectives", static_cast<int64_t>(m.collectives.size()));
  if (m.commAloneMs > 0) {
    r.set("comm_alone_ms", m.commAloneMs);
    r.set("plan_comm_error_pct", 100.0 * (comm.seconds * 1e3 / m.commAloneMs - 1));
  }
}

/// What a row ran: the setup, the model and the group.
Record describe(const CommonOptions &o, const std::shared_ptr<ProcessGroup> &pg,
                const TrainSetup &setup) {
  ModelConfig config = o.modelConfig();
  Record r;
  bool highPriority = o.ncclHighPriority && pg->kind() == BackendKind::Nccl;
  r.set("variant", setup.label + (highPriority ? " +hi-prio" : ""));
  r.set("nccl_high_priority_stream", highPriority ? "yes" : "no");
  r.set("model", config.name);
  r.set("precision", setup.bf16 ? "bf16" : "fp32");
  r.set("context", o.context);
  r.set("global_batch", o.batch);
  r.set("world_size", static_cast<int64_t>(pg->size()));
  r.set("backend", pg->backendName());
  r.set("adamw", o.resolvedAdamW(pg->device().is_cuda()));
  r.set("kernels", o.kernels);
  r.set("matmul", o.matmul);
  r.set("activation_checkpointing", o.activationCheckpointing ? "yes" : "no");
  r.set("weight_cast", setup.options.workingCopies ? "optimizer" : "autocast");
  return r;
}

Record toRecord(const CommonOptions &o, const std::shared_ptr<ProcessGroup> &pg,
                const TrainSetup &setup, const Measured &m) {
  Record r = describe(o, pg, setup);
  r.set("status", "ok");
  storeSummary(r, "step_ms", m.stepMs);
  storeSummary(r, "comm_wait_ms", m.waitMs);
  storeSummary(r, "fwd_bwd_ms", m.forwardBackwardMs);
  storeSummary(r, "optimizer_ms", m.optimizerMs);
  storeSummary(r, "sync_call_host_ms", m.syncCallMs);
  storeSummary(r, "rank_skew_host_ms", m.rankSkewMs);
  Summary step = summarize(m.stepMs), wait = summarize(m.waitMs);
  r.set("comm_wait_pct", step.mean > 0 ? 100.0 * wait.mean / step.mean : 0.0);
  r.set("comm_wait_pct_median", step.median > 0 ? 100.0 * wait.median / step.median : 0.0);
  r.set("comm_wait_timing", m.waitTiming);
  r.set("loss_last", m.lastLoss);
  r.set("param_checksum", m.paramChecksum);
  if (m.profile) {
    // Per step. NCCL's kernels run beside the others; the rest is the compute stream's work.
    double steps = static_cast<double>(std::max<int64_t>(1, m.profile->steps));
    double nccl = ncclKernelMsPerStep(*m.profile);
    r.set("profile_wall_ms", m.profile->wallMs / steps);
    r.set("profile_compute_kernel_ms", m.profile->kernelMs() / steps - nccl);
    r.set("profile_nccl_kernel_ms", nccl);
    if (pg->rank() == 0)
      tessel::bench::appendProfileMarkdown(*m.profile,
                                           setup.label + (setup.bf16 ? " bf16" : " fp32") +
                                               ", rank 0",
                                           o.profile);
  }
  if (m.buckets) {
    r.set("buckets", static_cast<int64_t>(m.buckets));
    r.set("buckets_launched_in_backward", static_cast<int64_t>(m.bucketsFromHooks));
  }
  if (m.peakGatheredUnits > 0)
    r.set("peak_gathered_units", static_cast<int64_t>(m.peakGatheredUnits));
  if (m.bucketMb > 0)
    r.set("bucket_mb", m.bucketMb);
  if (m.calibration) {
    r.set("calibrated_overhead_ms", m.calibration->overheadMs);
    r.set("calibrated_bandwidth_GBs", m.calibration->bandwidthGBs);
  }
  r.set("mem_init_GiB", m.initGiB);
  r.set("peak_before_step_GiB", m.peakBeforeStepGiB);
  r.set("peak_optimizer_step_GiB", m.peakOptimizerGiB);
  r.set("peak_GiB", m.peakGiB);
  r.set("params_GiB", m.paramGiB);
  r.set("grads_GiB", m.gradGiB);
  r.set("optimizer_state_GiB", m.stateGiB);
  if (o.plan)
    addPlan(r, o, pg->size(), setup, m);
  return r;
}

int finishReport(const CommonOptions &o, const std::shared_ptr<ProcessGroup> &pg,
                 const std::string &study, const std::vector<Record> &records,
                 const std::vector<tessel::bench::Column> &columns) {
  pg->shutdown();
  if (pg->rank() != 0)
    return 0;
  std::cout << tessel::bench::formatTable(records, columns, o.markdown);
  Record meta;
  meta.set("study", study);
  meta.set("world_size", static_cast<int64_t>(pg->size()));
  meta.set("backend", pg->backendName());
  meta.set("device", tessel::bench::cudaDeviceName());
  meta.set("warmup", o.warmup);
  meta.set("steps", o.steps);
  if (!o.json.empty())
    tessel::bench::writeFile(o.json, [&](std::ostream &out) { tessel::bench::writeJson(out, meta, records); });
  if (!o.markdownFile.empty())
    tessel::bench::writeFile(o.markdownFile, [&](std::ostream &out) {
      out << tessel::bench::formatTable(records, columns, /*markdown=*/true);
    });
  return 0;
}

std::shared_ptr<ProcessGroup> makeGroup(const CommonOptions &o) {
  ProcessGroupOptions options;
  options.backend = parseBackendKind(o.backend);
  options.timeout = std::chrono::seconds(o.timeoutSeconds);
  options.highPriorityStream = o.ncclHighPriority;
  return ProcessGroup::fromEnvironment(options);
}

/// Trains one setup. Out of memory is a row, status OOM, and the sweep goes on: the ranks
/// run the same shapes, so they run out together (were one not to, the others would fail
/// at c10d's timeout waiting for its collectives, not hang).
Record runSetup(const CommonOptions &o, const std::shared_ptr<ProcessGroup> &pg,
                const TrainSetup &setup) {
  Measured m;
  try {
    m = train(o, pg, setup);
  } catch (const c10::OutOfMemoryError &) {
    pg->recordCollectives(nullptr); // the log was train()'s
    Record r = describe(o, pg, setup);
    r.set("status", "OOM");
    return r;
  }
  if (o.plan && pg->size() > 1) {
    // The model is gone: the replay has the memory. Were its two buffers still not to fit
    // (every rank alike), the row keeps its training figures without the replay's.
    try {
      m.commAloneMs = timeCollectivesAlone(*pg, m.collectives);
    } catch (const c10::OutOfMemoryError &) {
      m.commAloneMs = -1;
    }
  }
  return toRecord(o, pg, setup, m);
}

void progress(const std::shared_ptr<ProcessGroup> &pg, const Record &r) {
  if (pg->rank() != 0)
    return;
  if (tessel::bench::formatValue(*r.get("status")) != "ok") {
    std::fprintf(stderr, "%s %s: %s\n", tessel::bench::formatValue(*r.get("variant")).c_str(),
                 tessel::bench::formatValue(*r.get("precision")).c_str(),
                 tessel::bench::formatValue(*r.get("status")).c_str());
    return;
  }
  std::fprintf(stderr, "%s %s: step %s ms, comm wait (device) %s ms\n",
               tessel::bench::formatValue(*r.get("variant")).c_str(),
               tessel::bench::formatValue(*r.get("precision")).c_str(),
               tessel::bench::formatValue(*r.get("step_ms_mean")).c_str(),
               tessel::bench::formatValue(*r.get("comm_wait_ms_mean")).c_str());
}

/// Trains every setup on one process group (--save-checkpoint needs exactly one: nullopt
/// after saying why), a progress line each; the group, and a record per setup.
std::optional<std::pair<std::shared_ptr<ProcessGroup>, std::vector<Record>>>
runSetups(const CommonOptions &o, const std::vector<TrainSetup> &setups) {
  if (!o.saveCheckpoint.empty() && setups.size() != 1) {
    std::fprintf(stderr, "error: --save-checkpoint writes one configuration's state; %zu are "
                         "selected (give one variant and one precision)\n",
                 setups.size());
    return std::nullopt;
  }
  auto pg = makeGroup(o);
  std::vector<Record> records;
  for (const TrainSetup &s : setups) {
    records.push_back(runSetup(o, pg, s));
    progress(pg, records.back());
  }
  return std::make_pair(pg, std::move(records));
}

/// `columns`, then both tables' last ones: communication measured, replayed alone and planned.
std::vector<tessel::bench::Column> withCommunication(std::vector<tessel::bench::Column> columns) {
  using tessel::bench::fieldColumn;
  for (tessel::bench::Column c : {fieldColumn("NCCL ms", "profile_nccl_kernel_ms", 1),
                                  fieldColumn("alone ms", "comm_alone_ms", 1),
                                  fieldColumn("plan comm ms", "plan_comm_ms", 1),
                                  fieldColumn("comm err %", "plan_comm_error_pct", 1),
                                  fieldColumn("status", "status", 0, true)})
    columns.push_back(std::move(c));
  return columns;
}

int runDdp(int argc, char **argv) {
  CommonOptions o;
  std::vector<std::string> variants = {"naive", "flat", "overlapped", "bucketed"};
  std::vector<std::string> bucketMbs = {"1", "10", "100", "1000", "auto"};
  std::vector<std::string> hooks = {"none"};
  std::vector<std::string> weightCasts = {"autocast"};
  bool noGradView = false;
  double lastBucketMb = 0;
  tessel::bench::FlagParser flags(
      "tessel-bench ddp",
      "time data-parallel training steps with the four DDP variants (one process per rank)");
  o.addTo(flags);
  flags.addList("variants", "LIST", "naive | flat | overlapped | bucketed", variants);
  flags.addList("bucket-mb", "LIST", "bucket caps for `bucketed` in MB, or auto", bucketMbs);
  flags.addList("hook", "LIST", "communication hook: none | bf16", hooks);
  flags.addList("weight-cast", "LIST",
                "bf16: autocast (casts every weight per forward and its gradient back to f32, "
                "which DDP all-reduces; PyTorch DDP's way) | optimizer (the linears compute with "
                "bf16 copies AdamW writes with each update; DDP all-reduces their bf16 gradients, "
                "as with PyTorch's bf16_compress_hook); fp32 runs have no casts and run once",
                weightCasts);
  flags.addSwitch("no-grad-view", "bucketed: copy gradients into the buckets instead of views",
                  noGradView);
  flags.add("last-bucket-mb", "MB",
            "bucketed: the gradients produced last (one bucket's worth) go into buckets of at "
            "most MB (0: off, every bucket the same cap)",
            lastBucketMb);
  if (auto exit = flags.parseOrExit(argc, argv))
    return *exit;
  std::vector<TrainSetup> setups;
  // One variant with one precision, weight cast and hook: a setup per bucket cap.
  auto addSetups = [&](const std::string &name, bool bf16, bool copies, CommHook hook) {
    DdpOptions d;
    d.mode = parseDdpMode(name);
    d.hook = hook;
    d.gradientAsBucketView = !noGradView;
    d.lastBucketMb = lastBucketMb;
    std::string suffix = hook == CommHook::Bf16 ? " +bf16 hook" : "";
    if (copies)
      suffix += " +bf16 copies";
    if (d.mode == DdpMode::Bucketed && lastBucketMb > 0) {
      char text[32];
      std::snprintf(text, sizeof(text), " taper %gMB", lastBucketMb);
      suffix += text;
    }
    std::vector<std::string> caps =
        d.mode == DdpMode::Bucketed ? bucketMbs : std::vector<std::string>{""};
    for (const std::string &cap : caps) {
      TrainSetup s;
      s.bf16 = bf16;
      s.options.workingCopies = copies;
      s.label = name + suffix;
      if (cap == "auto") {
        d.autoBucketSize = true;
        s.label = name + " auto" + suffix;
      } else if (!cap.empty()) {
        d.autoBucketSize = false;
        d.bucketSizeMb = std::stod(cap);
        if (!(d.bucketSizeMb > 0))
          throw std::invalid_argument("bucket sizes must be positive");
        s.label = name + " " + cap + "MB" + suffix;
      }
      s.options.ddp = d;
      setups.push_back(s);
    }
  };
  try {
    o.modelConfig();
    for (const std::string &cast : weightCasts)
      if (cast != "autocast" && cast != "optimizer")
        throw std::invalid_argument("unknown --weight-cast '" + cast +
                                    "' (expected autocast or optimizer)");
    for (const std::string &precision : o.precisions) {
      if (precision != "fp32" && precision != "bf16")
        throw std::invalid_argument("unknown precision '" + precision + "' (expected fp32 or bf16)");
      bool bf16 = precision == "bf16";
      for (const std::string &cast : weightCasts) {
        bool copies = cast == "optimizer";
        if (copies && !bf16)
          continue; // nothing to cast in fp32: the autocast entry runs it
        for (const std::string &hookName : hooks)
          for (const std::string &name : variants)
            addSetups(name, bf16, copies, parseCommHook(hookName));
      }
    }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n\n%s", e.what(), flags.usage().c_str());
    return 2;
  }
  auto run = runSetups(o, setups);
  if (!run)
    return 2;
  auto &[pg, records] = *run;
  using tessel::bench::fieldColumn;
  using tessel::bench::meanStdColumn;
  std::vector<tessel::bench::Column> columns = {
      fieldColumn("variant", "variant", 0, true),
      fieldColumn("prec", "precision", 0),
      meanStdColumn("step ms", "step_ms"), meanStdColumn("comm wait ms", "comm_wait_ms"),
      fieldColumn("wait %", "comm_wait_pct", 1), meanStdColumn("fwd+bwd ms", "fwd_bwd_ms"),
      meanStdColumn("optim ms", "optimizer_ms"),
      meanStdColumn("sync call host ms", "sync_call_host_ms"),
      meanStdColumn("rank skew ms", "rank_skew_host_ms"),
      fieldColumn("buckets", "buckets", 0),
      fieldColumn("from hooks", "buckets_launched_in_backward", 0),
      fieldColumn("bucket MB", "bucket_mb", 2), fieldColumn("peak GiB", "peak_GiB", 2),
      fieldColumn("fwd+bwd peak GiB", "peak_before_step_GiB", 2),
      fieldColumn("plan peak GiB", "plan_peak_GiB", 2)};
  return finishReport(o, pg, "ddp", records, withCommunication(columns));
}

int runShard(int argc, char **argv) {
  CommonOptions o;
  std::vector<std::string> modes = {"none", "broadcast", "zero1"};
  double bucketMb = 25;
  tessel::bench::FlagParser flags(
      "tessel-bench shard",
      "memory and step time with and without optimizer-state sharding (one process per rank)");
  o.addTo(flags);
  std::string known = "none (= ddp)";
  for (const StrategyInfo &info : strategies())
    known += " | " + info.name + " (" + info.summary + (info.bf16Only ? "; bf16 only" : "") + ")";
  flags.addList("sharding", "LIST", known, modes);
  flags.add("bucket-mb", "MB", "bucket cap: DDP's, and ZeRO-1's gradient buckets", bucketMb);
  if (auto exit = flags.parseOrExit(argc, argv))
    return *exit;
  std::vector<TrainSetup> setups;
  try {
    o.modelConfig();
    for (const std::string &precision : o.precisions)
      for (const std::string &mode : modes) {
        TrainSetup s;
        s.bf16 = precision == "bf16";
        s.label = mode;
        s.strategy = mode == "none" ? "ddp" : mode;
        s.options.bucketMb = bucketMb;
        s.options.ddp.bucketSizeMb = bucketMb;
        if (findStrategy(s.strategy).bf16Only && !s.bf16) { // an fp32 run keeps fp32 gradients
          std::fprintf(stderr, "tessel-bench shard: %s runs in bf16 only; skipped for fp32\n",
                       mode.c_str());
          continue;
        }
        setups.push_back(s);
      }
  } catch (const std::exception &e) {
    std::fprintf(stderr, "error: %s\n\n%s", e.what(), flags.usage().c_str());
    return 2;
  }
  auto run = runSetups(o, setups);
  if (!run)
    return 2;
  auto &[pg, records] = *run;
  using tessel::bench::fieldColumn;
  using tessel::bench::meanStdColumn;
  std::vector<tessel::bench::Column> columns = {
      fieldColumn("sharding", "variant", 0, true),
      fieldColumn("prec", "precision", 0),
      meanStdColumn("step ms", "step_ms"), fieldColumn("init GiB", "mem_init_GiB", 2),
      fieldColumn("peak fwd+bwd GiB", "peak_before_step_GiB", 2),
      fieldColumn("peak optim GiB", "peak_optimizer_step_GiB", 2),
      fieldColumn("params GiB", "params_GiB", 2), fieldColumn("grads GiB", "grads_GiB", 2),
      fieldColumn("optim state GiB", "optimizer_state_GiB", 2),
      fieldColumn("gathered", "peak_gathered_units", 0),
      fieldColumn("wait %", "comm_wait_pct", 1),
      fieldColumn("plan peak GiB", "plan_peak_GiB", 2),
      fieldColumn("plan err %", "plan_error_pct", 1)};
  return finishReport(o, pg, "shard", records, withCommunication(columns));
}

} // namespace

TESSEL_BENCH_SUBCOMMAND("ddp", "data-parallel training step time: naive, flat, overlapped, bucketed DDP",
                        runDdp);
TESSEL_BENCH_SUBCOMMAND("shard", "memory and step time: DDP, ZeRO-1 and FSDP (ZeRO-3) sharding",
                        runShard);
