//===- bench/ops/FlashAttention.h - kernels/flash_attention.tsl as a torch op -*- C++ -*-===//
//
// flashAttention(q, k, v, options) runs Tessel's FlashAttention-2 kernels through
// the runtime (autotuned per sequence lengths and head dim) as a LibTorch autograd
// function. It saves only q, k, v, the output and the per-row log-sum-exp, so its memory is
// linear in the sequence length; the backward recomputes the probabilities.
//
//   q: (batch, heads, seq_q, d), k and v: (batch, kv_heads, seq_k, d) with heads a multiple
//   of kv_heads (grouped-query attention: query heads [g * heads / kv_heads, ...) share
//   key/value head g; kv_heads = heads is multi-head attention); d a multiple of 8 from 8 to
//   256 (between powers of two the next power's tile runs with the head dim masked);
//   bf16, f16 or f32 (through tf32 unless exactF32); any strides (q, k and v may be
//   views of a fused projection) with the last dimension contiguous (otherwise copied).
//   causal: bottom-right aligned when seq_q != seq_k, as FlashAttention-2.
//   Under autocast, f32 inputs run in the autocast dtype (as scaled_dot_product_attention).
//
// Packages come from `packageDir` (kernels/CMakeLists.txt builds
// flash_attention_<dtype>[_causal].tslpkg: bf16, f16, f32 and f32_ieee, and the sm_90a
// builds flash_attention_{bf16,f16}[_causal]_sm90a.tslpkg, wgmma where the tiles allow).
// Score and mask variants (soft-capping, ALiBi, document masks, prefix-LM, ...) run the
// packages compiled from examples/attention/<variant>.tsl, which import the kernels and set
// their score or mask function: flash_attention_<variant>_{bf16,f16}[_causal]_sm90a.tslpkg
// (`ninja tessel-attention-variants`).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_OPS_FLASHATTENTION_H
#define TESSEL_BENCH_OPS_FLASHATTENTION_H

#include <torch/types.h>

#include <optional>
#include <string>
#include <tuple>

