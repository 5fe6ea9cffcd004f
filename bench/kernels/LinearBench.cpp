//===- LinearBench.cpp - tessel-bench linear: the model's linears, Tessel vs cuBLAS ===//
//
// The Transformer's five linears (qkv_proj, output_proj, w13, w2, lm_head) at a model
// preset's sizes and batch x context tokens: the forward y = x W^T, dX and dW, each
// through autograd as the model runs them (--matmul tessel: ops::linear, Tessel's matmul;
// torch: at::linear, cuBLAS), under bf16 autocast with x and W already bf16, so that only
// the products are timed (the model's casts cost the same on either side). Both sides in
// one process on the same stream, in alternating rounds (interleavedMediansMs); TFLOP/s =
// 2 M N K / time. The error is Tessel's largest difference from torch relative to torch's
// largest element, after one untimed run of each (Tessel's first one tunes).
//
//===----------------------------------------------------------------------===//
#include "bench/kernels/KernelBench.h"
#include "bench/model/Autocast.h"
#include "bench/model/ModelConfig.h"
#include "bench/ops/FusedOps.h"
#include "bench/tools/Flags.h"
#include "bench/tools/Report.h"
#include "bench/tools/Subcommand.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <iostream>

using namespace tessel;
using namespace tessel::bench;

