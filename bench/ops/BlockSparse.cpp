//===- bench/ops/BlockSparse.cpp - A block mask as the kernels read it ----------===//
//
// The kernels loop over ranges of keys (queries): a block row's kept blocks become runs,
// each a range, so that a sparse mask costs its kept blocks plus one loop start a run.
//
//===----------------------------------------------------------------------===//
#include "bench/ops/BlockSparse.h"
#include "bench/ops/OpSupport.h"

#include <torch/torch.h>

#include <limits>
#include <sstream>
#include <vector>

namespace tessel::ops {
namespace {

/// Per line of `kept` [lines, n] (bool), the number of runs of kept entries, then n (first,
/// end) pairs, the runs first and in order (the rest hold n): [lines, 1 + 2n] int32.
torch::Tensor runsOf(const torch::Tensor &kept) {
  int64_t lines = kept.size(0), n = kept.size(1);
  torch::Tensor padded = torch::constant_pad_nd(kept.to(torch::kInt32), {1, 1});
  torch::Tensor here = padded.narrow(1, 1, n) != 0;
  torch::Tensor starts = here & (padded.narrow(1, 0, n) == 0);
  torch::Tensor ends = here & (padded.narrow(1, 2, n) == 0);
  torch::Tensor at = torch::arange(n, kept.options().dtype(torch::kInt32)).expand({lines, n});
  // A line's run starts in order, then n for the rest: sorting the positions does both.
  torch::Tensor first = std::get<0>(torch::where(starts, at, n).sort(1));
  torch::Tensor end = std::get<0>(torch::where(ends, at + 1, n).sort(1));
  torch::Tensor count = starts.sum(1, /*keepdim=*/true, torch::kInt32);
  return torch::cat({count, torch::stack({first, end}, 2).reshape({lines, 2 * n})}, 1);
}

} // namespace

torch::Tensor blockSparseInts(const std::string &op, const torch::Tensor &blocks, int64_t batch,
                              int64_t heads, int64_t seqQ, int64_t seqK) {
  int64_t qb = (seqQ + kMaskBlock - 1) / kMaskBlock, kb = (seqK + kMaskBlock - 1) / kMaskBlock;
  if (blocks.dim() != 4 || (blocks.size(0) != 1 && blocks.size(0) != batch) ||
      (blocks.size(1) != 1 && blocks.size(1) != heads) || blocks.size(2) != qb ||
      blocks.size(3) != kb || blocks.is_floating_point() || blocks.is_complex()) {
    std::ostringstream want;
    want << "[" << batch << " or 1, " << heads << " or 1, " << qb << ", " << kb << "]";
    failOp(op, "block_mask must be bool or integer " + want.str() +
                   " (blocks of " + std::to_string(kMaskBlock) + " queries x " +
                   std::to_string(kMaskBlock) + " keys); got " + describe(blocks));
  }
  int64_t bm = blocks.size(0), hm = blocks.size(1);
  torch::Tensor kept = blocks != 0;
  torch::Tensor keyRuns = runsOf(kept.reshape({bm * hm * qb, kb}));
  torch::Tensor queryRuns = runsOf(kept.transpose(2, 3).reshape({bm * hm * kb, qb}));
  int64_t columns = 8 + keyRuns.numel(), table = columns + queryRuns.numel();
  if (table + kept.numel() > std::numeric_limits<int32_t>::max())
    failOp(op, "block_mask of " + describe(blocks) + " needs " +
                   std::to_string(table + kept.numel()) +
                   " ints of runs, past the kernels' 32-bit offsets");
  // The header: the table's extents, its strides per batch and head (0 where one table
  // serves them all), where the column runs and the table start, the block's side.
  torch::Tensor header =
      torch::tensor(std::vector<int64_t>{qb, kb, bm > 1 ? hm : 0, hm > 1 ? 1 : 0, columns,
                                         table, kMaskBlock, 0},
                    torch::kInt32)
          .to(blocks.device());
  return torch::cat({header, keyRuns.flatten(), queryRuns.flatten(),
                     kept.to(torch::kInt32).flatten()})
      .contiguous();
}

} // namespace tessel::ops