namespace tessel::ops {

struct FlashAttentionOptions {
  /// Where flash_attention_*.tslpkg are; empty: the build's kernel package folder.
  std::string packageDir;
  /// Appended to package names: "_sm90a" loads the Hopper (wgmma) builds, "" the
  /// generic ones; "auto": "_sm90a" on a compute capability 9.0 device where that
  /// package exists (bf16 and f16), else "".
  std::string suffix = "auto";
  /// f32 inputs with exact f32 products instead of tf32.
  bool exactF32 = false;
  /// An extra prune condition for the forward, dK/dV and dQ kernels' autotuning (e.g.
  /// "num_stages != 2" to run only the 2-stage tiles; tests use it to cover every tile).
  std::string prune;
  /// Or-ed with `prune` for the forward alone ("not warp_specialize": only its
  /// warp-specialized tiles).
  std::string forwardPrune;
  /// Or-ed with `prune` for the dQ kernel alone (its tiles timed against each other).
  std::string queryGradPrune;
  /// The same for the dK/dV kernel ("SHARED_KV": only the tiles that hold K and V in
  /// registers).
  std::string keyValueGradPrune;
  /// Shares the work is split into when the grid is small (batch x heads x tiles below
  /// the SMs: batch 1, short sequences): the keys for the forward and dQ, the queries for
  /// dK/dV, each share a program's, merged by a second kernel. 0: chosen from the grid and
  /// the device's SMs (docs/attention.md); 1: never split.
  int shares = 0;
};

/// The process-wide options flashAttention() uses (set before the first call).
FlashAttentionOptions &flashAttentionOptions();

/// The package flashAttention() loads for (dtype, causal) on CUDA device `device`, as
/// flash_attention_[<variant>_]<dtype>[_causal]<suffix> (the options' suffix resolved).
std::string flashAttentionPackage(torch::ScalarType dtype, bool causal, int device,
                                  const std::string &variant = "");

/// A score or mask variant as the kernels take it: the example it was compiled from and the
/// data its functions read (f32 and int32, contiguous, on q's device; undefined when unused).
struct AttentionVariant {
  std::string name; ///< "": plain attention
  torch::Tensor floats, ints;
};

/// What an attention call masks and how it scales.
struct AttentionOptions {
  /// Keys after the query's position are hidden (the diagonal aligned bottom-right).
  bool causal = false;
  /// Scores are q k^T * scale; default 1/sqrt(d).
  std::optional<double> scale;
  /// Sliding window: a query sees only the `window` keys before its position and the key
  /// at it (FlashAttention's window_size left; Mistral's sliding window with causal). Key
  /// tiles wholly outside are never loaded, so the cost follows the window. -1: no window.
  int64_t window = -1;
  /// Score and mask variants, one a call (no package combines two):
  /// Logit soft-capping (Gemma 2): scores become softcap * tanh(score / softcap). 0: none.
  double softcap = 0;
  /// ALiBi: score + slopes[h] * (key position - query position); floating [heads].
  torch::Tensor alibiSlopes;
  /// Document masking of packed sequences: a query sees only the keys of its own document,
  /// a run of equal ids; integer document ids [batch, seq] (queries and keys one sequence).
  /// Tiles outside a query tile's documents are skipped.
  torch::Tensor documentIds;
  /// Prefix-LM: a query sees the first prefixLengths[b] keys and causally after them;
  /// integer [batch]; causal must be false (the mask holds it).
  torch::Tensor prefixLengths;
  /// Block-sparse attention (FlexAttention's BlockMask from blocks): which 128 x 128 blocks
  /// of the scores exist, nonzero for kept, [batch or 1, heads or 1, cdiv(seq_q, 128),
  /// cdiv(seq_k, 128)] (heads: q's). Blocks left out are never loaded (the cost follows the
  /// blocks kept); with causal, the diagonal's mask applies inside the kept blocks too.
  /// A query row with no kept block gets a zero output.
  torch::Tensor blockMask;
  /// Any other variant compiled from examples/attention/<name>.tsl, with its data.
  AttentionVariant variant;
};

/// softmax(q k^T * scale [+ masks]) v with autograd.
torch::Tensor flashAttention(const torch::Tensor &q, const torch::Tensor &k,
                             const torch::Tensor &v, const AttentionOptions &options);

/// Packed sequences (FlashAttention's varlen call): sequence i at rows [cu_seqlens_q[i],
/// cu_seqlens_q[i + 1]) of q and [cu_seqlens_k[i], cu_seqlens_k[i + 1]) of k and v (integer,
/// from 0 rising to the totals; lengths may differ between q and k, and be 0). A query sees
/// only its own sequence's keys; causal aligns each sequence's diagonal bottom-right, as
/// FlashAttention-2; window as AttentionOptions::window, per sequence. Made once per batch
/// and shared by every layer's call (as FlexAttention's BlockMask): packSequences checks the
/// lengths (one read to the host) and computes, on the lengths' device (give them on the
/// GPU), each query's key span and each key's query span, which examples/attention/varlen.tsl
/// reads.
struct PackedSequences {
  torch::Tensor cuSeqlensQ, cuSeqlensK; ///< int64 on the device
  int64_t totalQ = 0, totalK = 0;       ///< tokens: the last entries
  bool causal = false;
  int64_t window = -1;
  torch::Tensor spans; ///< int32 [key_lo (total_q), key_hi (total_q), query_lo, query_hi (total_k)]
};
PackedSequences packSequences(const torch::Tensor &cuSeqlensQ, const torch::Tensor &cuSeqlensK,
                              bool causal = false, int64_t window = -1);

/// Attention over packed sequences: q (total_q, heads, d), k and v (total_k, kv_heads, d),
/// returns (total_q, heads, d). Runs the `varlen` variant's package as a batch of one: tiles
/// of other sequences are skipped, so the cost follows the pairs kept, not total_q x total_k.
torch::Tensor flashAttentionVarlen(const torch::Tensor &q, const torch::Tensor &k,
                                   const torch::Tensor &v, const PackedSequences &packed,
                                   std::optional<double> scale = std::nullopt);

/// The same from the cumulative lengths, packed on every call (options: causal, window and
/// scale; no other variant).
torch::Tensor flashAttentionVarlen(const torch::Tensor &q, const torch::Tensor &k,
                                   const torch::Tensor &v, const torch::Tensor &cuSeqlensQ,
                                   const torch::Tensor &cuSeqlensK,
                                   const AttentionOptions &options = {});

/// The same with only the causal mask and the scale (default 1/sqrt(d)).
torch::Tensor flashAttention(const torch::Tensor &q, const torch::Tensor &k,
                             const torch::Tensor &v, bool causal,
                             std::optional<double> scale = std::nullopt);

/// The forward alone, no autograd: (output, lse) with lse (batch, heads, seq_q) in f32,
/// natural log; +inf for a row that sees no key.
std::tuple<torch::Tensor, torch::Tensor>
flashAttentionForward(const torch::Tensor &q, const torch::Tensor &k, const torch::Tensor &v,
                      bool causal, double scale, int64_t window = -1,
                      const AttentionVariant &variant = {});

/// The backward alone: (dq, dk, dv) from the forward's inputs, output and lse.
std::tuple<torch::Tensor, torch::Tensor, torch::Tensor>
flashAttentionBackward(const torch::Tensor &dout, const torch::Tensor &q, const torch::Tensor &k,
                       const torch::Tensor &v, const torch::Tensor &out, const torch::Tensor &lse,
                       bool causal, double scale, int64_t window = -1,
                       const AttentionVariant &variant = {});

/// Installs flashAttention (causal, default scale) as the model's TesselOps::attention.
void installFlashAttention();

} // namespace tessel::ops

#endif // TESSEL_BENCH_OPS_FLASHATTENTION_H
