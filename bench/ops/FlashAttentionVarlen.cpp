//===- bench/ops/FlashAttentionVarlen.cpp - packed sequences (varlen) ----------===//
//
// FlashAttention's varlen call on Tessel's kernels: the sequences packed along one axis run
// as a batch of one through the `varlen` variant (examples/attention/varlen.tsl), whose mask
// keeps each query to its own sequence's keys. Here the cumulative lengths become the
// per-token spans that variant reads, with the causal diagonal (bottom-right in each
// sequence, as FlashAttention-2) and the sliding window folded in.
//
//===----------------------------------------------------------------------===//
#include "bench/ops/FlashAttention.h"
#include "bench/ops/OpSupport.h"

#include <torch/torch.h>

#include <algorithm>
#include <string>

namespace tessel::ops {
namespace {

[[noreturn]] void fail(const std::string &message) { failOp("flash_attention_varlen", message); }

/// cu_seqlens checked on the host: 1-D integers rising from 0. Returns the total.
int64_t checkCumulative(const torch::Tensor &cu, const char *name) {
  if (cu.dim() != 1 || cu.size(0) < 2 || cu.is_floating_point() || cu.is_complex())
    fail(std::string(name) + " must be 1-D integers [sequences + 1]; got " + describe(cu));
  torch::Tensor host = cu.to(torch::kCPU, torch::kLong);
  auto at = host.accessor<int64_t, 1>();
  if (at[0] != 0)
    fail(std::string(name) + " must start at 0; got " + std::to_string(at[0]));
  for (int64_t i = 1; i < cu.size(0); ++i)
    if (at[i] < at[i - 1])
      fail(std::string(name) + " must not decrease; entry " + std::to_string(i) + " is " +
           std::to_string(at[i]) + " after " + std::to_string(at[i - 1]));
  return at[cu.size(0) - 1];
}

/// For each token of one side, the span [lo, hi) of the other side it pairs with: tokens of
/// its own sequence, limited by the causal diagonal and the window. `own` and `other` are the
/// two sides' cumulative lengths; `before` and `after` bound the partner's offset from the
/// token's mirror on the diagonal (-1: no bound).
std::pair<torch::Tensor, torch::Tensor> spans(const torch::Tensor &own, const torch::Tensor &other,
                                              int64_t total, int64_t before, int64_t after) {
  torch::Tensor token = torch::arange(total, own.options());
  torch::Tensor seq = torch::searchsorted(own, token, /*out_int32=*/false, /*right=*/true) - 1;
  torch::Tensor first = own.index_select(0, seq), start = other.index_select(0, seq);
  torch::Tensor end = other.index_select(0, seq + 1);
  torch::Tensor ownLength = own.index_select(0, seq + 1) - first;
  // The diagonal runs bottom-right: a query at offset i sees keys j with i + (Lk - Lq) -
  // window <= j <= i + (Lk - Lq) (causal); so a key at offset j is seen by queries from
  // j + (Lq - Lk) to j + (Lq - Lk) + window. Either way the mirror is offset + (other's
  // length - own's length).
  torch::Tensor mirror = token - first + (end - start) - ownLength + start;
  torch::Tensor lo = before < 0 ? start : mirror - before;
  torch::Tensor hi = after < 0 ? end : mirror + after + 1;
  auto clamp = [&](const torch::Tensor &t) { return torch::minimum(torch::maximum(t, start), end); };
  return {clamp(lo), clamp(hi)};
}

} // namespace

PackedSequences packSequences(const torch::Tensor &cuSeqlensQ, const torch::Tensor &cuSeqlensK,
                              bool causal, int64_t window) {
  if (window < -1)
    fail("window must be -1 (none) or at least 0; got " + std::to_string(window));
  int64_t totalQ = checkCumulative(cuSeqlensQ, "cu_seqlens_q");
  int64_t totalK = checkCumulative(cuSeqlensK, "cu_seqlens_k");
  if (cuSeqlensQ.size(0) != cuSeqlensK.size(0))
    fail("cu_seqlens_q and cu_seqlens_k must count the same sequences; got " +
         describe(cuSeqlensQ) + " and " + describe(cuSeqlensK));
  // A window past every sequence hides nothing; clamped, its span arithmetic stays in range.
  window = std::min(window, std::max(totalQ, totalK));
  auto device = cuSeqlensQ.is_cuda() ? cuSeqlensQ.device() : cuSeqlensK.device();
  auto longs = torch::TensorOptions().dtype(torch::kLong).device(device);
  PackedSequences packed{cuSeqlensQ.to(longs), cuSeqlensK.to(longs), totalQ, totalK, causal,
                         window, {}};
  // Queries: keys from the window's edge to the diagonal; keys: the mirror image.
  int64_t diagonal = causal ? 0 : -1;
  auto [keyLo, keyHi] = spans(packed.cuSeqlensQ, packed.cuSeqlensK, totalQ, window, diagonal);
  auto [queryLo, queryHi] = spans(packed.cuSeqlensK, packed.cuSeqlensQ, totalK, diagonal, window);
  packed.spans = torch::cat({keyLo, keyHi, queryLo, queryHi}).to(torch::kInt32).contiguous();
  return packed;
}

torch::Tensor flashAttentionVarlen(const torch::Tensor &q, const torch::Tensor &k,
                                   const torch::Tensor &v, const PackedSequences &packed,
                                   std::optional<double> scale) {
  if (q.dim() != 3 || k.dim() != 3 || v.dim() != 3)
    fail("q, k and v must be 3-D (total tokens, heads, head_dim); got q " + describe(q) +
         ", k " + describe(k) + ", v " + describe(v));
  if (!packed.spans.defined() || packed.spans.numel() != 2 * (packed.totalQ + packed.totalK))
    fail("the packed sequences were not made by packSequences (their spans hold " +
         std::to_string(packed.spans.defined() ? packed.spans.numel() : 0) + " entries)");
  if (packed.totalQ != q.size(0) || packed.totalK != k.size(0))
    fail("the packed sequences hold " + std::to_string(packed.totalQ) + " query and " +
         std::to_string(packed.totalK) + " key tokens; got q " + describe(q) + ", k " +
         describe(k));
  AttentionOptions options;
  options.scale = scale;
  options.variant = {"varlen", {}, packed.spans.to(q.device())};
  // (total, heads, d) as a batch of one (1, heads, total, d): a view, no copy.
  auto batchOfOne = [](const torch::Tensor &t) { return t.unsqueeze(0).transpose(1, 2); };
  torch::Tensor out = flashAttention(batchOfOne(q), batchOfOne(k), batchOfOne(v), options);
  return out.squeeze(0).transpose(0, 1).contiguous();
}

torch::Tensor flashAttentionVarlen(const torch::Tensor &q, const torch::Tensor &k,
                                   const torch::Tensor &v, const torch::Tensor &cuSeqlensQ,
                                   const torch::Tensor &cuSeqlensK,
                                   const AttentionOptions &options) {
  if (options.softcap != 0 || options.alibiSlopes.defined() || options.documentIds.defined() ||
      options.prefixLengths.defined() || options.blockMask.defined() ||
      !options.variant.name.empty())
    fail("packed sequences take causal, scale and window only (no package combines them with "
         "another score or mask variant)");
  return flashAttentionVarlen(q, k, v,
                              packSequences(cuSeqlensQ, cuSeqlensK, options.causal, options.window),
                              options.scale);
}

} // namespace tessel::ops
