//===- bench/ops/FlashAttention.cpp - kernels/flash_attention.tsl as a torch op -===//

#include "bench/ops/FlashAttention.h"
#include "bench/ops/BlockSparse.h"
#include "bench/kernels/KernelPackageDir.h"
#include "bench/model/TesselOps.h"
#include "runtime/Runtime.h"

#include <ATen/autocast_mode.h>
#include <torch/autograd.h>
#include <torch/torch.h>

#ifdef TESSEL_HAVE_TORCH_CUDA
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#endif

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace tessel::ops {
namespace {

[[noreturn]] void fail(const std::string &message) {
  throw std::invalid_argument("flash_attention: " + message);
}

std::string describe(const torch::Tensor &t) {
  std::ostringstream out;
  out << t.sizes() << " " << t.scalar_type() << " on " << t.device();
  return out.str();
}

/// The kernels of one package (dtype, causal): the four of the attention, and the two that
/// merge a split grid's shares.
struct Kernels {
  TunedKernel fwd, preprocess, dkdv, dq, combine, sum;
};

std::string packageDir() {
  const FlashAttentionOptions &options = flashAttentionOptions();
  std::string dir = options.packageDir.empty() ? TESSEL_KERNEL_PACKAGE_DIR : options.packageDir;
  if (dir.empty())
    fail("no kernel packages: this build has no compiler and no TESSEL_PACKAGE_DIR "
         "(see docs/gpu.md)");
  return dir;
}

/// The four kernels of the package for (dtype, causal, variant) on `device` (a CUDA ordinal).
const Kernels &kernelsFor(torch::ScalarType dtype, bool causal, int device,
                          const std::string &variant) {
  static std::mutex mutex;
  static std::map<std::string, Kernels> loaded;
  const FlashAttentionOptions &options = flashAttentionOptions();
  std::string dir = packageDir();
  std::string file = flashAttentionPackage(dtype, causal, device, variant);
  std::lock_guard<std::mutex> lock(mutex);
  std::string key =
      file + "|" + options.prune + "|" + options.forwardPrune + "|" + options.queryGradPrune +
      "|" + options.keyValueGradPrune;
  auto it = loaded.find(key);
  if (it != loaded.end())
    return it->second;
  if (!variant.empty() && !std::ifstream(dir + "/" + file + ".tslpkg").good())
    fail("no package " + file + ".tslpkg in " + dir + " for the '" + variant +
         "' variant: `ninja tessel-attention-variants` builds them from examples/attention/ "
         "(bf16 and f16 on sm_90a), `ninja tessel-attention-variants-generic` for other GPUs "
         "(kernels/CMakeLists.txt lists which are causal)");
  Package package = Package::load(dir + "/" + file + ".tslpkg");
  // `prune` for every tuned kernel, or-ed with the kernel's own condition.
  auto pruning = [&](const std::string &own) {
    TuneOptions tuning;
    tuning.prune = own.empty()             ? options.prune
                   : options.prune.empty() ? own
                                           : "(" + options.prune + ") or (" + own + ")";
    return tuning;
  };
  Kernels k{TunedKernel::load(package, "attention_fwd", pruning(options.forwardPrune)),
            TunedKernel::load(package, "attention_bwd_preprocess"),
            TunedKernel::load(package, "attention_bwd_dkdv", pruning(options.keyValueGradPrune)),
            TunedKernel::load(package, "attention_bwd_dq", pruning(options.queryGradPrune)),
            TunedKernel::load(package, "attention_fwd_combine"),
            TunedKernel::load(package, "attention_bwd_sum")};
  return loaded.emplace(key, std::move(k)).first->second;
}

CUstream currentStream() {
#ifdef TESSEL_HAVE_TORCH_CUDA
  return reinterpret_cast<CUstream>(c10::cuda::getCurrentCUDAStream().stream());
#else
  return nullptr;
#endif
}

int32_t i32(int64_t value, const char *what) {
  if (value < 0 || value > std::numeric_limits<int32_t>::max())
    fail(std::string(what) + " = " + std::to_string(value) + " does not fit the kernels' 32-bit indices");
  return int32_t(value);
}

/// (batch, head, seq) strides of a 4-D tensor whose last dimension is contiguous.
std::vector<Arg> strides3(const torch::Tensor &t, const char *name) {
  for (int d = 0; d < 3; ++d)
    if (t.size(d) > 1 && t.stride(d) < 0)
      fail(std::string(name) + " has a negative stride");
  // Offsets inside one (batch, head) slice are 32-bit.
  i32(std::max<int64_t>(t.size(2) - 1, 0) * t.stride(2) + t.size(3),
      (std::string(name) + "'s slice extent").c_str());
  std::string what = std::string(name) + "'s stride";
  return {i32(t.stride(0), what.c_str()), i32(t.stride(1), what.c_str()),
          i32(t.stride(2), what.c_str())};
}

/// The last dimension contiguous, as the kernels load rows of it (a copy otherwise).
torch::Tensor rowsContiguous(const torch::Tensor &t) {
  return t.size(3) <= 1 || t.stride(3) == 1 ? t : t.contiguous();
}

/// An uninitialised gradient of `t`'s batch, head dim and dtype with `heads` heads of `seq`
/// rows, laid out as `t`: tokens-major (batch, seq, heads, d) when `t`'s seq stride is the
/// larger, else heads-major (batch, heads, seq, d); the rows contiguous either way.
torch::Tensor gradientLike(const torch::Tensor &t, int64_t heads, int64_t seq) {
  int64_t batch = t.size(0), d = t.size(3);
  bool tokensMajor = t.size(1) > 1 && t.size(2) > 1 && t.stride(2) > t.stride(1);
  return tokensMajor ? torch::empty({batch, seq, heads, d}, t.options()).transpose(1, 2)
                     : torch::empty({batch, heads, seq, d}, t.options());
}

/// How many shares to split a kernel's inner loop into along grid z, for `programs`
/// programs (a 128-row tile's count) each looping over `length` keys or queries, at most
/// 16 and each at least two 128-row tiles long. Full attention: FlashAttention-2's
/// split-KV rule, none where the grid has 0.8x the SMs' programs, else the fewest shares
/// whose waves are at least 85% as full as the fullest. Causal programs' lengths run from
/// one tile to all, so the longest sets the time: enough shares that the longest program
/// (length / shares) is at most 1.25x the SMs' average (programs x length / 2 / SMs),
/// 1.6 SMs / programs. FlashAttentionOptions::shares overrides (one share per 64 rows at
/// most). None where the kernel has no share tiles for the head dim (`tiles`).
int64_t sharesFor(int64_t programs, int64_t length, bool causal, bool tiles, int device) {
  if (!tiles)
    return 1;
  int64_t fixed = flashAttentionOptions().shares;
  if (fixed > 0)
    return std::clamp<int64_t>(cdiv(length, 64), 1, fixed);
  int64_t sms = Driver::get().deviceInfo(device).multiprocessors;
  if (programs <= 0 || sms <= 0)
    return 1;
  int64_t most = std::clamp<int64_t>(std::min<int64_t>(length / 256, sms), 1, 16);
  if (causal)
    return std::clamp<int64_t>(cdiv(16 * sms, 10 * programs), 1, most);
  if (5 * programs >= 4 * sms)
    return 1;
  auto efficiency = [&](int64_t shares) {
    double waves = double(programs * shares) / double(sms);
    return waves / std::ceil(waves);
  };
  double best = 0;
  for (int64_t s = 1; s <= most; ++s)
    best = std::max(best, efficiency(s));
  for (int64_t s = 1; s <= most; ++s)
    if (efficiency(s) >= 0.85 * best)
      return s;
  return 1;
}

/// Whether `kernel` has share tiles (configurations with SHARES) for `headDim`: the
/// power-of-two head dims have them, except in the exact-f32 package (unpipelined tiles
/// only).
bool hasShareTiles(const TunedKernel &kernel, int64_t headDim) {
  for (int i = 0; i < kernel.configCount(); ++i) {
    const Config &c = kernel.config(i);
    if (c.find("SHARES") && c.find("HEAD") && c["SHARES"] != 0 && c["HEAD"] == headDim)
      return true;
  }
  return false;
}

/// A split of `length` keys or queries into shares of whole 128-row tiles (a multiple of
/// every tile the kernels have): how many, and each one's length, the kernels' `share`
/// (the whole length, rounded up to a tile, for one share).
struct Split {
  int64_t shares, length;
  Split(int64_t wanted, int64_t total)
      : length(std::max<int64_t>(1, cdiv(cdiv(total, 128), std::max<int64_t>(wanted, 1))) * 128) {
    shares = std::max<int64_t>(1, cdiv(total, length));
  }
};

void append(std::vector<Arg> &args, const std::vector<Arg> &more) {
  args.insert(args.end(), more.begin(), more.end());
}

/// `t`'s data, or null for an undefined or empty tensor (an argument the kernels skip).
void *dataOrNull(const torch::Tensor &t) {
  return t.defined() && t.numel() > 0 ? t.data_ptr() : nullptr;
}

/// The kernels' score/mask data arguments: the variant's arrays, or none.
std::vector<Arg> variantArgs(const AttentionVariant &variant) {
  return {dataOrNull(variant.floats), dataOrNull(variant.ints)};
}

void checkWindow(int64_t window) {
  if (window < -1)
    fail("window must be -1 (none) or at least 0; got " + std::to_string(window));
}

/// The kernels' window argument: keys left of the diagonal a query sees. A window of
/// seq_k or more hides nothing (and keeps the kernels' index arithmetic in 32 bits).
int32_t windowArg(int64_t window, int64_t seqK) {
  checkWindow(window);
  return int32_t(window < 0 ? seqK : std::min(window, seqK));
}

/// Checks q, k, v and brings them to one dtype (autocast) with contiguous rows.
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor> prepare(torch::Tensor q, torch::Tensor k,
                                                                torch::Tensor v) {
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4)
    fail("q, k and v must be 4-D (batch, heads, seq, head_dim); got q " + describe(q) + ", k " +
         describe(k) + ", v " + describe(v));
  if (!q.is_cuda() || q.device() != k.device() || q.device() != v.device())
    fail("q, k and v must be on one CUDA device; got q " + describe(q) + ", k " + describe(k) +
         ", v " + describe(v));
  if (at::autocast::is_autocast_enabled(at::kCUDA)) {
    auto dtype = at::autocast::get_autocast_dtype(at::kCUDA);
    auto cast = [&](torch::Tensor &t) {
      if (t.scalar_type() == torch::kFloat32)
        t = t.to(dtype);
    };
    cast(q), cast(k), cast(v);
  }
  auto dtype = q.scalar_type();
  if (dtype != torch::kBFloat16 && dtype != torch::kHalf && dtype != torch::kFloat32)
    fail("dtype must be bf16, f16 or f32; got q " + describe(q));
  if (k.scalar_type() != dtype || v.scalar_type() != dtype)
    fail("q, k and v must have one dtype; got q " + describe(q) + ", k " + describe(k) + ", v " +
         describe(v));
  if (k.sizes() != v.sizes())
    fail("k and v must have one shape; got k " + describe(k) + ", v " + describe(v));
  if (q.size(0) != k.size(0) || q.size(3) != k.size(3))
    fail("q and k must agree on batch and head_dim; got q " + describe(q) + ", k " +
         describe(k));
  if (k.size(1) == 0 || q.size(1) % k.size(1) != 0)
    fail("q's heads must be a multiple of k's and v's (grouped-query attention); got q " +
         describe(q) + ", k " + describe(k));
  int64_t d = q.size(3);
  if (d < 8 || d > 256 || d % 8 != 0)
    fail("head_dim " + std::to_string(d) + " is not supported (a multiple of 8 from 8 to 256)");
  if (q.size(0) * q.size(1) > 65535)
    fail("batch * heads = " + std::to_string(q.size(0) * q.size(1)) +
         " exceeds the grid's 65535 programs in y");
  return {rowsContiguous(q), rowsContiguous(k), rowsContiguous(v)};
}

/// Autograd: saves q, k, v, the output and lse; the backward recomputes P from lse.
struct FlashAttentionFunction : public torch::autograd::Function<FlashAttentionFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext *ctx, const torch::Tensor &q,
                               const torch::Tensor &k, const torch::Tensor &v, bool causal,
                               double scale, int64_t window, const std::string &variant,
                               const torch::Tensor &floats, const torch::Tensor &ints) {
    AttentionVariant mods{variant, floats, ints};
    auto [out, lse] = flashAttentionForward(q, k, v, causal, scale, window, mods);
    ctx->save_for_backward({q, k, v, out, lse, floats, ints});
    ctx->saved_data["causal"] = causal;
    ctx->saved_data["scale"] = scale;
    ctx->saved_data["window"] = window;
    ctx->saved_data["variant"] = variant;
    return out;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext *ctx,
                                               torch::autograd::tensor_list grads) {
    auto saved = ctx->get_saved_variables();
    torch::Tensor none;
    if (!grads[0].defined()) // the output was not used: no gradient flows
      return {torch::zeros_like(saved[0]), torch::zeros_like(saved[1]),
              torch::zeros_like(saved[2]), none, none, none, none, none, none};
    AttentionVariant mods{ctx->saved_data["variant"].toStringRef(), saved[5], saved[6]};
    auto [dq, dk, dv] =
        flashAttentionBackward(grads[0], saved[0], saved[1], saved[2], saved[3], saved[4],
                               ctx->saved_data["causal"].toBool(),
                               ctx->saved_data["scale"].toDouble(),
                               ctx->saved_data["window"].toInt(), mods);
    // (The variant's data, e.g. ALiBi's slopes, gets no gradient.)
    return {dq, dk, dv, none, none, none, none, none, none};
  }
};

