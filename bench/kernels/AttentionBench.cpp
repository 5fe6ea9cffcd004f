//===- AttentionBench.cpp - tessel-bench attention: naive vs Tessel vs SDPA ===//
//
// softmax(q k^T / sqrt(d) [+ causal mask]) v with autograd, q, k, v shaped (batch, heads,
// seq, d), in three studies:
//   naive      batch 8, one head, causal, d x seq grid: naive attention (q k^T, masked_fill,
//              softmax, @ v in the given dtype) and Tessel's FlashAttention-2; forward and
//              backward time and the memory in use before the backward.
//   flash      batch 1, one head, causal, seq 128..65536, d 16..128, bf16 and f32: forward,
//              backward and forward+backward latency of naive, Tessel and SDPA.
//   realistic  (4, 16, 4096, 64) and (2, 16, 8192, 128), bf16, causal and not, then
//              (16, 12, 1024, 64) and (1, 16, 16384, 128) causal: TFLOP/s of Tessel, SDPA
//              (its own choice), each SDPA backend forced, and naive (the first four).
// Each measurement is the median of CUDA-event-timed runs after warm-up (KernelBench.h),
// one implementation after the other (each alone in memory, so that one's OOM is its own).
// The forward runs with autograd (the inputs require grad), as in training. The backward
// is out.backward(grad) on a forward built once (retain_graph); the inputs' .grad are reset
// (undefined) before each run, so the gradients are stolen, not accumulated (no extra add),
// alike for every implementation. FLOPs: forward 4 B H Lq Lk d, halved when causal; the
// backward 2.5 times the forward (FlashAttention's convention). Every row carries the max
// abs error of its output and gradients against a reference (naive in the naive study,
// SDPA's choice otherwise), so that a fast but wrong result shows. An OOM is reported and the
// sweep goes on; so does an error, but Tessel or naive failing makes the exit status 1.
//
//===----------------------------------------------------------------------===//
#include "bench/kernels/KernelBench.h"
#include "bench/kernels/SourceDir.h"
#include "bench/model/TransformerLM.h"
#include "bench/ops/BlockSparse.h"
#include "bench/ops/FlashAttention.h"
#include "bench/tools/CudaSupport.h"
#include "bench/tools/Flags.h"
#include "bench/tools/Report.h"
#include "bench/tools/Subcommand.h"
#include "package/ConfigExpr.h"
#include "package/Error.h"
#include "runtime/Runtime.h"

#include <ATen/Context.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sys/wait.h>
#include <tuple>

using namespace tessel;
using namespace tessel::bench;

