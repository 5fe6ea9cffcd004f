//===- bench/tools/ModelBench.cpp - tessel-bench model ---------------------===//
//
// Times the CS336 Transformer LM: for every combination of model, context
// length, mode, precision, attention, kernels and matmul it builds the model, makes a
// random batch, runs the warm-up steps, then times the measured steps phase by
// phase (forward / backward / optimizer, synchronising after each), and
// reports mean ± std in ms. Optional: peak-memory report and allocator
// snapshot (--memory), whole-step CUDA graph (--cuda-graph, with --verify
// comparing it against the uncaptured step).
//
//===----------------------------------------------------------------------===//

#include "bench/distributed/ConsolidatedCheckpoint.h"
#include "bench/model/AdamW.h"
#include "bench/model/Autocast.h"
#include "bench/model/Nvtx.h"
#include "bench/model/TransformerLM.h"
#include "bench/tools/CudaSupport.h"
#include "tools/tessel-plan/Memory.h"
#include "bench/tools/Flags.h"
#include "bench/tools/Report.h"
#include "bench/tools/StepProfile.h"
#include "bench/tools/Subcommand.h"

#include <c10/util/Exception.h>
#include <torch/utils.h>
#include <torch/version.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <cstdio>
#include <iostream>
#include <optional>
#include <sstream>
#include <unistd.h>