/// The one score/mask variant `options` asks for, its data checked and made the kernels'.
AttentionVariant variantOf(const AttentionOptions &options, const torch::Tensor &q,
                           const torch::Tensor &k) {
  int asked = (options.softcap != 0) + options.alibiSlopes.defined() +
              options.documentIds.defined() + options.prefixLengths.defined() +
              options.blockMask.defined() + !options.variant.name.empty();
  if (asked > 1)
    fail("softcap, alibi_slopes, document_ids, prefix_lengths, block_mask and a named variant "
         "are one a call (no package combines two)");
  auto on = q.options();
  auto ints = [&](const torch::Tensor &t, std::vector<int64_t> shape, const char *what) {
    if (t.sizes() != shape || t.is_floating_point() || t.is_complex()) {
      std::ostringstream want;
      want << c10::IntArrayRef(shape);
      fail(std::string(what) + " must be integers of shape " + want.str() + "; got " +
           describe(t));
    }
    return t.to(q.device());
  };
  int64_t batch = q.size(0), heads = q.size(1), seq = q.size(2);
  if (options.softcap != 0) {
    if (!(options.softcap > 0) || !std::isfinite(options.softcap))
      fail("softcap must be positive and finite; got " + std::to_string(options.softcap));
    return {"softcap", torch::full({1}, options.softcap, on.dtype(torch::kFloat32)), {}};
  }
  if (options.alibiSlopes.defined()) {
    const torch::Tensor &t = options.alibiSlopes;
    if (t.dim() != 1 || t.size(0) != heads || !t.is_floating_point())
      fail("alibi_slopes must be floating [heads] = [" + std::to_string(heads) + "]; got " +
           describe(t));
    return {"alibi", t.to(on.dtype(torch::kFloat32)).contiguous(), {}};
  }
  if (options.documentIds.defined()) {
    if (k.size(2) != seq)
      fail("document_ids needs queries and keys of one sequence; got q " + describe(q) +
           ", k " + describe(k));
    // The kernels read, per sequence, each token's document (a run of equal ids), its first
    // token and one past its last: [batch, 3, seq] (examples/attention/document.tsl).
    // Runs are found on the ids as given (64-bit ids that agree mod 2^32 stay apart).
    torch::Tensor ids = ints(options.documentIds, {batch, seq}, "document_ids");
    auto at = torch::arange(seq, on.dtype(torch::kInt32)).expand({batch, seq});
    torch::Tensor starts = torch::ones({batch, seq}, ids.options().dtype(torch::kBool));
    if (seq > 1)
      starts.narrow(1, 1, seq - 1).copy_(ids.narrow(1, 1, seq - 1) != ids.narrow(1, 0, seq - 1));
    torch::Tensor ends = torch::ones_like(starts); // a document ends before the next starts
    if (seq > 1)
      ends.narrow(1, 0, seq - 1).copy_(starts.narrow(1, 1, seq - 1));
    torch::Tensor run = starts.to(torch::kInt32).cumsum(1, torch::kInt32);
    torch::Tensor first = std::get<0>(torch::where(starts, at, 0).cummax(1));
    torch::Tensor last = std::get<0>(torch::where(ends, at + 1, seq).flip(1).cummin(1)).flip(1);
    return {"document", {}, torch::stack({run, first, last}, 1).to(torch::kInt32).contiguous()};
  }
  if (options.prefixLengths.defined()) {
    if (options.causal)
      fail("prefix_lengths holds the causal part of its mask: call with causal = false");
    torch::Tensor prefix = ints(options.prefixLengths, {batch}, "prefix_lengths");
    return {"prefix_lm", {}, prefix.clamp(0, seq).to(torch::kInt32).contiguous()};
  }
  if (options.blockMask.defined())
    return {"block_sparse", {},
            blockSparseInts("flash_attention", options.blockMask.to(q.device()), batch, heads,
                            seq, k.size(2))};
  AttentionVariant v = options.variant;
  // The examples' data, checked (another variant's is its own to check: the kernels read it).
  struct Needs {
    const char *name;
    int64_t floats, ints;
  };
  for (Needs n : {Needs{"softcap", 1, 0}, Needs{"alibi", heads, 0},
                  Needs{"document", 0, 3 * batch * seq}, Needs{"prefix_lm", 0, batch},
                  Needs{"sliding_window", 0, 2}, Needs{"block_sparse", 0, 8},
                  Needs{"varlen", 0, 2 * (seq + k.size(2))}})
    if (v.name == n.name &&
        ((v.floats.defined() ? v.floats.numel() : 0) < n.floats ||
         (v.ints.defined() ? v.ints.numel() : 0) < n.ints))
      fail("the '" + v.name + "' variant reads " + std::to_string(n.floats) + " floats and " +
           std::to_string(n.ints) + " ints; got " +
           (v.floats.defined() ? describe(v.floats) : std::string("no floats")) + " and " +
           (v.ints.defined() ? describe(v.ints) : std::string("no ints")));
  if (v.floats.defined())
    v.floats = v.floats.to(on.dtype(torch::kFloat32)).contiguous();
  if (v.ints.defined())
    v.ints = v.ints.to(on.dtype(torch::kInt32)).contiguous();
  return v;
}

} // namespace

