//===- FusedBench.cpp - tessel-bench fused: the training step's fused kernels ===//
//
// RMSNorm (alone and fused with the residual add), SwiGLU, RoPE and cross-entropy (forward,
// and backward through autograd) and AdamW over the xl model's parameters: Tessel's ops
// (bench/ops) next to the eager LibTorch code the model runs otherwise and a device copy,
// at the model's sizes, in one process.
// Every side is timed the same way as Triton's do_bench: the L2 cache cleared (a 256 MB
// buffer zeroed) before each run, CUDA events around the run alone, the median of the
// samples. GB/s counts the bytes a perfect kernel moves (each input read once, each output
// written once). bench/reference/fused_ops.py times torch.compile and Triton on the same
// cases the same way. Each Tessel result is checked against eager before it is timed (the
// largest difference over the outputs, or over every input's gradient for a backward).
//
//===----------------------------------------------------------------------===//
#include "bench/kernels/KernelBench.h"
#include "bench/model/AdamW.h"
#include "bench/model/TransformerLM.h"
#include "bench/ops/FusedOps.h"
#include "bench/tools/Flags.h"
#include "bench/tools/Report.h"
#include "bench/tools/Subcommand.h"

#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <iostream>

using namespace tessel;
using namespace tessel::bench;

namespace {

struct Case {
  std::string op, shape;
  double bytes;                     // a perfect kernel's traffic
  std::function<void()> eager, tessel;
  std::function<double()> maxError; // Tessel against eager, after both ran once
};

using Tensors = std::vector<torch::Tensor>;
using OpFn = std::function<Tensors(const Tensors &)>;

/// The largest difference over the outputs, Tessel's against eager's.
double maxDiff(const Tensors &got, const Tensors &ref) {
  double diff = 0;
  for (size_t i = 0; i < got.size() && i < ref.size(); ++i)
    diff = std::max(diff, (got[i].to(torch::kFloat32) - ref[i].to(torch::kFloat32))
                              .abs()
                              .max()
                              .item<double>());
  return diff;
}

torch::Tensor eagerRmsNorm(const torch::Tensor &x, const torch::Tensor &w) {
  torch::Tensor xf = x.to(torch::kFloat32);
  return (xf * torch::rsqrt(xf.pow(2).mean(-1, true) + 1e-5) * w).to(x.scalar_type());
}

/// Forward and backward cases of an op (outputs) = f(inputs) with autograd: the backward
/// runs torch::autograd::grad on a kept graph, a random gradient for every output, for
/// eager and Tessel alike.
void addForwardBackward(std::vector<Case> &cases, const std::string &op, const std::string &shape,
                        double fwdBytes, double bwdBytes, Tensors inputs, OpFn eager,
                        OpFn tessel) {
  auto state = std::make_shared<std::vector<Tensors>>(2);
  cases.push_back({op + " fwd", shape, fwdBytes,
                   [=] { torch::NoGradGuard g; (*state)[0] = eager(inputs); },
                   [=] { torch::NoGradGuard g; (*state)[1] = tessel(inputs); },
                   [=] { return maxDiff((*state)[1], (*state)[0]); }});
  Tensors leaves, wrt;
  for (const torch::Tensor &t : inputs)
    leaves.push_back(t.detach().requires_grad_(t.is_floating_point()));
  for (const torch::Tensor &t : leaves)
    if (t.requires_grad())
      wrt.push_back(t);
  Tensors ye = eager(leaves), yt = tessel(leaves), dy;
  for (const torch::Tensor &y : ye)
    dy.push_back(torch::randn_like(y));
  auto grads = std::make_shared<std::vector<Tensors>>(2);
  cases.push_back({op + " bwd", shape, bwdBytes,
                   [=] { (*grads)[0] = torch::autograd::grad(ye, wrt, dy, true); },
                   [=] { (*grads)[1] = torch::autograd::grad(yt, wrt, dy, true); },
                   [=] { return maxDiff((*grads)[1], (*grads)[0]); }});
}

int runFused(int argc, char **argv) {
  std::string json, markdown, model = "xl";
  int64_t warmup = 5, samples = 50, tokens = 16384;
  std::vector<std::string> only;
  FlagParser flags("tessel-bench fused",
                   "The training step's fused kernels: Tessel vs eager LibTorch vs a copy (GB/s)");
  flags.add("tokens", "N", "rows (tokens) of the activations", tokens);
  flags.add("model", "NAME", "the preset whose parameters AdamW updates", model);
  flags.addList("only", "LIST",
                "ops to run (rmsnorm, add_rmsnorm, swiglu, rope, cross_entropy, adamw)", only);
  flags.add("warmup", "N", "untimed runs first", warmup);
  flags.add("samples", "N", "timed runs (the median is reported)", samples);
  flags.add("json", "FILE", "write the results as JSON", json);
  flags.add("markdown", "FILE", "write the table as markdown", markdown);
  if (auto exit = flags.parseOrExit(argc, argv))
    return *exit;
  Driver *gpu = timingDriver("tessel-bench fused");
  if (!gpu)
    return 1;
  Driver &driver = *gpu;
  ops::installTesselOps();
  auto wanted = [&](const std::string &op) {
    return only.empty() || std::find(only.begin(), only.end(), op) != only.end();
  };
  auto bf16 = torch::TensorOptions().dtype(torch::kBFloat16).device(torch::kCUDA);
  auto f32 = bf16.dtype(torch::kFloat32);
  std::vector<Case> cases;
  std::string rows = std::to_string(tokens);
  torch::Tensor flush = torch::empty({int64_t(256) << 20}, f32.dtype(torch::kByte));
  auto clear = [&] { flush.zero_(); };
  torch::Tensor copyIn = torch::empty({int64_t(1) << 30}, f32.dtype(torch::kByte));
  torch::Tensor copyOut = torch::empty_like(copyIn);
  double copyMs = medianMsColdL2(driver, warmup, samples, [&] { copyOut.copy_(copyIn); }, clear);
  double copyGbps = 2.0 * double(copyIn.numel()) / (copyMs * 1e-3) / 1e9;
  copyIn = copyOut = torch::Tensor();
  std::vector<Record> records;
  // Runs the cases made so far and frees their tensors before the next group is made.
  auto runCases = [&] {
    for (Case &c : cases) {
      c.eager(), c.tessel();
      double error = c.maxError();
      double eagerMs = medianMsColdL2(driver, warmup, samples, c.eager, clear);
      double tesselMs = medianMsColdL2(driver, warmup, samples, c.tessel, clear);
      auto gbps = [&](double ms) { return c.bytes / (ms * 1e-3) / 1e9; };
      Record r;
      r.set("op", c.op);
      r.set("shape", c.shape);
      r.set("bytes", c.bytes);
      r.set("eager_ms", eagerMs);
      r.set("tessel_ms", tesselMs);
      r.set("eager_gbps", gbps(eagerMs));
      r.set("tessel_gbps", gbps(tesselMs));
      r.set("tessel_vs_copy", gbps(tesselMs) / copyGbps);
      r.set("speedup_vs_eager", eagerMs / tesselMs);
      r.set("max_abs_diff_vs_eager", error);
      records.push_back(r);
      std::cerr << c.op << " " << c.shape << " done\n";
    }
    cases.clear();
    c10::cuda::CUDACachingAllocator::emptyCache();
  };
  if (wanted("rmsnorm"))
    for (auto dtype : {torch::kBFloat16, torch::kFloat32}) {
      int64_t n = 4096;
      double e = torch::elementSize(dtype) * double(tokens * n);
      addForwardBackward(cases, std::string("rmsnorm ") + (dtype == torch::kFloat32 ? "f32" : "bf16"),
                         rows + "x" + std::to_string(n), 2 * e, 3 * e,
                         {torch::randn({tokens, n}, bf16.dtype(dtype)), torch::randn({n}, f32)},
                         [](auto &in) { return Tensors{eagerRmsNorm(in[0], in[1])}; },
                         [](auto &in) { return Tensors{ops::rmsNorm(in[0], in[1], 1e-5)}; });
      runCases();
    }
  if (wanted("add_rmsnorm")) {
    // Autocast's residual stream: x f32, the sublayer's output delta bf16; h = x + delta in
    // f32 and y = rmsnorm(h) in bf16, the next linear's input (eager: the cast autocast
    // does). Forward bytes: x, delta read, h, y written; backward: dy (bf16), dh, h read, dx
    // (f32) and ddelta (bf16) written.
    int64_t n = 4096;
    double e = double(tokens * n);
    addForwardBackward(cases, "add_rmsnorm f32+bf16", rows + "x" + std::to_string(n), 12 * e,
                       16 * e,
                       {torch::randn({tokens, n}, f32), torch::randn({tokens, n}, bf16),
                        torch::randn({n}, f32)},
                       [](auto &in) {
                         torch::Tensor h = in[0] + in[1];
                         return Tensors{h, eagerRmsNorm(h, in[2]).to(torch::kBFloat16)};
                       },
                       [](auto &in) {
                         auto [h, y] = ops::addRmsNorm(in[0], in[1], in[2], 1e-5);
                         return Tensors{h, y};
                       });
    runCases();
  }
  if (wanted("swiglu")) {
    int64_t dff = 8192;
    double e = 2.0 * double(tokens * dff);
    addForwardBackward(cases, "swiglu", rows + "x" + std::to_string(dff), 3 * e, 5 * e,
                       {torch::randn({tokens, 2 * dff}, bf16)},
                       [dff](auto &in) {
                         return Tensors{torch::silu(in[0].narrow(-1, 0, dff)) *
                                        in[0].narrow(-1, dff, dff)};
                       },
                       [](auto &in) { return Tensors{ops::swiglu(in[0])}; });
    runCases();
  }
  if (wanted("rope")) {
    // xl: 25 heads of 64; tokens as batches of 512. Eager: the model's RoPE on q and k views
    // of the projection, v left a view (as the eager model runs it); Tessel writes q, k and
    // v contiguous. Both backwards produce the whole dqkv (v's gradient included).
    int64_t heads = 25, dHead = 64, seq = 512, batch = tokens / seq, d = heads * dHead;
    model::RotaryEmbedding rope(10000.0, dHead, seq, f32);
    std::shared_ptr<model::RotaryEmbeddingImpl> ropeImpl = rope.ptr();
    std::string shape = std::to_string(batch) + "x" + std::to_string(seq) + "x" + std::to_string(3 * d);
    double e = 2.0 * double(batch * seq * 3 * d);
    addForwardBackward(
        cases, "rope", shape, 2 * e, 2 * e, {torch::randn({batch, seq, 3 * d}, bf16)},
        [=](auto &in) {
          torch::Tensor qkv = in[0];
          torch::Tensor qk = ropeImpl->forward(
              qkv.narrow(-1, 0, 2 * d).view({batch, seq, 2, heads, dHead}).permute({2, 0, 3, 1, 4}));
          torch::Tensor v = qkv.narrow(-1, 2 * d, d).view({batch, seq, heads, dHead}).transpose(1, 2);
          return Tensors{qk.select(0, 0), qk.select(0, 1), v};
        },
        [=](auto &in) {
          auto [q, k, v] = ops::rope(in[0], ropeImpl->cosTable, ropeImpl->sinTable, heads);
          return Tensors{q, k, v};
        });
    runCases();
  }
  if (wanted("cross_entropy"))
    for (int64_t vocab : {int64_t(10000), int64_t(50257)}) {
      double e = 2.0 * double(tokens * vocab);
      torch::Tensor targets = torch::randint(vocab, {tokens}, f32.dtype(torch::kLong));
      addForwardBackward(cases, "cross_entropy", rows + "x" + std::to_string(vocab), e, 2 * e,
                         {torch::randn({tokens, vocab}, bf16) * 3, targets},
                         [](auto &in) {
                           return Tensors{at::cross_entropy_loss(in[0].to(torch::kFloat32), in[1])};
                         },
                         [](auto &in) { return Tensors{ops::crossEntropy(in[0], in[1])}; });
      runCases();
    }
  if (wanted("adamw")) {
    // One set of parameters (f32, with gradients) and two optimizers over it: PyTorch's
    // fused AdamW and Tessel's, each with its own state.
    model::TransformerLM meta(model::ModelConfig::preset(model), torch::kMeta);
    std::vector<torch::Tensor> params;
    for (const torch::Tensor &p : meta->parameters()) {
      torch::Tensor t = torch::randn(p.sizes(), f32).requires_grad_(true);
      t.mutable_grad() = torch::randn(p.sizes(), f32);
      params.push_back(t);
    }
    auto make = [&](model::AdamWImpl impl) {
      model::AdamWOptions o;
      o.impl = impl;
      auto adamw = std::make_shared<model::AdamW>(params, o);
      adamw->step(); // creates the state
      return adamw;
    };
    auto fused = make(model::AdamWImpl::Fused), tessel = make(model::AdamWImpl::Tessel);
    double n = double(meta->numParameters());
    cases.push_back({"adamw (fused vs tessel)", model + " " + std::to_string(int64_t(n)) + " params",
                     28 * n, [=] { fused->step(); }, [=] { tessel->step(); },
                     [] { return 0.0; }}); // checked against torch.optim.AdamW by the GPU tests
    params.clear();
    runCases();
  }
  std::vector<Column> columns = {
      fieldColumn("op", "op", 0, true), fieldColumn("shape", "shape", 0, true),
      fieldColumn("eager ms", "eager_ms", 3), fieldColumn("tessel ms", "tessel_ms", 3),
      fieldColumn("eager GB/s", "eager_gbps", 0), fieldColumn("tessel GB/s", "tessel_gbps", 0),
      fieldColumn("tessel/copy", "tessel_vs_copy", 2),
      fieldColumn("vs eager", "speedup_vs_eager", 2),
      fieldColumn("max |diff|", "max_abs_diff_vs_eager", 5)};
  Record meta;
  meta.set("copy_gbps", copyGbps);
  meta.set("samples", samples);
  meta.set("timing", "CUDA events per run, L2 cleared before each (256 MB zeroed), median");
  std::cout << "device copy (1 GiB): " << copyGbps << " GB/s\n";
  writeKernelReport(driver.deviceInfo(0), meta, records, columns, json, markdown);
  return 0;
}

} // namespace

TESSEL_BENCH_SUBCOMMAND("fused", "RMSNorm, SwiGLU, RoPE, cross-entropy, AdamW: Tessel vs eager (GB/s)",
                        runFused);