namespace {

/// One of the model's linears: x [tokens, in] -> [tokens, out].
struct LinearShape {
  std::string name;
  int64_t in, out;
};

std::vector<LinearShape> linearsOf(const model::ModelConfig &c) {
  return {{"qkv_proj", c.dModel, 3 * c.dModel},
          {"output_proj", c.dModel, c.dModel},
          {"w13", c.dModel, 2 * c.dFF},
          {"w2", c.dFF, c.dModel},
          {"lm_head", c.dModel, c.vocabSize}};
}

/// One timed product of a linear: each side returns its result.
struct Pass {
  std::string name;
  std::function<torch::Tensor()> tessel, torch;
};

/// The forward (no autograd graph) and the two gradients alone (autograd::grad on a kept
/// graph for one input: the other gradient's product is skipped on both sides).
std::vector<Pass> passesOf(const torch::Tensor &x, const torch::Tensor &w) {
  auto forward = [](auto linear) {
    return [=] {
      torch::NoGradGuard noGrad;
      model::AutocastGuard autocast(torch::kCUDA, torch::kBFloat16);
      return linear();
    };
  };
  torch::Tensor yt, ye;
  {
    model::AutocastGuard autocast(torch::kCUDA, torch::kBFloat16);
    yt = ops::linear(x, w);
    ye = at::linear(x, w);
  }
  torch::Tensor dy = torch::randn_like(ye);
  auto grad = [dy](const torch::Tensor &y, const torch::Tensor &wrt) {
    return [=] { return torch::autograd::grad({y}, {wrt}, {dy}, /*retain_graph=*/true)[0]; };
  };
  return {{"fwd", forward([=] { return ops::linear(x, w); }),
           forward([=] { return at::linear(x, w); })},
          {"dX", grad(yt, x), grad(ye, x)},
          {"dW", grad(yt, w), grad(ye, w)}};
}

/// Tessel's largest difference from torch over torch's largest magnitude.
double relativeError(const torch::Tensor &got, const torch::Tensor &ref) {
  torch::Tensor r = ref.to(torch::kFloat64);
  double scale = r.abs().max().item<double>();
  double diff = (got.to(torch::kFloat64) - r).abs().max().item<double>();
  return scale > 0 ? diff / scale : diff;
}

struct Options {
  std::vector<std::string> models = {"small", "xl"};
  int64_t batch = 4, context = 512, warmup = 5, samples = 30, perRound = 5;
  std::string json, markdown;
};

/// Times every pass of one linear; one record each.
void timeLinear(const Options &o, Driver &driver, const model::ModelConfig &config,
                const LinearShape &shape, std::vector<Record> &records) {
  auto bf16 = torch::TensorOptions().dtype(torch::kBFloat16).device(torch::kCUDA);
  int64_t tokens = o.batch * o.context;
  torch::Tensor x = torch::randn({o.batch, o.context, shape.in}, bf16).requires_grad_(true);
  // About the model's initialisation scale, so that outputs stay O(1).
  torch::Tensor w = torch::randn({shape.out, shape.in}, bf16) / std::sqrt(double(shape.in));
  w.requires_grad_(true);
  ops::LinearPackages packages = ops::linearPackages(torch::kBFloat16, 0);
  for (Pass &pass : passesOf(x, w)) {
    torch::Tensor mine = pass.tessel(), theirs = pass.torch();
    double error = relativeError(mine, theirs);
    auto [tesselMs, torchMs] =
        interleavedMediansMs(driver, o.warmup, o.samples, std::max<int64_t>(1, o.perRound),
                             [&] { mine = pass.tessel(); }, [&] { theirs = pass.torch(); });
    // (M, N, K) of the product: fwd [tokens, out] over in, dX [tokens, in] over out,
    // dW [out, in] over tokens; 2 M N K flops each.
    double flop = 2.0 * double(tokens) * double(shape.in) * double(shape.out);
    auto tflops = [&](double ms) { return flop / (ms * 1e-3) / 1e12; };
    const std::string &package = pass.name == "fwd"  ? packages.forward
                                 : pass.name == "dX" ? packages.inputGrad
                                                     : packages.weightGrad;
    Record r;
    r.set("model", config.name);
    r.set("linear", shape.name);
    r.set("pass", pass.name);
    r.set("tokens", tokens);
    r.set("in", shape.in);
    r.set("out", shape.out);
    r.set("tessel_package", package);
    r.set("tessel_ms", tesselMs);
    r.set("torch_ms", torchMs);
    r.set("tessel_tflops", tflops(tesselMs));
    r.set("torch_tflops", tflops(torchMs));
    r.set("tessel_vs_torch", torchMs / tesselMs);
    r.set("max_rel_error", error);
    records.push_back(r);
  }
  std::cerr << config.name << " " << shape.name << " done\n";
}

int runLinear(int argc, char **argv) {
  Options o;
  FlagParser flags("tessel-bench linear",
                   "The model's linears, forward, dX and dW: Tessel's matmul (ops::linear) vs "
                   "at::linear (cuBLAS), bf16, TFLOP/s");
  flags.addList("model", "LIST", "presets whose linears to time", o.models);
  flags.add("batch-size", "N", "sequences per batch", o.batch);
  flags.add("context-length", "N", "tokens per sequence", o.context);
  flags.add("warmup", "N", "untimed runs of each side first", o.warmup);
  flags.add("samples", "N", "timed runs of each side (the median of the rounds' medians)",
            o.samples);
  flags.add("round", "N", "runs of each side per alternating round", o.perRound);
  flags.add("json", "FILE", "write the results as JSON", o.json);
  flags.add("markdown", "FILE", "write the table as markdown", o.markdown);
  if (auto exit = flags.parseOrExit(argc, argv))
    return *exit;
  std::vector<model::ModelConfig> configs;
  try {
    for (const std::string &name : o.models)
      configs.push_back(model::ModelConfig::preset(name));
    if (o.batch <= 0 || o.context <= 0 || o.samples <= 0 || o.warmup < 0)
      throw std::invalid_argument("--batch-size, --context-length and --samples must be positive");
  } catch (const std::invalid_argument &e) {
    std::cerr << "error: " << e.what() << "\n\n" << flags.usage();
    return 2;
  }
  Driver *gpu = timingDriver("tessel-bench linear");
  if (!gpu)
    return 1;
  Driver &driver = *gpu;
  std::vector<Record> records;
  for (const model::ModelConfig &config : configs)
    for (const LinearShape &shape : linearsOf(config)) {
      timeLinear(o, driver, config, shape, records);
      c10::cuda::CUDACachingAllocator::emptyCache();
    }
  std::vector<Column> columns = {
      fieldColumn("model", "model", 0, true),       fieldColumn("linear", "linear", 0, true),
      fieldColumn("pass", "pass", 0, true),         fieldColumn("tokens", "tokens", 0),
      fieldColumn("in", "in", 0),                   fieldColumn("out", "out", 0),
      fieldColumn("tessel ms", "tessel_ms", 3),     fieldColumn("torch ms", "torch_ms", 3),
      fieldColumn("tessel TFLOP/s", "tessel_tflops", 1),
      fieldColumn("torch TFLOP/s", "torch_tflops", 1),
      fieldColumn("tessel/torch", "tessel_vs_torch", 3),
      fieldColumn("max rel err", "max_rel_error", 5),
      fieldColumn("tessel package", "tessel_package", 0, true)};
  Record meta;
  meta.set("batch", o.batch);
  meta.set("context", o.context);
  meta.set("samples", o.samples);
  meta.set("launches_per_round", o.perRound);
  meta.set("timing", "CUDA events, alternating rounds of each side, median of the rounds' medians");
  try {
    writeKernelReport(driver.deviceInfo(0), meta, records, columns, o.json, o.markdown);
  } catch (const std::exception &e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

} // namespace

TESSEL_BENCH_SUBCOMMAND("linear",
                        "the model's linears (fwd, dX, dW): Tessel's matmul vs at::linear, TFLOP/s",
                        runLinear);