FlashAttentionOptions &flashAttentionOptions() {
  static FlashAttentionOptions options;
  return options;
}

std::string flashAttentionPackage(torch::ScalarType dtype, bool causal, int device,
                                  const std::string &variant) {
  const FlashAttentionOptions &options = flashAttentionOptions();
  std::string name = dtype == torch::kBFloat16 ? "bf16"
                     : dtype == torch::kHalf   ? "f16"
                     : options.exactF32        ? "f32_ieee"
                                               : "f32";
  std::string file = "flash_attention_" + (variant.empty() ? "" : variant + "_") + name +
                     (causal ? "_causal" : "");
  if (options.suffix != "auto")
    return file + options.suffix;
  // Hopper's wgmma build, where there is one for this dtype.
  if (Driver::get().deviceInfo(device).capability() == 90 &&
      std::ifstream(packageDir() + "/" + file + "_sm90a.tslpkg").good())
    return file + "_sm90a";
  return file;
}

std::tuple<torch::Tensor, torch::Tensor>
flashAttentionForward(const torch::Tensor &qIn, const torch::Tensor &kIn, const torch::Tensor &vIn,
                      bool causal, double scale, int64_t window, const AttentionVariant &variant) {
  auto [q, k, v] = prepare(qIn, kIn, vIn);
#ifdef TESSEL_HAVE_TORCH_CUDA
  c10::cuda::CUDAGuard guard(q.device());
#endif
  int64_t batch = q.size(0), heads = q.size(1), seqQ = q.size(2), seqK = k.size(2), d = q.size(3);
  int64_t kvHeads = k.size(1);
  // (O in q's layout, tokens-major for the model, measured 2% slower at d 128: contiguous.)
  auto out = torch::empty({batch, heads, seqQ, d}, q.options());
  auto lse = torch::empty({batch, heads, seqQ}, q.options().dtype(torch::kFloat32));
  if (out.numel() == 0)
    return {out, lse};
  const Kernels &kernels = kernelsFor(q.scalar_type(), causal, int(q.get_device()), variant.name);
  // A small grid splits the keys into shares, merged by attention_fwd_combine.
  Split split(sharesFor(cdiv(seqQ, 128) * batch * heads, seqK, causal,
                        hasShareTiles(kernels.fwd, d), int(q.get_device())),
              seqK);
  int64_t shares = split.shares;
  torch::Tensor outPart, lsePart;
  if (shares > 1) {
    outPart = torch::empty({shares, batch * heads, seqQ, d}, lse.options());
    lsePart = torch::empty({shares, batch * heads, seqQ}, lse.options());
  }
  std::vector<Arg> args = {out.data_ptr(), lse.data_ptr(),
                           dataOrNull(outPart), dataOrNull(lsePart), q.data_ptr(),
                           k.data_ptr(), v.data_ptr()};
  append(args, variantArgs(variant));
  append(args, {i32(seqQ, "seq_q"), i32(seqK, "seq_k"), int32_t(heads), int32_t(kvHeads),
                int32_t(d), windowArg(window, seqK), float(scale)});
  append(args, strides3(q, "q"));
  append(args, strides3(k, "k"));
  append(args, strides3(v, "v"));
  args.push_back(i32(split.length, "the keys' share"));
  auto grid = [&](const Config &c) {
    return Grid(cdiv(seqQ, c["BLOCK_M"]), batch * heads, shares);
  };
  kernels.fwd.launch(grid, args, currentStream());
  if (shares > 1) {
    std::vector<Arg> merge = {out.data_ptr(), lse.data_ptr(), outPart.data_ptr(),
                              lsePart.data_ptr(), int32_t(seqQ), int32_t(heads), int32_t(d),
                              int32_t(shares)};
    append(merge, strides3(out, "the output"));
    kernels.combine.launch(
        [&](const Config &c) { return Grid(cdiv(seqQ, c["BLOCK_M"]), batch * heads); }, merge,
        currentStream());
  }
  return {out, lse};
}