namespace {

using tessel::bench::Record;
using tessel::bench::Value;
using tessel::model::ModelConfig;

enum class Mode { Forward, ForwardBackward, TrainStep };

Mode parseMode(const std::string &name) {
  if (name == "forward")
    return Mode::Forward;
  if (name == "forward-backward")
    return Mode::ForwardBackward;
  if (name == "train-step")
    return Mode::TrainStep;
  throw std::invalid_argument("unknown mode '" + name +
                              "' (expected forward, forward-backward or train-step)");
}

struct Options {
  std::vector<std::string> models = {"small"};
  std::vector<int64_t> contexts = {512};
  std::vector<std::string> modes = {"train-step"};
  std::vector<std::string> precisions = {"fp32"};
  std::vector<std::string> attentions = {"sdpa"};
  std::vector<std::string> kernels = {"eager"};
  std::vector<std::string> matmuls = {"torch"};
  int64_t batch = 4, warmup = 3, steps = 10, seed = 0;
  int64_t dModel = 0, dFF = 0, numLayers = 0, numHeads = 0, vocabSize = 0;
  int64_t kvHeads = 0, attentionWindow = -1;
  double lr = 1e-3;
  std::string device = "auto", adamw = "auto", weightCast = "auto", snapshotDir = ".";
  std::string json, csv, markdownFile, lossCurve, profile, initCheckpoint;
  bool memory = false, cudaGraph = false, verify = false, markdown = false, quiet = false;
  bool activationCheckpointing = false;
  bool plan = false;
};

/// One point of the sweep.
struct Config {
  ModelConfig model;
  int64_t context;
  std::string modeName, precision;
  Mode mode;
  bool bf16;
};

struct Stats {
  std::vector<double> samples;
  void add(double ms) { samples.push_back(ms); }
  void store(Record &r, const std::string &key) const {
    if (samples.empty())
      return;
    double mean = 0;
    for (double s : samples)
      mean += s;
    mean /= samples.size();
    double var = 0;
    for (double s : samples)
      var += (s - mean) * (s - mean);
    double std = samples.size() > 1 ? std::sqrt(var / (samples.size() - 1)) : 0.0;
    r.set(key + "_mean", mean);
    r.set(key + "_std", std);
  }
};

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double mib(int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

class Progress {
public:
  Progress(bool enabled, size_t total) : enabled_(enabled), total_(total), tty_(isatty(2)) {}
  void step(size_t index, const std::string &label, const std::string &what) {
    if (enabled_ && tty_)
      std::fprintf(stderr, "\r\033[K[%zu/%zu] %s: %s", index + 1, total_, label.c_str(),
                   what.c_str());
  }
  void done(size_t index, const std::string &label, const std::string &summary) {
    if (!enabled_)
      return;
    std::fprintf(stderr, "%s[%zu/%zu] %s: %s\n", tty_ ? "\r\033[K" : "", index + 1, total_,
                 label.c_str(), summary.c_str());
  }

private:
  bool enabled_;
  size_t total_;
  bool tty_;
};

/// --adamw auto: Tessel's kernel with Tessel's kernels, PyTorch's fused one otherwise.
std::string adamwFor(const std::string &flag, tessel::model::KernelImpl kernels) {
  if (flag != "auto")
    return flag;
  return kernels == tessel::model::KernelImpl::Tessel ? "tessel" : "fused";
}

/// --weight-cast auto: the optimizer's bf16 copies for a bf16 train step on Tessel's kernels;
/// autocast's casts wherever there is no optimizer or no autocast.
std::string weightCastFor(const std::string &flag, const Config &config) {
  if (config.mode != Mode::TrainStep || !config.bf16)
    return "autocast";
  if (flag != "auto")
    return flag;
  return config.model.kernels == tessel::model::KernelImpl::Tessel ? "optimizer" : "autocast";
}

/// Everything one configuration needs: model, data, optimizer, timings.
class Runner {
public:
  Runner(const Options &options, const Config &config, torch::Device device)
      : options_(options), config_(config), device_(device) {}

  /// Builds the model and data from the seed (identical across calls).
  void build() {
    torch::manual_seed(options_.seed);
    ModelConfig mc = config_.model;
    mc.contextLength = config_.context;
    lm_ = tessel::model::TransformerLM(mc, device_);
    lm_->setActivationCheckpointing(options_.activationCheckpointing);
    if (!options_.initCheckpoint.empty())
      tessel::dist::loadParameters(options_.initCheckpoint, lm_->parameters());
    auto tokenOptions = torch::TensorOptions().dtype(torch::kLong).device(device_);
    tokens_ = torch::randint(mc.vocabSize, {options_.batch, config_.context}, tokenOptions);
    targets_ = torch::randint(mc.vocabSize, {options_.batch, config_.context}, tokenOptions);
    if (config_.mode == Mode::TrainStep) {
      tessel::model::AdamWOptions o;
      o.lr = options_.lr;
      o.impl = tessel::model::parseAdamWImpl(adamwFor(options_.adamw, config_.model.kernels));
      optimizer_.emplace(lm_->parameters(), o);
      // The linears compute with bf16 copies that AdamW writes with each update, instead of
      // autocast casting every weight per forward and every gradient back per backward.
      if (weightCastFor(options_.weightCast, config_) == "optimizer")
        optimizer_->setWorkingCopies(lm_->makeWorkingCopies(torch::kBFloat16));
    }
  }

  torch::Tensor forwardLoss() {
    tessel::model::AutocastGuard autocast(device_.type(), torch::kBFloat16, config_.bf16);
    return tessel::model::crossEntropy(lm_->forward(tokens_), targets_, lm_->config().kernels);
  }

  /// The untimed step body (what a CUDA graph captures). Returns the loss.
  torch::Tensor stepBody() {
    if (config_.mode == Mode::Forward) {
      torch::NoGradGuard noGrad;
      return forwardLoss();
    }
    zeroGrad();
    torch::Tensor loss = forwardLoss();
    loss.backward();
    if (optimizer_)
      optimizer_->step();
    return loss;
  }

  /// One eager step timed phase by phase. `memory` records the peaks.
  torch::Tensor timedStep(bool record, Record *memory) {
    using tessel::bench::cudaSynchronize;
    if (memory)
      tessel::bench::cudaResetPeak();
    torch::Tensor loss;
    zeroGrad();
    Clock::time_point start = Clock::now();
    {
      tessel::model::NvtxRange range("forward");
      if (config_.mode == Mode::Forward) {
        torch::NoGradGuard noGrad;
        loss = forwardLoss();
      } else {
        loss = forwardLoss();
      }
      cudaSynchronize();
    }
    double forwardMs = msSince(start);
    if (memory)
      memory->set("mem_forward_peak_mib", mib(tessel::bench::cudaPeakAllocatedBytes()));
    double backwardMs = NAN, optimizerMs = NAN;
    if (config_.mode != Mode::Forward) {
      Clock::time_point t = Clock::now();
      {
        tessel::model::NvtxRange range("backward");
        loss.backward();
        cudaSynchronize();
      }
      backwardMs = msSince(t);
      if (memory)
        memory->set("mem_before_optimizer_peak_mib", mib(tessel::bench::cudaPeakAllocatedBytes()));
    }
    if (optimizer_) {
      Clock::time_point t = Clock::now();
      {
        tessel::model::NvtxRange range("optimizer_step");
        optimizer_->step();
        cudaSynchronize();
      }
      optimizerMs = msSince(t);
      if (memory)
        memory->set("mem_after_optimizer_peak_mib", mib(tessel::bench::cudaPeakAllocatedBytes()));
    }
    if (record) {
      forward_.add(forwardMs);
      if (!std::isnan(backwardMs))
        backward_.add(backwardMs);
      if (!std::isnan(optimizerMs))
        optimizer_ms_.add(optimizerMs);
      step_.add(msSince(start));
    }
    return loss;
  }

  /// Warm-up and measured steps, eager or as a CUDA graph; fills `r`.
  std::vector<double> run(Record &r, Progress &progress, size_t index, const std::string &label) {
    std::vector<double> losses;
    auto note = [&](const char *phase, int64_t i, int64_t n) {
      progress.step(index, label, std::string(phase) + " " + std::to_string(i + 1) + "/" +
                                      std::to_string(n));
    };
    if (options_.cudaGraph) {
      // Warm-up on a side stream (allocates the optimizer state and the
      // library workspaces), then capture one whole step and replay it.
      tessel::bench::cudaRunOnSideStream([&] {
        for (int64_t i = 0; i < options_.warmup; ++i) {
          note("warm-up", i, options_.warmup);
          tessel::model::NvtxRange range("warmup_step");
          losses.push_back(stepBody().item<double>());
        }
      });
      // Free the warm-up's gradients before capturing: the captured backward
      // allocates the static ones from the graph's private pool.
      zeroGrad();
      tessel::bench::cudaSynchronize();
      tessel::bench::cudaEmptyCache();
      tessel::bench::CudaGraph graph;
      torch::Tensor staticLoss;
      graph.capture([&] { staticLoss = stepBody(); });
      for (int64_t i = 0; i < options_.steps; ++i) {
        note("replay", i, options_.steps);
        Clock::time_point start = Clock::now();
        {
          tessel::model::NvtxRange range("graph_replay");
          graph.replay();
          tessel::bench::cudaSynchronize();
        }
        step_.add(msSince(start));
        losses.push_back(staticLoss.item<double>());
      }
    } else {
      for (int64_t i = 0; i < options_.warmup; ++i) {
        note("warm-up", i, options_.warmup);
        tessel::model::NvtxRange range("warmup_step");
        losses.push_back(timedStep(false, nullptr).item<double>());
      }
      for (int64_t i = 0; i < options_.steps; ++i) {
        note("step", i, options_.steps);
        tessel::model::NvtxRange range("measured_step");
        bool last = i + 1 == options_.steps;
        losses.push_back(timedStep(true, options_.memory && last ? &r : nullptr).item<double>());
      }
    }
    forward_.store(r, "forward_ms");
    backward_.store(r, "backward_ms");
    optimizer_ms_.store(r, "optimizer_ms");
    step_.store(r, "step_ms");
    return losses;
  }

  /// The model's parameters, flattened (for comparing two runs).
  torch::Tensor flatParameters() {
    torch::NoGradGuard noGrad;
    std::vector<torch::Tensor> flat;
    for (const torch::Tensor &p : lm_->parameters())
      flat.push_back(p.detach().reshape(-1));
    return torch::cat(flat);
  }

  tessel::model::TransformerLM &model() { return lm_; }

private:
  void zeroGrad() {
    if (optimizer_) {
      optimizer_->zeroGrad(true);
      return;
    }
    for (torch::Tensor &p : lm_->parameters())
      p.mutable_grad() = torch::Tensor();
  }

  const Options &options_;
  Config config_;
  torch::Device device_;
  tessel::model::TransformerLM lm_{nullptr};
  torch::Tensor tokens_, targets_;
  std::optional<tessel::model::AdamW> optimizer_;
  Stats forward_, backward_, optimizer_ms_, step_;
};

std::string fileSafe(std::string text) {
  for (char &c : text)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.')
      c = '_';
  return text;
}

/// tessel-plan's prediction of this configuration's peaks (a steady step: AdamW's state
/// exists, the gradients were freed by the last zeroGrad), beside the measured ones.
void addPlan(Record &r, const Options &options, const Config &config,
             tessel::model::AttentionImpl attention) {
  tessel::plan::StepSetup s;
  const ModelConfig &mc = config.model;
  s.model = mc.planShape();
  s.batch = options.batch;
  s.context = config.context;
  s.bf16 = config.bf16;
  s.attention = tessel::plan::parseAttention(tessel::model::toString(attention));
  s.kernels = tessel::plan::parseKernels(tessel::model::toString(mc.kernels));
  s.activationCheckpointing = options.activationCheckpointing;
  s.workingCopies = config.mode == Mode::TrainStep && weightCastFor(options.weightCast, config) == "optimizer";
  if (config.mode != Mode::TrainStep)
    s.optimizerMoments = 0;
  tessel::plan::MemoryPlan p = tessel::plan::planMemory(s, tessel::plan::Sharding::Single, 1);
  r.set("plan_forward_peak_mib", p.forwardPeak / (1024.0 * 1024.0));
  r.set("plan_peak_mib", p.stepPeak / (1024.0 * 1024.0));
  if (const auto *measured = r.get("mem_before_optimizer_peak_mib"))
    r.set("plan_error_pct", 100.0 * (p.stepPeak / (1024.0 * 1024.0) / std::get<double>(*measured) - 1));
  if (const auto *measured = r.get("mem_forward_peak_mib"))
    r.set("plan_forward_error_pct",
          100.0 * (p.forwardPeak / (1024.0 * 1024.0) / std::get<double>(*measured) - 1));
}

/// Runs one configuration; never throws (failures become the status field).
Record runConfig(const Options &options, const Config &config, torch::Device device,
                 tessel::model::AttentionImpl attention, tessel::model::KernelImpl kernels,
                 tessel::model::MatmulImpl matmul, Progress &progress, size_t index,
                 const std::string &label, bool &failed) {
  Record r;
  r.set("model", config.model.name);
  r.set("params", config.model.parameterCount());
  r.set("d_model", config.model.dModel);
  r.set("d_ff", config.model.dFF);
  r.set("num_layers", config.model.numLayers);
  r.set("num_heads", config.model.numHeads);
  r.set("kv_heads", config.model.kvHeads());
  r.set("attention_window", config.model.attentionWindow);
  r.set("vocab_size", config.model.vocabSize);
  r.set("batch", options.batch);
  r.set("context", config.context);
  r.set("mode", config.modeName);
  r.set("precision", config.precision);
  r.set("attention", tessel::model::toString(attention));
  r.set("kernels", tessel::model::toString(kernels));
  r.set("matmul", tessel::model::toString(matmul));
  r.set("activation_checkpointing", options.activationCheckpointing ? "yes" : "no");
  r.set("impl", options.cudaGraph ? "libtorch-graph" : "libtorch");
  r.set("adamw", config.mode == Mode::TrainStep ? adamwFor(options.adamw, kernels) : "");
  r.set("device", device.str());
  r.set("warmup", options.warmup);
  r.set("steps", options.steps);
  r.set("status", "ok");

  bool useCuda = device.is_cuda();
  bool history = false;
  std::string summary;
  try {
    if (useCuda) {
      tessel::bench::cudaEmptyCache();
      tessel::bench::cudaResetPeak();
    }
    if (options.memory && useCuda) {
      tessel::bench::cudaRecordMemoryHistory(true);
      history = true;
    }
    Config withKernels = config;
    withKernels.model.kernels = kernels;
    withKernels.model.matmul = matmul;
    r.set("weight_cast", weightCastFor(options.weightCast, withKernels));
    Runner runner(options, withKernels, device);
    runner.build();
    if (!options.initCheckpoint.empty()) {
      // The f64 sum of the loaded parameters: tessel-bench ddp/shard's param_checksum of the
      // run that saved them.
      torch::NoGradGuard noGrad;
      double checksum = 0;
      for (const torch::Tensor &p : runner.model()->parameters())
        checksum += p.to(torch::kFloat64).sum().item<double>();
      r.set("init_checkpoint", options.initCheckpoint);
      r.set("init_param_checksum", checksum);
    }
    runner.model()->setAttention(attention);
    runner.model()->setKernels(kernels);
    runner.model()->setMatmul(matmul);
    if (options.memory && useCuda) {
      tessel::bench::cudaSynchronize();
      r.set("mem_init_peak_mib", mib(tessel::bench::cudaPeakAllocatedBytes()));
    }
    std::vector<double> losses = runner.run(r, progress, index, label);
    if (options.plan && config.mode != Mode::Forward)
      addPlan(r, options, withKernels, attention);
    if (!losses.empty()) {
      r.set("loss_first", losses.front());
      r.set("loss_last", losses.back());
    }
    if (!options.lossCurve.empty()) {
      // One line per step (warm-up included): the configuration, the step, its loss.
      std::ofstream curve(options.lossCurve, std::ios::app);
      for (size_t i = 0; i < losses.size(); ++i)
        curve << label << "," << i << "," << losses[i] << "\n";
      if (!curve)
        throw std::runtime_error("cannot write " + options.lossCurve);
    }
    if (const auto *step = r.get("step_ms_mean"); step && std::holds_alternative<double>(*step))
      r.set("tokens_per_s", options.batch * config.context / (std::get<double>(*step) / 1000.0));
    if (history) {
      std::string path = options.snapshotDir + "/memory_" +
                         fileSafe(config.model.name + "_ctx" + std::to_string(config.context) +
                                  "_" + config.precision + "_" + config.modeName) +
                         ".pickle";
      tessel::bench::cudaWriteMemorySnapshot(path);
      r.set("snapshot", path);
    }
    if (options.cudaGraph && options.verify) {
      // The same steps, uncaptured, from the same seed: losses and final
      // parameters must agree with the graph's.
      torch::Tensor graphParams = runner.flatParameters();
      Runner eager(options, withKernels, device);
      eager.build();
      eager.model()->setAttention(attention);
      eager.model()->setKernels(kernels);
      eager.model()->setMatmul(matmul);
      std::vector<double> eagerLosses;
      for (int64_t i = 0; i < options.warmup + options.steps; ++i)
        eagerLosses.push_back(eager.stepBody().item<double>());
      double lossDiff = 0;
      for (size_t i = 0; i < losses.size() && i < eagerLosses.size(); ++i)
        lossDiff = std::max(lossDiff, std::fabs(losses[i] - eagerLosses[i]));
      double paramDiff = (graphParams - eager.flatParameters()).abs().max().item<double>();
      r.set("graph_max_loss_diff", lossDiff);
      r.set("graph_max_param_diff", paramDiff);
      double tolerance = config.bf16 ? 2e-2 : 1e-3;
      bool match = lossDiff <= tolerance * std::fabs(eagerLosses.back()) + 1e-5;
      r.set("graph_matches_eager", match ? "yes" : "NO");
      if (!match)
        failed = true;
    }
    if (!options.profile.empty() && useCuda) {
      // Three more steps (after the timings, the graph check and the memory snapshot),
      // uncaptured and without the phase timer's synchronisations. A profiler that cannot
      // record is reported, not counted against the timings.
      if (auto profile = tessel::bench::profileStepsOrReport([&] { runner.stepBody(); }, 3,
                                                             "tessel-bench model")) {
        tessel::bench::appendProfileMarkdown(*profile, label, options.profile);
        r.set("profile_wall_ms", profile->wallMs / double(profile->steps));
        r.set("profile_gpu_kernel_ms", profile->kernelMs() / double(profile->steps));
      }
    }
    const Value *step = r.get("step_ms_mean");
    summary = step ? tessel::bench::formatValue(*step) + " ms/step" : "done";
  } catch (const c10::OutOfMemoryError &) {
    r.set("status", "OOM");
    summary = "OOM";
  } catch (const std::exception &e) {
    std::string message = e.what();
    // LibTorch appends a C++ backtrace to its messages; keep the first line.
    message = message.substr(0, message.find('\n'));
    bool notYet = message.find("not available yet") != std::string::npos;
    r.set("status", (notYet ? "n/a: " : "error: ") + message);
    summary = (notYet ? "n/a: " : "error: ") + message;
    failed |= !notYet;
  }
  if (history) {
    try {
      tessel::bench::cudaRecordMemoryHistory(false);
    } catch (const std::exception &) {
    }
  }
  if (useCuda)
    tessel::bench::cudaEmptyCache();
  progress.done(index, label, summary);
  return r;
}

std::vector<tessel::bench::Column> tableColumns(const Options &options, bool showMemory) {
  using tessel::bench::fieldColumn;
  using tessel::bench::meanStdColumn;
  std::vector<tessel::bench::Column> columns = {
      fieldColumn("model", "model", 0, true),      fieldColumn("ctx", "context"),
      fieldColumn("mode", "mode", 0, true),        fieldColumn("prec", "precision", 0, true),
      fieldColumn("attention", "attention", 0, true), fieldColumn("kernels", "kernels", 0, true),
      fieldColumn("matmul", "matmul", 0, true),     fieldColumn("impl", "impl", 0, true),
      meanStdColumn("forward ms", "forward_ms"),   meanStdColumn("backward ms", "backward_ms"),
      meanStdColumn("optimizer ms", "optimizer_ms"), meanStdColumn("step ms", "step_ms"),
      fieldColumn("tokens/s", "tokens_per_s", 0)};
  if (showMemory) {
    columns.push_back(fieldColumn("init MiB", "mem_init_peak_mib", 0));
    columns.push_back(fieldColumn("fwd peak MiB", "mem_forward_peak_mib", 0));
    columns.push_back(fieldColumn("bwd peak MiB", "mem_before_optimizer_peak_mib", 0));
    columns.push_back(fieldColumn("opt peak MiB", "mem_after_optimizer_peak_mib", 0));
  }
  if (options.plan) {
    columns.push_back(fieldColumn("plan fwd MiB", "plan_forward_peak_mib", 0));
    columns.push_back(fieldColumn("plan peak MiB", "plan_peak_mib", 0));
    if (showMemory) {
      columns.push_back(fieldColumn("fwd err %", "plan_forward_error_pct", 1));
      columns.push_back(fieldColumn("peak err %", "plan_error_pct", 1));
    }
  }
  if (options.cudaGraph && options.verify)
    columns.push_back(fieldColumn("graph = eager", "graph_matches_eager", 0, true));
  columns.push_back(fieldColumn("status", "status", 0, true));
  return columns;
}

int runModel(int argc, char **argv) {
  Options o;
  std::string presets;
  for (const std::string &name : ModelConfig::presetNames())
    presets += (presets.empty() ? "" : ", ") + name;
  tessel::bench::FlagParser flags(
      "tessel-bench model",
      "Benchmarks the CS336 Transformer LM: builds each model, makes a random batch, runs\n"
      "--warmup steps, then times --steps steps phase by phase (synchronising after each)\n"
      "and reports mean ± std in ms. List flags sweep: every combination is run, an OOM is\n"
      "reported and the sweep goes on. 'forward' runs without autograd; 'train-step' is\n"
      "forward, backward and an AdamW step.\n"
      "Presets: " + presets + ", or 'custom' (small's sizes changed by --d-model etc.).");
  flags.addList("model", "LIST", "presets to run", o.models);
  flags.addList("context-length", "LIST", "sequence lengths", o.contexts);
  flags.add("batch-size", "N", "sequences per batch", o.batch);
  flags.addList("mode", "LIST", "forward | forward-backward | train-step", o.modes);
  flags.addList("precision", "LIST", "fp32 | bf16 (autocast; parameters stay f32)", o.precisions);
  flags.addList("attention", "LIST", "naive | sdpa | tessel", o.attentions);
  flags.addList("kernels", "LIST",
                "eager | tessel (RMSNorm, SwiGLU, RoPE, cross-entropy and, by default, AdamW)",
                o.kernels);
  flags.addList("matmul", "LIST",
                "torch | tessel (the linears' forward, dX and dW on Tessel's matmul)", o.matmuls);
  flags.add("warmup", "N", "untimed steps first", o.warmup);
  flags.add("steps", "N", "timed steps", o.steps);
  flags.add("d-model", "N", "override d_model", o.dModel);
  flags.add("d-ff", "N", "override d_ff", o.dFF);
  flags.add("num-layers", "N", "override the number of layers", o.numLayers);
  flags.add("num-heads", "N", "override the number of heads", o.numHeads);
  flags.add("kv-heads", "N",
            "key/value heads: grouped-query attention with fewer than the heads (a divisor)",
            o.kvHeads);
  flags.add("attention-window", "N",
            "sliding-window attention: each token sees the N tokens before it (-1: all)",
            o.attentionWindow);
  flags.add("vocab-size", "N", "override the vocabulary size", o.vocabSize);
  flags.add("device", "DEV", "auto | cuda | cpu", o.device);
  flags.add("seed", "N", "seed for the weights and the batch", o.seed);
  flags.add("lr", "X", "AdamW learning rate", o.lr);
  flags.add("adamw", "IMPL",
            "auto (tessel with --kernels tessel, else fused) | fused | foreach | tessel", o.adamw);
  flags.add("weight-cast", "HOW",
            "bf16 weights of a train step: auto (optimizer with --kernels tessel) | autocast "
            "(cast on every forward) | optimizer (bf16 copies AdamW writes)",
            o.weightCast);
  flags.addSwitch("memory", "report peak memory and write allocator snapshots", o.memory);
  flags.addSwitch("activation-checkpointing",
                  "keep only each block's inputs for the backward, which runs the block again",
                  o.activationCheckpointing);
  flags.addSwitch("plan", "print tessel-plan's predicted peak memory beside the measured one",
                  o.plan);
  flags.add("snapshot-dir", "DIR", "where --memory writes memory_*.pickle", o.snapshotDir);
  flags.addSwitch("cuda-graph", "capture the whole step in a CUDA graph and replay it",
                  o.cudaGraph);
  flags.addSwitch("verify", "with --cuda-graph: rerun uncaptured and compare", o.verify);
  flags.add("init-checkpoint", "FILE",
            "start from the parameters of a consolidated checkpoint (tessel-bench ddp/shard "
            "--save-checkpoint) instead of the seed's; the model must match it",
            o.initCheckpoint);
  flags.add("json", "FILE", "write the results as JSON", o.json);
  flags.add("csv", "FILE", "write the results as CSV", o.csv);
  flags.add("markdown-file", "FILE", "write the table as markdown", o.markdownFile);
  flags.add("loss-curve", "FILE",
            "append every step's loss as CSV lines (configuration,step,loss); the batch is fixed",
            o.lossCurve);
  flags.add("profile", "FILE",
            "profile 3 more uncaptured steps of each configuration (GPU time per kernel and "
            "per source: Tessel, cuBLAS, LibTorch; GPU idle) and append the tables to FILE",
            o.profile);
  flags.addSwitch("markdown", "print the table as markdown", o.markdown);
  flags.addSwitch("quiet", "no progress lines on stderr", o.quiet);
  if (auto exit = flags.parseOrExit(argc, argv))
    return *exit;

  auto usageError = [&](const std::string &message) {
    std::cerr << "error: " << message << "\n\n" << flags.usage();
    return 2;
  };
  // Validate everything before the first (possibly long) run.
  std::vector<ModelConfig> models;
  std::vector<Config> configs;
  std::vector<tessel::model::AttentionImpl> attentions;
  std::vector<tessel::model::KernelImpl> kernels;
  std::vector<tessel::model::MatmulImpl> matmuls;
  try {
    for (const std::string &name : o.models) {
      ModelConfig mc = name == "custom" ? ModelConfig::preset("small") : ModelConfig::preset(name);
      bool custom = name == "custom";
      auto apply = [&](int64_t value, int64_t &field) {
        if (value != 0) {
          field = value;
          custom = true;
        }
      };
      apply(o.dModel, mc.dModel);
      apply(o.dFF, mc.dFF);
      apply(o.numLayers, mc.numLayers);
      apply(o.numHeads, mc.numHeads);
      apply(o.kvHeads, mc.numKvHeads);
      if (o.attentionWindow != -1) {
        mc.attentionWindow = o.attentionWindow;
        custom = true;
      }
      apply(o.vocabSize, mc.vocabSize);
      if (custom && name != "custom")
        mc.name = name + "-custom";
      else if (custom)
        mc.name = "custom";
      mc.validate();
      models.push_back(mc);
    }
    for (const std::string &a : o.attentions)
      attentions.push_back(tessel::model::parseAttentionImpl(a));
    for (const std::string &k : o.kernels)
      kernels.push_back(tessel::model::parseKernelImpl(k));
    for (const std::string &m : o.matmuls)
      matmuls.push_back(tessel::model::parseMatmulImpl(m));
    if (o.adamw != "auto")
      tessel::model::parseAdamWImpl(o.adamw);
    if (o.weightCast != "auto" && o.weightCast != "autocast" && o.weightCast != "optimizer")
      throw std::invalid_argument("unknown --weight-cast '" + o.weightCast +
                                  "' (expected auto, autocast or optimizer)");
    for (int64_t context : o.contexts)
      if (context <= 0)
        throw std::invalid_argument("context lengths must be positive");
    if (o.batch <= 0 || o.steps <= 0 || o.warmup < 0)
      throw std::invalid_argument("--batch-size and --steps must be positive, --warmup >= 0");
    for (const std::string &p : o.precisions)
      if (p != "fp32" && p != "bf16")
        throw std::invalid_argument("unknown precision '" + p + "' (expected fp32 or bf16)");
    for (const std::string &m : o.modes)
      parseMode(m);
  } catch (const std::invalid_argument &e) {
    return usageError(e.what());
  }
  if (o.device != "auto" && o.device != "cuda" && o.device != "cpu")
    return usageError("unknown device '" + o.device + "' (expected auto, cuda or cpu)");
  bool cuda = o.device == "cuda" || (o.device == "auto" && tessel::bench::cudaUsable());
  if (cuda && !tessel::bench::cudaUsable())
    return usageError("--device cuda: no usable CUDA GPU");
  if ((o.memory || o.cudaGraph) && !cuda)
    return usageError("--memory and --cuda-graph need a CUDA GPU");
  if (!o.profile.empty() && !cuda)
    return usageError("--profile needs a CUDA GPU");
  if (o.verify && !o.cudaGraph)
    return usageError("--verify checks --cuda-graph; give both");
  if (o.cudaGraph && o.warmup < 1)
    return usageError("--cuda-graph needs --warmup >= 1 (the warm-up creates the optimizer state)");
  torch::Device device = cuda ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);

  for (const ModelConfig &mc : models)
    for (int64_t context : o.contexts)
      for (const std::string &modeName : o.modes)
        for (const std::string &precision : o.precisions)
          configs.push_back(Config{mc, context, modeName, precision, parseMode(modeName),
                                   precision == "bf16"});
  size_t total = configs.size() * attentions.size() * kernels.size() * matmuls.size();
  Progress progress(!o.quiet, total);
  std::vector<Record> records;
  bool failed = false;
  size_t index = 0;
  for (const Config &config : configs) {
    for (tessel::model::AttentionImpl attention : attentions) {
      for (tessel::model::KernelImpl kernel : kernels) {
        for (tessel::model::MatmulImpl matmul : matmuls) {
          std::ostringstream label;
          label << config.model.name << " ctx " << config.context << " " << config.modeName
                << " " << config.precision << " " << tessel::model::toString(attention) << "/"
                << tessel::model::toString(kernel) << "/" << tessel::model::toString(matmul)
                << (o.cudaGraph ? " graph" : "");
          records.push_back(runConfig(o, config, device, attention, kernel, matmul, progress,
                                      index++, label.str(), failed));
        }
      }
    }
  }

  std::string deviceName = cuda ? tessel::bench::cudaDeviceName() : "cpu";
  std::cout << "tessel-bench model: batch " << o.batch << ", " << o.warmup << " warm-up + "
            << o.steps << " measured steps, device " << deviceName << "\n\n"
            << tessel::bench::formatTable(records, tableColumns(o, o.memory), o.markdown);
  Record meta;
  meta.set("tool", "tessel-bench model");
  meta.set("version", tessel::bench::versionString());
  meta.set("device", deviceName);
  meta.set("torch", TORCH_VERSION);
  try {
    if (!o.json.empty())
      tessel::bench::writeFile(o.json, [&](std::ostream &out) {
        tessel::bench::writeJson(out, meta, records);
      });
    if (!o.csv.empty())
      tessel::bench::writeFile(o.csv,
                               [&](std::ostream &out) { tessel::bench::writeCsv(out, records); });
    if (!o.markdownFile.empty())
      tessel::bench::writeFile(o.markdownFile, [&](std::ostream &out) {
        out << tessel::bench::formatTable(records, tableColumns(o, o.memory), true);
      });
  } catch (const std::exception &e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return failed ? 1 : 0;
}

} // namespace

TESSEL_BENCH_SUBCOMMAND("model", "time the Transformer LM's forward / backward / train step",
                        runModel);
