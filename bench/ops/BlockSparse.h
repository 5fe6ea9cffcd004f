//===- bench/ops/BlockSparse.h - A block mask as the kernels read it -*- C++ -*-===//
//
// Block-sparse attention (AttentionOptions::blockMask) runs
// examples/attention/block_sparse.tsl, whose tile loops go over runs of kept blocks. This
// turns the caller's table of kept blocks into those runs, on the table's device.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_OPS_BLOCKSPARSE_H
#define TESSEL_BENCH_OPS_BLOCKSPARSE_H

#include <torch/types.h>

#include <string>

namespace tessel::ops {

/// The side of a block of the mask: every tile of the attention kernels fits in one.
constexpr int64_t kMaskBlock = 128;

/// The `block_sparse` variant's ints for `blocks` (nonzero: kept), [batch or 1, heads or 1,
/// cdiv(seqQ, 128), cdiv(seqK, 128)], computed on its device: a header, each block row's
/// runs of kept key blocks, each block column's runs of kept query blocks, and the table
/// (the layout is the example's). Throws std::invalid_argument naming `op` for a table of
/// another shape, floating point, or too large for the kernels' 32-bit offsets.
torch::Tensor blockSparseInts(const std::string &op, const torch::Tensor &blocks, int64_t batch,
                              int64_t heads, int64_t seqQ, int64_t seqK);

} // namespace tessel::ops

#endif // TESSEL_BENCH_OPS_BLOCKSPARSE_H