namespace {

struct Options {
  std::vector<std::string> studies = {"all"}, flashDtypes = {"bf16", "f32"};
  std::string naiveDtype = "f32", packages, suffix = "auto", forwardPrune, queryGradPrune,
      keyValueGradPrune, json, csv, markdown, plot;
  std::vector<int64_t> naiveSeqs = {256, 1024, 4096, 8192, 16384}, headDims = {16, 32, 64, 128};
  int64_t minSeq = 128, maxSeq = 65536, passes = 100, warmup = 5, sweepSamples = 10, samples = 20;
  int64_t shares = 0; ///< FlashAttentionOptions::shares (0: chosen from the grid)
  bool exactF32 = false;
  /// The realistic study's shapes ("BxHxLxD", ":full" for non-causal) and implementations;
  /// empty: the study's own.
  std::vector<std::string> shapes, impls;
};

struct Shape {
  int64_t batch, heads, seq, d;
  std::string dtype;
  bool causal;
  int64_t kvHeads = 0; ///< grouped-query attention's key/value heads; 0: heads
  int64_t window = -1; ///< sliding window (keys left of the diagonal a query sees); -1: none
  /// A score/mask variant: "", "softcap" (Gemma 2's cap of 50), "alibi" (geometric slopes)
  /// "document" (`documents` equal documents a sequence, each causal) or "varlen" (the same
  /// documents, every sequence's, packed into one and run as FlashAttention's varlen call)
  /// or "sparse" (a block mask: sparseBlock).
  std::string variant{};
  int64_t documents = 0;
  /// Block-sparse: 128 x 128 block (i, j) kept when |i - j| < N or j % N == N - 1 (Sparse
  /// Transformer's fixed pattern: a band and every N-th block column); 0: none.
  int64_t sparseBlocks = 0;
  bool sparseKept(int64_t i, int64_t j) const {
    return std::abs(i - j) < sparseBlocks || j % sparseBlocks == sparseBlocks - 1;
  }
  /// q, k, v and dO in memory as (batch, seq, heads, d) ("tokens", as a fused projection or a
  /// varlen caller gives them) or (batch, heads, seq, d) ("heads"); "": varlen's tokens, else
  /// heads.
  std::string layout{};
  int64_t keyValueHeads() const { return kvHeads ? kvHeads : heads; }
  bool tokensMajor() const { return layout.empty() ? variant == "varlen" : layout == "tokens"; }
};

enum class Kind { Naive, Tessel, Sdpa };
struct Impl {
  std::string name;
  Kind kind;
  std::optional<at::SDPBackend> only; ///< SDPA with this backend alone enabled
};
const Impl kNaive{"naive", Kind::Naive, {}}, kTessel{"tessel", Kind::Tessel, {}},
    kSdpa{"sdpa", Kind::Sdpa, {}};

/// How one implementation is timed: runs per median, and whether fwd+bwd is timed too.
struct Plan {
  int64_t warmup, samples;
  bool fwdBwd;
};

torch::ScalarType dtypeOf(const std::string &name) {
  if (name == "f32")
    return torch::kFloat32;
  if (name == "bf16")
    return torch::kBFloat16;
  if (name == "f16")
    return torch::kFloat16;
  throw std::invalid_argument("unknown dtype '" + name + "' (f32, bf16, f16)");
}

/// Enables only one of SDPA's CUDA backends while alive (nothing changes without one).
class SdpaOnly {
public:
  explicit SdpaOnly(std::optional<at::SDPBackend> backend)
      : saved_{ctx().userEnabledFlashSDP(), ctx().userEnabledMemEfficientSDP(),
               ctx().userEnabledCuDNNSDP(), ctx().userEnabledMathSDP()},
        active_(backend.has_value()) {
    if (active_)
      set({*backend == at::SDPBackend::flash_attention,
           *backend == at::SDPBackend::efficient_attention,
           *backend == at::SDPBackend::cudnn_attention, *backend == at::SDPBackend::math});
  }
  ~SdpaOnly() {
    if (active_)
      set(saved_);
  }
  SdpaOnly(const SdpaOnly &) = delete;
  SdpaOnly &operator=(const SdpaOnly &) = delete;

private:
  using Flags = std::array<bool, 4>; // flash, efficient, cudnn, math
  static at::Context &ctx() { return at::globalContext(); }
  static void set(const Flags &f) {
    ctx().setSDPUseFlash(f[0]);
    ctx().setSDPUseMemEfficient(f[1]);
    ctx().setSDPUseCuDNN(f[2]);
    ctx().setSDPUseMath(f[3]);
  }
  Flags saved_;
  bool active_;
};

/// One shape's inputs, and its variant as each implementation takes it: Tessel's options and,
/// for SDPA, a dense mask (boolean) or bias (with -inf where masked), made once, outside the
/// timing.
struct Inputs {
  torch::Tensor q, k, v, grad;
  ops::AttentionOptions tessel;
  ops::PackedSequences packed; ///< varlen: the documents over the packed tokens (made once)
  torch::Tensor sdpaMask; ///< undefined: SDPA's own causal flag
  std::string sdpaMissing; ///< why SDPA cannot run the variant ("": it can)
  void clearGrads() const {
    for (const torch::Tensor *t : {&q, &k, &v})
      t->mutable_grad() = torch::Tensor();
  }
};

/// ALiBi's slopes for `heads` heads: 2^(-8 (h + 1) / heads), f32 on the GPU.
torch::Tensor alibiSlopes(int64_t heads) {
  auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(torch::kCUDA);
  return torch::pow(2.0, -8.0 * (torch::arange(heads, f32) + 1) / double(heads));
}

Inputs makeInputs(const Shape &s) {
  auto options = torch::TensorOptions().dtype(dtypeOf(s.dtype)).device(torch::kCUDA);
  // Varlen packs (batch, seq) into one token axis: with tokens-major tensors the packed
  // (tokens, heads, d) is a view (with heads-major ones and batch > 1, a copy in the timing).
  auto make = [&](int64_t heads) {
    if (s.tokensMajor())
      return torch::randn({s.batch, s.seq, heads, s.d}, options).transpose(1, 2);
    return torch::randn({s.batch, heads, s.seq, s.d}, options);
  };
  Inputs in{make(s.heads).requires_grad_(), make(s.keyValueHeads()).requires_grad_(),
            make(s.keyValueHeads()).requires_grad_(), make(s.heads), {}, {}, {}, {}};
  in.tessel.causal = s.causal, in.tessel.window = s.window;
  torch::Tensor keep; // the dense mask of the window or the documents
  if (s.window >= 0)
    keep = model::attentionMask(s.seq, s.seq, s.causal, s.window, options);
  if (s.variant == "softcap") {
    in.tessel.softcap = 50;
    in.sdpaMissing = "SDPA has no score function (soft-capping)";
  } else if (s.variant == "alibi") {
    in.tessel.alibiSlopes = alibiSlopes(s.heads);
    auto longs = options.dtype(torch::kLong);
    torch::Tensor distance = (torch::arange(s.seq, longs).unsqueeze(0) -
                              torch::arange(s.seq, longs).unsqueeze(1)).to(torch::kFloat32);
    torch::Tensor bias = in.tessel.alibiSlopes.view({s.heads, 1, 1}) * distance;
    torch::Tensor visible = model::attentionMask(s.seq, s.seq, s.causal, s.window, options);
    in.sdpaMask = bias.masked_fill(visible.logical_not(), -INFINITY).to(options.dtype());
  } else if (s.variant == "document" || s.variant == "varlen") {
    auto longs = options.dtype(torch::kLong);
    torch::Tensor ids =
        torch::floor_divide(torch::arange(s.seq, longs) * s.documents, s.seq).expand({s.batch, s.seq});
    if (s.variant == "document") {
      in.tessel.documentIds = ids.contiguous();
    } else { // varlen: document j of a sequence starts at ceil(j seq / documents)
      std::vector<int64_t> cu;
      for (int64_t b = 0; b < s.batch; ++b)
        for (int64_t j = 0; j < s.documents; ++j)
          cu.push_back(b * s.seq + (j * s.seq + s.documents - 1) / s.documents);
      cu.push_back(s.batch * s.seq);
      torch::Tensor lengths = torch::tensor(cu, longs.dtype(torch::kInt32));
      in.packed = ops::packSequences(lengths, lengths, s.causal, s.window);
    }
    torch::Tensor same = ids[0].unsqueeze(1) == ids[0].unsqueeze(0);
    keep = (keep.defined() ? keep : model::attentionMask(s.seq, s.seq, s.causal, -1, options)) & same;
  }
  if (s.variant == "sparse") {
    int64_t blocks = (s.seq + ops::kMaskBlock - 1) / ops::kMaskBlock;
    std::vector<int64_t> kept;
    for (int64_t i = 0; i < blocks; ++i)
      for (int64_t j = 0; j < blocks; ++j)
        kept.push_back(s.sparseKept(i, j));
    torch::Tensor table =
        torch::tensor(kept).view({1, 1, blocks, blocks}).to(options.device()) != 0;
    in.tessel.blockMask = table;
    auto longs = options.dtype(torch::kLong);
    torch::Tensor block = torch::arange(s.seq, longs) / ops::kMaskBlock;
    torch::Tensor dense = table[0][0].index({block}).index({torch::indexing::Slice(), block});
    keep = (keep.defined() ? keep : model::attentionMask(s.seq, s.seq, s.causal, -1, options)) & dense;
  }
  if (keep.defined() && !in.sdpaMask.defined())
    in.sdpaMask = keep; // SDPA has no window or documents: a dense mask (every tile computed)
  return in;
}

torch::Tensor attention(const Impl &impl, const Shape &s, const Inputs &in) {
  const torch::Tensor &q = in.q, &k = in.k, &v = in.v;
  switch (impl.kind) {
  case Kind::Naive:
    if (!s.variant.empty())
      throw std::invalid_argument("naive attention has no score/mask variants here");
    return model::naiveAttention(q, k, v, s.causal, s.window);
  case Kind::Tessel:
    if (in.packed.spans.defined()) { // (batch, heads, seq, d) views of (tokens, heads, d)
      auto packed = [&](const torch::Tensor &t) {
        return t.transpose(1, 2).reshape({-1, t.size(1), t.size(3)});
      };
      return ops::flashAttentionVarlen(packed(q), packed(k), packed(v), in.packed)
          .view({q.size(0), q.size(2), q.size(1), q.size(3)})
          .transpose(1, 2);
    }
    return ops::flashAttention(q, k, v, in.tessel);
  case Kind::Sdpa:
    break;
  }
  if (!in.sdpaMissing.empty())
    throw std::invalid_argument(in.sdpaMissing);
  SdpaOnly only(impl.only);
  bool gqa = k.size(1) != q.size(1);
  if (in.sdpaMask.defined())
    return at::scaled_dot_product_attention(q, k, v, in.sdpaMask, 0.0, false, std::nullopt, gqa);
  return at::scaled_dot_product_attention(q, k, v, {}, 0.0, s.causal, std::nullopt, gqa);
}

/// The backend SDPA picks for these inputs under impl's toggles.
std::string sdpaChoice(const Impl &impl, const torch::Tensor &q, const torch::Tensor &k,
                       const torch::Tensor &v, bool causal) {
  SdpaOnly only(impl.only);
  // at::SDPBackend's values: math 0, flash 1, efficient 2, cudnn 3, overrideable 4.
  static const char *const names[] = {"math", "flash", "efficient", "cudnn", "overrideable"};
  int64_t choice = at::_fused_sdp_choice(q, k, v, {}, 0.0, causal, std::nullopt,
                                         /*enable_gqa=*/k.size(1) != q.size(1));
  return choice >= 0 && choice < 5 ? names[choice] : "none";
}

/// What an implementation computed: its output and gradients, for the error columns.
struct Outputs {
  torch::Tensor out, dq, dk, dv;
};

double flopForward(const Shape &s) {
  if (s.variant == "sparse") { // the pairs of the kept blocks (below the diagonal if causal)
    double pairs = 0;
    int64_t size = ops::kMaskBlock, blocks = (s.seq + size - 1) / size;
    for (int64_t i = 0; i < blocks; ++i)
      for (int64_t j = 0; j < blocks; ++j) {
        if (!s.sparseKept(i, j))
          continue;
        int64_t colEnd = std::min(s.seq, (j + 1) * size); // row r sees [j size, its end)
        for (int64_t r = i * size; r < std::min(s.seq, (i + 1) * size); ++r)
          pairs += double(
              std::max<int64_t>(0, std::min(s.causal ? r + 1 : colEnd, colEnd) - j * size));
      }
    return 4.0 * s.batch * s.heads * pairs * s.d;
  }
  if (s.variant == "document" || s.variant == "varlen") { // causal within equal documents
    double doc = double(s.seq) / double(s.documents);
    double pairs = s.documents * (s.causal ? doc * doc / 2 : doc * doc);
    return 4.0 * s.batch * s.heads * pairs * s.d;
  }
  if (s.window >= 0) { // the pairs the window keeps, row by row
    double pairs = 0;
    for (int64_t i = 0; i < s.seq; ++i)
      pairs += double(std::min(i, s.window) + 1 + (s.causal ? 0 : s.seq - 1 - i));
    return 4.0 * s.batch * s.heads * pairs * s.d;
  }
  double flop = 4.0 * s.batch * s.heads * s.seq * s.seq * s.d;
  return s.causal ? flop / 2 : flop;
}

double tflops(double flop, double ms) { return flop / (ms * 1e-3) / 1e12; }

/// Times impl on `in`, setting the record's fields as each measurement completes (an OOM
/// in the backward keeps the forward's).
Outputs measure(const Impl &impl, const Shape &s, const Inputs &in, const Plan &plan,
                Driver &driver, Record &r) {
  auto forward = [&] { return attention(impl, s, in); };
  if (impl.kind == Kind::Sdpa && in.sdpaMissing.empty())
    r.set("backend", in.sdpaMask.defined() ? "dense mask" : sdpaChoice(impl, in.q, in.k, in.v, s.causal));
  double fwdMs = medianMs(driver, plan.warmup, plan.samples, [&] { forward(); });
  r.set("fwd_ms", fwdMs);
  r.set("fwd_tflops", tflops(flopForward(s), fwdMs));
  cudaSynchronize();
  int64_t before = cudaAllocatedBytes();
  torch::Tensor out = forward();
  cudaSynchronize();
  int64_t after = cudaAllocatedBytes();
  r.set("mem_before_bwd_mib", double(after) / (1 << 20));
  r.set("forward_mib", double(after - before) / (1 << 20));
  double bwdMs = medianMs(driver, plan.warmup, plan.samples, [&] {
    in.clearGrads();
    out.backward(in.grad, /*retain_graph=*/true);
  });
  r.set("bwd_ms", bwdMs);
  r.set("bwd_tflops", tflops(2.5 * flopForward(s), bwdMs));
  if (plan.fwdBwd)
    r.set("fwd_bwd_ms", medianMs(driver, plan.warmup, plan.samples, [&] {
            in.clearGrads();
            forward().backward(in.grad);
          }));
  return {out.detach(), in.q.grad(), in.k.grad(), in.v.grad()};
}

/// Sets status to "OOM", "n/a: <reason>" (SDPA backends that refuse) or "error: <reason>"
/// (the first line, shortened), and message to the whole message when there is more. Returns
/// whether it was an error.
bool setFailure(Record &r, const std::exception &e, const Impl &impl) {
  auto *c10Error = dynamic_cast<const c10::Error *>(&e);
  std::string message = c10Error ? c10Error->what_without_backtrace() : e.what();
  if (dynamic_cast<const c10::OutOfMemoryError *>(&e) ||
      message.find("out of memory") != std::string::npos) {
    r.set("status", "OOM");
    return false;
  }
  std::string line = message.substr(0, message.find('\n'));
  if (line.size() > 100)
    line = line.substr(0, 97) + "...";
  r.set("status", (impl.kind == Kind::Sdpa ? "n/a: " : "error: ") + line);
  if (line != message)
    r.set("message", message);
  return impl.kind != Kind::Sdpa;
}

Record baseRecord(const std::string &study, const Shape &s, const Impl &impl) {
  Record r;
  r.set("study", study);
  r.set("impl", impl.name);
  r.set("dtype", s.dtype);
  r.set("batch", s.batch);
  r.set("heads", s.heads);
  r.set("kv_heads", s.keyValueHeads());
  r.set("window", s.window);
  r.set("variant", s.variant.empty() ? std::string("-")
                   : s.variant == "document" ? "doc" + std::to_string(s.documents)
                   : s.variant == "varlen"   ? "varlen" + std::to_string(s.documents)
                   : s.variant == "sparse"   ? "sparse" + std::to_string(s.sparseBlocks)
                                             : s.variant);
  r.set("seq", s.seq);
  r.set("d", s.d);
  r.set("layout", s.tokensMajor() ? "tokens" : "heads");
  r.set("causal", int64_t(s.causal));
  return r;
}

double maxAbsDiff(const torch::Tensor &a, const torch::Tensor &b) {
  return (a.to(torch::kFloat32) - b.to(torch::kFloat32)).abs().max().item<double>();
}

/// Sets max_err / grad_max_err against `reference` (or naive, or SDPA, whichever ran) and
/// fwd_bwd_vs_sdpa (SDPA's fwd+bwd time over this one's).
void compare(std::vector<Record> &rows, const std::vector<Outputs> &outputs,
             const std::string &reference) {
  auto find = [&](const std::string &name) -> int {
    for (size_t i = 0; i < rows.size(); ++i)
      if (std::get<std::string>(*rows[i].get("impl")) == name && outputs[i].out.defined())
        return int(i);
    return -1;
  };
  int ref = find(reference);
  ref = ref >= 0 ? ref : find("naive") >= 0 ? find("naive") : find("sdpa");
  int sdpa = find("sdpa");
  for (size_t i = 0; i < rows.size(); ++i) {
    const Outputs &o = outputs[i];
    if (!o.out.defined())
      continue;
    if (ref >= 0) {
      const Outputs &x = outputs[ref];
      rows[i].set("error_vs", std::get<std::string>(*rows[ref].get("impl")));
      rows[i].set("max_err", maxAbsDiff(o.out, x.out));
      rows[i].set("grad_max_err", std::max({maxAbsDiff(o.dq, x.dq), maxAbsDiff(o.dk, x.dk),
                                            maxAbsDiff(o.dv, x.dv)}));
    }
    const Value *mine = rows[i].get("fwd_bwd_ms");
    const Value *theirs = sdpa >= 0 ? rows[sdpa].get("fwd_bwd_ms") : nullptr;
    if (mine && theirs)
      rows[i].set("fwd_bwd_vs_sdpa", std::get<double>(*theirs) / std::get<double>(*mine));
  }
}

void printProgress(const Record &r) {
  std::cerr << "attention " << std::get<std::string>(*r.get("study"));
  for (const char *key :
       {"impl", "dtype", "batch", "heads", "kv_heads", "seq", "d", "window", "variant", "layout",
        "causal"})
    std::cerr << " " << key << "=" << formatValue(*r.get(key), 0);
  for (const char *key : {"fwd_ms", "bwd_ms", "fwd_bwd_ms"})
    if (const Value *v = r.get(key))
      std::cerr << " " << key << "=" << formatValue(*v, 3);
  std::cerr << " " << std::get<std::string>(*r.get("status")) << "\n";
  if (const Value *message = r.get("message"))
    std::cerr << "  " << std::get<std::string>(*message) << "\n";
}

/// Every implementation on one shape, one after the other; the cache emptied after each.
std::vector<Record> runShape(const std::string &study, const Shape &s,
                             const std::vector<Impl> &impls, const Plan &plan,
                             const std::string &reference, Driver &driver, bool &failed) {
  Inputs in = makeInputs(s);
  std::vector<Record> rows;
  std::vector<Outputs> outputs;
  for (const Impl &impl : impls) {
    Record r = baseRecord(study, s, impl);
    Outputs o;
    try {
      o = measure(impl, s, in, plan, driver, r);
      r.set("status", "ok");
    } catch (const std::exception &e) {
      failed |= setFailure(r, e, impl);
    }
    in.clearGrads();
    cudaEmptyCache();
    printProgress(r);
    rows.push_back(std::move(r));
    outputs.push_back(std::move(o));
  }
  compare(rows, outputs, reference);
  cudaEmptyCache();
  return rows;
}

std::vector<Record> naiveStudy(const Options &o, Driver &driver, bool &failed) {
  std::vector<Record> records;
  for (int64_t d : o.headDims)
    for (int64_t seq : o.naiveSeqs)
      for (Record &r : runShape("naive", {8, 1, seq, d, o.naiveDtype, true}, {kNaive, kTessel},
                                {o.warmup, o.passes, false}, "naive", driver, failed))
        records.push_back(std::move(r));
  return records;
}

std::vector<Record> flashStudy(const Options &o, Driver &driver, bool &failed) {
  std::vector<Record> records;
  for (const std::string &dtype : o.flashDtypes)
    for (int64_t d : o.headDims)
      for (int64_t seq = o.minSeq; seq <= o.maxSeq; seq *= 2)
        for (Record &r : runShape("flash", {1, 1, seq, d, dtype, true}, {kNaive, kTessel, kSdpa},
                                  {o.warmup, o.sweepSamples, true}, "sdpa", driver, failed))
          records.push_back(std::move(r));
  return records;
}

/// "BxHxLxD" (bf16, causal), then ":full" or ":causal" and ":kvN" (N key/value heads,
/// grouped-query attention) in any order; throws std::invalid_argument otherwise.
Shape parseShape(const std::string &text) {
  Shape s{0, 0, 0, 0, "bf16", true};
  std::string dims = text.substr(0, text.find(':'));
  for (size_t colon = text.find(':'); colon != std::string::npos;) {
    size_t next = text.find(':', colon + 1);
    std::string part = text.substr(colon + 1, next == std::string::npos ? next : next - colon - 1);
    colon = next;
    if (part == "full" || part == "causal") {
      s.causal = part == "causal";
      continue;
    }
    if (part == "softcap" || part == "alibi") {
      s.variant = part;
      continue;
    }
    if (part == "tokens" || part == "heads") {
      s.layout = part;
      continue;
    }
    // docN: N equal documents a sequence; varlenN: the same, packed (varlen); sparseN: a
    // block mask, a band of N blocks and every N-th block column.
    if (part.rfind("doc", 0) == 0 || part.rfind("varlen", 0) == 0 ||
        part.rfind("sparse", 0) == 0) {
      bool varlen = part[0] == 'v', sparse = part[0] == 's';
      size_t digits = varlen || sparse ? 6 : 3;
      char *end = nullptr;
      long long n = part.size() > digits ? std::strtoll(part.c_str() + digits, &end, 10) : 0;
      if (n < 1 || *end != '\0')
        throw std::invalid_argument("--shapes: '" + text + "': " + part.substr(0, digits) +
                                    (sparse ? "N needs N >= 1 blocks" : "N needs N >= 1 documents"));
      if (sparse)
        s.variant = "sparse", s.sparseBlocks = n;
      else
        s.variant = varlen ? "varlen" : "document", s.documents = n;
      continue;
    }
    // kvN: N key/value heads (N > 0); wN: a sliding window of N keys (N >= 0).
    bool kv = part.rfind("kv", 0) == 0, w = !kv && part.rfind("w", 0) == 0;
    size_t digits = kv ? 2 : 1;
    char *rest = nullptr;
    long long n = (kv || w) && part.size() > digits ? std::strtoll(part.c_str() + digits, &rest, 10) : -1;
    if (n < (kv ? 1 : 0) || *rest != '\0')
      throw std::invalid_argument("--shapes: '" + text +
                                  "': after ':' comes full, causal, kvN (N > 0), wN (N >= 0), "
                                  "softcap, alibi, docN, varlenN, sparseN (N > 0), tokens or "
                                  "heads");
    (kv ? s.kvHeads : s.window) = n;
  }
  int64_t *fields[] = {&s.batch, &s.heads, &s.seq, &s.d};
  size_t start = 0;
  for (int i = 0; i < 4; ++i) {
    size_t end = i < 3 ? dims.find('x', start) : dims.size();
    std::string part = end == std::string::npos ? "" : dims.substr(start, end - start);
    char *rest = nullptr;
    long long value = part.empty() ? 0 : std::strtoll(part.c_str(), &rest, 10);
    if (part.empty() || *rest != '\0' || value <= 0)
      throw std::invalid_argument("--shapes: '" + text + "' is not BxHxLxD[:full][:kvN] with positive sizes");
    *fields[i] = value;
    start = end + 1;
  }
  if (s.kvHeads && s.heads % s.kvHeads != 0)
    throw std::invalid_argument("--shapes: '" + text + "': heads must be a multiple of kvN");
  if (s.documents > s.seq)
    throw std::invalid_argument("--shapes: '" + text + "': more documents than tokens");
  return s;
}

std::vector<Record> realisticStudy(const Options &o, Driver &driver, bool &failed) {
  std::vector<Impl> impls = {kTessel,
                             kSdpa,
                             {"sdpa-cudnn", Kind::Sdpa, at::SDPBackend::cudnn_attention},
                             {"sdpa-flash", Kind::Sdpa, at::SDPBackend::flash_attention},
                             {"sdpa-efficient", Kind::Sdpa, at::SDPBackend::efficient_attention},
                             kNaive};
  std::vector<Record> records;
  auto chosen = [&](std::vector<Impl> which) {
    if (o.impls.empty())
      return which;
    std::vector<Impl> kept;
    for (const Impl &i : which)
      if (std::find(o.impls.begin(), o.impls.end(), i.name) != o.impls.end())
        kept.push_back(i);
    return kept;
  };
  auto run = [&](const Shape &s, const std::vector<Impl> &which) {
    for (Record &r : runShape("realistic", s, chosen(which), {o.warmup, o.samples, false}, "sdpa",
                              driver, failed))
      records.push_back(std::move(r));
  };
  if (!o.shapes.empty()) {
    for (const std::string &text : o.shapes)
      run(parseShape(text), impls);
    return records;
  }
  for (Shape s : {Shape{4, 16, 4096, 64, "bf16", true}, Shape{2, 16, 8192, 128, "bf16", true}})
    for (bool causal : {true, false}) {
      s.causal = causal;
      run(s, impls);
    }
  // A short training context (GPT-2 small's 12 heads) and a long one, causal, without
  // naive attention (the long one's scores alone would take 16 GiB).
  impls.pop_back();
  run(Shape{16, 12, 1024, 64, "bf16", true}, impls);
  run(Shape{1, 16, 16384, 128, "bf16", true}, impls);
  return records;
}

/// The table of one study: (header, field, decimals; -1: text, left aligned).
std::vector<Column> columnsFor(const std::string &study) {
  using Spec = std::tuple<const char *, const char *, int>;
  std::vector<Spec> specs;
  // clang-format off
  if (study == "naive")
    specs = {{"impl", "impl", -1}, {"dtype", "dtype", -1}, {"d", "d", 0}, {"seq", "seq", 0},
             {"fwd ms", "fwd_ms", 3}, {"bwd ms", "bwd_ms", 3},
             {"MiB before bwd", "mem_before_bwd_mib", 1}, {"fwd MiB", "forward_mib", 1}};
  else if (study == "flash")
    specs = {{"dtype", "dtype", -1}, {"d", "d", 0}, {"seq", "seq", 0}, {"impl", "impl", -1},
             {"fwd ms", "fwd_ms", 3}, {"bwd ms", "bwd_ms", 3}, {"fwd+bwd ms", "fwd_bwd_ms", 3},
             {"sdpa/this", "fwd_bwd_vs_sdpa", 2}};
  else
    specs = {{"B", "batch", 0}, {"H", "heads", 0}, {"KV", "kv_heads", 0}, {"L", "seq", 0},
             {"d", "d", 0}, {"window", "window", 0}, {"variant", "variant", -1},
             {"layout", "layout", -1}, {"causal", "causal", 0}, {"impl", "impl", -1},
             {"backend", "backend", -1},
             {"fwd ms", "fwd_ms", 3}, {"bwd ms", "bwd_ms", 3}, {"fwd TFLOP/s", "fwd_tflops", 1},
             {"bwd TFLOP/s", "bwd_tflops", 1}};
  specs.insert(specs.end(), {{"max err", "max_err", 5}, {"grad err", "grad_max_err", 5},
                             {"status", "status", -1}});
  // clang-format on
  std::vector<Column> columns;
  for (auto [header, key, decimals] : specs)
    columns.push_back(fieldColumn(header, key, std::max(decimals, 0), decimals < 0));
  return columns;
}

Record metaRecord(const Options &o, const DeviceInfo &device) {
  Record meta;
  meta.set("tool", "tessel-bench attention");
  meta.set("version", versionString());
  meta.set("device", device.name);
  meta.set("driver_version", int64_t(device.driverVersion));
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  meta.set("date", std::string(date));
  meta.set("torch_version", std::string(TORCH_VERSION));
  meta.set("warmup", o.warmup);
  meta.set("passes", o.passes);
  meta.set("sweep_samples", o.sweepSamples);
  meta.set("samples", o.samples);
  meta.set("package_suffix", o.suffix);
  meta.set("exact_f32", int64_t(o.exactF32));
  meta.set("forward_prune", o.forwardPrune);
  meta.set("dq_prune", o.queryGradPrune);
  meta.set("dkdv_prune", o.keyValueGradPrune);
  meta.set("shares", o.shares);
  meta.set("flop_convention", "fwd 4*B*H*L*L*d (halved when causal; with a window, 4*B*H*d per visible pair), bwd 2.5x fwd");
  return meta;
}

/// Writes JSON, CSV and markdown of everything so far (after each study, so that a run cut
/// short keeps the studies it finished).
void writeOutputs(const Options &o, const Record &meta, const std::vector<Record> &records,
                  const std::string &markdownTables) {
  if (!o.json.empty())
    writeFile(o.json, [&](std::ostream &out) { writeJson(out, meta, records); });
  if (!o.csv.empty())
    writeFile(o.csv, [&](std::ostream &out) { writeCsv(out, records); });
  if (!o.markdown.empty())
    writeFile(o.markdown, [&](std::ostream &out) { out << markdownTables; });
}

std::string shellQuote(const std::string &text) {
  std::string out = "'";
  for (char c : text)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

/// bench/reference/plot_attention.py in the source tree this was built from, or beside the
/// executable's build folder (<root>/<build>/bin/tessel-bench).
std::filesystem::path plotScript() {
  namespace fs = std::filesystem;
  const fs::path relative = "bench/reference/plot_attention.py";
  fs::path built = fs::path(TESSEL_SOURCE_DIR) / relative;
  std::error_code error;
  fs::path exe = fs::read_symlink("/proc/self/exe", error);
  fs::path beside = exe.parent_path().parent_path().parent_path() / relative;
  return fs::exists(built) || error || !fs::exists(beside) ? built : beside;
}

/// Runs the plot script; says how to plot later when it cannot (no python3 or matplotlib).
void plot(const std::string &json, const std::string &png) {
  std::string command = "python3 " + shellQuote(plotScript().string()) + " --json " +
                        shellQuote(json) + " --out " + shellQuote(png);
  int status = std::system(command.c_str());
  if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    std::cerr << "tessel-bench attention: plotted " << png << "\n";
    return;
  }
  std::cerr << "tessel-bench attention: could not plot (needs python3 with matplotlib); "
            << "later: " << command << "\n";
}

/// Parses the flags into `o`; std::nullopt means "go on", otherwise the exit code.
std::optional<int> parseFlags(int argc, char **argv, Options &o) {
  FlagParser flags("tessel-bench attention",
                   "Attention with autograd: naive, Tessel's FlashAttention-2 and "
                   "scaled_dot_product_attention (its backends), times, memory and TFLOP/s");
  flags.addList("study", "LIST", "naive, flash, realistic or all", o.studies);
  flags.addList("head-dim", "LIST", "head dims d of the naive and flash studies", o.headDims);
  flags.addList("naive-seq", "LIST", "sequence lengths of the naive study", o.naiveSeqs);
  flags.add("dtype", "DTYPE", "dtype of the naive study (f32, bf16, f16)", o.naiveDtype);
  flags.add("passes", "N", "timed passes per measurement in the naive study (median)", o.passes);
  flags.add("min-seq", "N", "shortest sequence of the flash study (then doubled)", o.minSeq);
  flags.add("max-seq", "N", "longest sequence of the flash study", o.maxSeq);
  flags.addList("flash-dtype", "LIST", "dtypes of the flash study", o.flashDtypes);
  flags.add("sweep-samples", "N", "timed runs per measurement in the flash study", o.sweepSamples);
  flags.add("samples", "N", "timed runs per measurement in the realistic study", o.samples);
  flags.addList("shapes", "LIST",
                "the realistic study's shapes instead of its own: BxHxLxD (bf16, causal), "
                "BxHxLxD:full, :kvN for N key/value heads (grouped-query attention), :wN for a "
                "sliding window of N keys, :softcap (Gemma 2's cap of 50), :alibi, :docN (N "
                "equal documents a sequence, masked apart), :varlenN (the same documents packed into one sequence, FlashAttention's varlen call), :sparseN (a block mask of 128 x 128 blocks: a band of N blocks and every N-th block column); :tokens or :heads lays q, k, v out (batch, seq, heads, d) or (batch, heads, seq, d) in memory (default: tokens for varlen, else heads)",
                o.shapes);
  flags.addList("impls", "LIST",
                "the realistic study's implementations: tessel, sdpa, sdpa-cudnn, sdpa-flash, "
                "sdpa-efficient, naive (default: all)",
                o.impls);
  flags.add("warmup", "N", "untimed runs before each measurement", o.warmup);
  flags.add("packages", "DIR", "folder with flash_attention_*.tslpkg (default: the build's)",
            o.packages);
  flags.add("suffix", "S",
            "load flash_attention_<dtype>[_causal]<S>.tslpkg: _sm90a (wgmma), '' (generic) "
            "or auto (_sm90a on an H100 where built; default)",
            o.suffix);
  flags.addSwitch("exact-f32", "Tessel's f32 with exact f32 products (default: tf32)", o.exactF32);
  flags.add("forward-prune", "EXPR",
            "leave out Tessel's forward tiles for which EXPR holds (an @autotune prune "
            "condition, e.g. 'num_warps != 8'), to time one tile against another",
            o.forwardPrune);
  flags.add("dq-prune", "EXPR", "the same for Tessel's dQ (backward) tiles", o.queryGradPrune);
  flags.add("dkdv-prune", "EXPR", "the same for Tessel's dK/dV (backward) tiles",
            o.keyValueGradPrune);
  flags.add("shares", "N",
            "split Tessel's small grids into N shares of the keys (forward, dQ) or queries "
            "(dK/dV); 1: never; 0: chosen from the grid and the SMs (default)",
            o.shares);
  flags.add("json", "FILE", "write the results as JSON (--plot alone: FILE.json beside it)",
            o.json);
  flags.add("csv", "FILE", "write the results as CSV", o.csv);
  flags.add("markdown", "FILE", "write the tables as markdown", o.markdown);
  flags.add("plot", "FILE.png", "plot with bench/reference/plot_attention.py (needs matplotlib)",
            o.plot);
  if (auto exit = flags.parseOrExit(argc, argv))
    return exit;
  auto usage = [](const std::string &message) {
    std::cerr << "tessel-bench attention: " << message << "\n";
    return std::optional<int>(2);
  };
  for (const std::string &study : o.studies)
    if (study != "naive" && study != "flash" && study != "realistic" && study != "all")
      return usage("--study: unknown study '" + study + "' (naive, flash, realistic, all)");
  try {
    dtypeOf(o.naiveDtype);
    for (const std::string &dtype : o.flashDtypes)
      dtypeOf(dtype);
    for (const std::string &shape : o.shapes)
      parseShape(shape);
    for (const std::string &impl : o.impls)
      if (impl != "tessel" && impl != "sdpa" && impl != "sdpa-cudnn" && impl != "sdpa-flash" &&
          impl != "sdpa-efficient" && impl != "naive")
        throw std::invalid_argument("--impls: unknown implementation '" + impl + "'");
    // Their names are checked against the kernels' later.
    for (const auto &[flag, expr] : {std::pair{"--forward-prune", &o.forwardPrune},
                                     std::pair{"--dq-prune", &o.queryGradPrune},
                                     std::pair{"--dkdv-prune", &o.keyValueGradPrune}})
      try {
        if (!expr->empty())
          ConfigExpr::parse(*expr);
      } catch (const tessel::Error &e) {
        return usage(std::string(flag) + ": " + e.what());
      }
  } catch (const std::invalid_argument &e) {
    return usage(e.what());
  }
  auto positive = [](const std::vector<int64_t> &values) {
    return std::all_of(values.begin(), values.end(), [](int64_t v) { return v > 0; });
  };
  if (!positive(o.headDims) || !positive(o.naiveSeqs) ||
      !positive({o.passes, o.samples, o.sweepSamples}) || o.warmup < 0)
    return usage("--head-dim, --naive-seq, --passes, --samples and --sweep-samples must be "
                 "positive, --warmup not negative");
  if (o.shares < 0 || o.shares > 65535)
    return usage("--shares must be 0 (chosen from the grid) to 65535");
  if (o.minSeq <= 0 || o.maxSeq < o.minSeq)
    return usage("--min-seq must be positive and at most --max-seq");
  if (!o.plot.empty() && o.json.empty())
    o.json = std::filesystem::path(o.plot).replace_extension(".json").string();
  return std::nullopt;
}

int runAttention(int argc, char **argv) {
  Options o;
  if (auto exit = parseFlags(argc, argv, o))
    return *exit;
  if (!torch::cuda::is_available() || !Driver::isAvailable()) {
    std::cerr << "tessel-bench attention: needs a GPU\n";
    return 1;
  }
  Driver &driver = Driver::get();
  torch::zeros({1}, torch::kCUDA); // LibTorch's primary context becomes current
  driver.ensureCurrent(0);
  ops::FlashAttentionOptions &fa = ops::flashAttentionOptions();
  fa.packageDir = o.packages;
  fa.suffix = o.suffix;
  fa.exactF32 = o.exactF32;
  fa.forwardPrune = o.forwardPrune;
  fa.queryGradPrune = o.queryGradPrune;
  fa.keyValueGradPrune = o.keyValueGradPrune;
  fa.shares = int(o.shares);
  Record meta = metaRecord(o, driver.deviceInfo(0));
  meta.set("package_bf16", ops::flashAttentionPackage(torch::kBFloat16, true, 0));
  meta.set("package_f32", ops::flashAttentionPackage(torch::kFloat32, true, 0));
  std::cout << "device: " << driver.deviceInfo(0).name << ", driver "
            << driver.deviceInfo(0).driverVersion << ", torch " << TORCH_VERSION << "\n";

  using Study = std::vector<Record> (*)(const Options &, Driver &, bool &);
  const std::pair<const char *, Study> studies[] = {
      {"naive", naiveStudy}, {"flash", flashStudy}, {"realistic", realisticStudy}};
  auto chosen = [&](const std::string &name) {
    for (const std::string &s : o.studies)
      if (s == name || s == "all")
        return true;
    return false;
  };
  std::vector<Record> records;
  std::string markdown;
  bool failed = false;
  for (const auto &[name, study] : studies) {
    if (!chosen(name))
      continue;
    std::vector<Record> rows = study(o, driver, failed);
    std::cout << "\n" << name << " study\n" << formatTable(rows, columnsFor(name));
    markdown += std::string("\n### ") + name + " study\n\n" +
                formatTable(rows, columnsFor(name), /*markdown=*/true);
    records.insert(records.end(), rows.begin(), rows.end());
    writeOutputs(o, meta, records, markdown);
  }
  if (!o.plot.empty())
    plot(o.json, o.plot);
  return failed ? 1 : 0;
}

} // namespace

TESSEL_BENCH_SUBCOMMAND("attention",
                        "naive attention vs Tessel's FlashAttention-2 vs SDPA: time, memory, "
                        "TFLOP/s",
                        runAttention);