std::tuple<torch::Tensor, torch::Tensor, torch::Tensor>
flashAttentionBackward(const torch::Tensor &doutIn, const torch::Tensor &qIn,
                       const torch::Tensor &kIn, const torch::Tensor &vIn,
                       const torch::Tensor &out, const torch::Tensor &lse, bool causal,
                       double scale, int64_t window, const AttentionVariant &variant) {
  auto [q, k, v] = prepare(qIn, kIn, vIn);
#ifdef TESSEL_HAVE_TORCH_CUDA
  c10::cuda::CUDAGuard guard(q.device());
#endif
  if (doutIn.sizes() != out.sizes())
    fail("the output gradient has shape " + describe(doutIn) + ", the output " + describe(out));
  torch::Tensor dout = rowsContiguous(doutIn.to(q.scalar_type()));
  int64_t batch = q.size(0), heads = q.size(1), seqQ = q.size(2), seqK = k.size(2), d = q.size(3);
  int64_t kvHeads = k.size(1);
  // The gradients in their input's layout, heads-major or tokens-major (the kernels take
  // their strides), so that autograd need not copy them into it.
  auto dq = gradientLike(q, heads, seqQ);
  // Grouped-query attention: the dK/dV kernel writes one gradient per query head, summed
  // over each group below (as FlashAttention-2; no atomics, deterministic).
  auto dk = gradientLike(k, heads, seqK);
  auto dv = gradientLike(k, heads, seqK);
  auto perKvHead = [&](const torch::Tensor &g) {
    return kvHeads == heads ? g
                            : g.view({batch, kvHeads, heads / kvHeads, seqK, d}).sum(2);
  };
  if (seqQ == 0 || seqK == 0 || batch * heads == 0) {
    dk.zero_(), dv.zero_(), dq.zero_();
    return {dq, perKvHead(dk), perKvHead(dv)};
  }
  const Kernels &kernels = kernelsFor(q.scalar_type(), causal, int(q.get_device()), variant.name);
  CUstream stream = currentStream();
  auto delta = torch::empty({batch, heads, seqQ}, q.options().dtype(torch::kFloat32));
  torch::Tensor o = rowsContiguous(out.to(q.scalar_type()));
  std::vector<Arg> pre = {delta.data_ptr(), o.data_ptr(), dout.data_ptr(),
                          i32(seqQ, "seq_q"), int32_t(heads), int32_t(d)};
  append(pre, strides3(dout, "the output gradient"));
  append(pre, strides3(o, "the output"));
  kernels.preprocess.launch(
      [&](const Config &c) { return Grid(cdiv(seqQ, c["BLOCK_M"]), batch * heads); }, pre, stream);

  std::vector<Arg> tail = variantArgs(variant);
  append(tail, {i32(seqQ, "seq_q"), i32(seqK, "seq_k"), int32_t(heads),
                           int32_t(kvHeads), int32_t(d), windowArg(window, seqK), float(scale)});
  append(tail, strides3(q, "q"));
  append(tail, strides3(k, "k"));
  append(tail, strides3(v, "v"));
  append(tail, strides3(dout, "the output gradient"));
  // A small grid splits dK/dV's queries and dQ's keys into shares: f32 partials, summed
  // by attention_bwd_sum into the gradients.
  int device = int(q.get_device());
  Split querySplit(sharesFor(cdiv(seqK, 128) * batch * heads, seqQ, causal,
                             hasShareTiles(kernels.dkdv, d), device),
                   seqQ);
  Split keySplit(sharesFor(cdiv(seqQ, 128) * batch * heads, seqK, causal,
                           hasShareTiles(kernels.dq, d), device),
                 seqK);
  int64_t kvShares = querySplit.shares, qShares = keySplit.shares;
  auto partial = [&](int64_t shares, int64_t seq) {
    return shares > 1 ? torch::empty({shares, batch * heads, seq, d}, delta.options())
                      : torch::Tensor();
  };
  torch::Tensor dkPart = partial(kvShares, seqK), dvPart = partial(kvShares, seqK);
  torch::Tensor dqPart = partial(qShares, seqQ);
  std::vector<Arg> dkdv = {dk.data_ptr(), dv.data_ptr(), dataOrNull(dkPart), dataOrNull(dvPart),
                           q.data_ptr(), k.data_ptr(), v.data_ptr(), dout.data_ptr(),
                           lse.data_ptr(), delta.data_ptr()};
  append(dkdv, tail);
  append(dkdv, strides3(dk, "dk"));
  dkdv.push_back(i32(querySplit.length, "the queries' share"));
  kernels.dkdv.launch(
      [&](const Config &c) { return Grid(cdiv(seqK, c["BLOCK_N"]), batch * heads, kvShares); },
      dkdv, stream);
  std::vector<Arg> dqArgs = {dq.data_ptr(), dataOrNull(dqPart), q.data_ptr(), k.data_ptr(),
                             v.data_ptr(), dout.data_ptr(), lse.data_ptr(), delta.data_ptr()};
  append(dqArgs, tail);
  append(dqArgs, strides3(dq, "dq"));
  dqArgs.push_back(i32(keySplit.length, "the keys' share"));
  kernels.dq.launch(
      [&](const Config &c) { return Grid(cdiv(seqQ, c["BLOCK_M"]), batch * heads, qShares); },
      dqArgs, stream);
  auto sum = [&](const torch::Tensor &grad, const torch::Tensor &part, int64_t shares,
                 int64_t seq, const char *name) {
    if (shares <= 1)
      return;
    std::vector<Arg> args = {grad.data_ptr(), part.data_ptr(), int32_t(seq), int32_t(heads),
                             int32_t(d), int32_t(shares)};
    append(args, strides3(grad, name));
    kernels.sum.launch(
        [&](const Config &c) { return Grid(cdiv(seq, c["BLOCK_M"]), batch * heads); }, args,
        stream);
  };
  sum(dk, dkPart, kvShares, seqK, "dk");
  sum(dv, dvPart, kvShares, seqK, "dv");
  sum(dq, dqPart, qShares, seqQ, "dq");
  return {dq, perKvHead(dk), perKvHead(dv)};
}

torch::Tensor flashAttention(const torch::Tensor &q, const torch::Tensor &k,
                             const torch::Tensor &v, bool causal, std::optional<double> scale) {
  AttentionOptions options;
  options.causal = causal;
  options.scale = scale;
  return flashAttention(q, k, v, options);
}

torch::Tensor flashAttention(const torch::Tensor &q, const torch::Tensor &k,
                             const torch::Tensor &v, const AttentionOptions &options) {
  if (q.dim() != 4)
    fail("q must be 4-D (batch, heads, seq, head_dim); got " + describe(q));
  checkWindow(options.window);
  double s = options.scale ? *options.scale : 1.0 / std::sqrt(double(q.size(3)));
  // Autocast's casts happen here, outside the autograd function, so that the gradients
  // flow back through them to the f32 inputs.
  auto [qc, kc, vc] = [&] {
    if (!at::autocast::is_autocast_enabled(at::kCUDA))
      return std::tuple{q, k, v};
    auto dtype = at::autocast::get_autocast_dtype(at::kCUDA);
    auto cast = [&](const torch::Tensor &t) {
      return t.scalar_type() == torch::kFloat32 ? t.to(dtype) : t;
    };
    return std::tuple{cast(q), cast(k), cast(v)};
  }();
  if (k.dim() != 4)
    fail("k must be 4-D (batch, kv_heads, seq, head_dim); got " + describe(k));
  AttentionVariant variant = variantOf(options, q, k);
  // Autograd's inputs must be defined tensors: a variant without data passes empty ones.
  for (torch::Tensor *t : {&variant.floats, &variant.ints})
    if (!t->defined())
      *t = torch::empty({0}, q.options().dtype(t == &variant.floats ? torch::kFloat32
                                                                       : torch::kInt32));
  return FlashAttentionFunction::apply(qc, kc, vc, options.causal, s, options.window,
                                       variant.name, variant.floats, variant.ints);
}

void installFlashAttention() {
  model::tesselOps().attention = [](const torch::Tensor &q, const torch::Tensor &k,
                                    const torch::Tensor &v, int64_t window) {
    AttentionOptions options;
    options.causal = true, options.window = window;
    return flashAttention(q, k, v, options);
  };
}

} // namespace tessel::ops
