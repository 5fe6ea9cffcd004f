//===- bench/distributed/ConsolidatedCheckpoint.h - One file for any world size -*- C++ -*-===//
//
// The consolidated checkpoint of the sharded strategies (ShardedOptimizer's ZeRO modes and
// FullySharded): one LibTorch archive holding every parameter ("param_<i>", in its shape)
// and every parameter's optimizer state ("state_<i>_<name>", e.g. state_3_exp_avg; per-element
// entries in the parameter's shape, the step count whole), with meta_num_params and
// meta_world_size. The file does not depend on how the state was sharded, so it loads at any
// world size and under either strategy, given the same parameters in the same order.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_DISTRIBUTED_CONSOLIDATEDCHECKPOINT_H
#define TESSEL_BENCH_DISTRIBUTED_CONSOLIDATEDCHECKPOINT_H

#include "bench/distributed/ProcessGroup.h"
#include "bench/distributed/ShardedOptimizer.h"

#include <torch/serialize/input-archive.h>

#include <string>
#include <vector>

namespace tessel::dist {

/// Whether a state entry holds one value per parameter element (moments, momentum
/// buffers) rather than one per parameter (the step count), so that it can be split and
/// joined along the elements.
bool perElementState(const std::string &name);

/// A rank's share of one parameter's optimizer state: elements [offset, offset + numel)
/// of parameter `shard.param`, flattened; per-element entries hold exactly those.
struct StatePiece {
  LocalShard shard;
  ParamState state;
};

/// Collective: every rank sends its pieces to rank 0, which writes `path` with `params`
/// (full values; only rank 0's are read) and the joined state.
void saveConsolidated(ProcessGroup &pg, const std::string &path,
                      const std::vector<torch::Tensor> &params, const std::vector<StatePiece> &mine);

/// This process alone: copies every parameter's saved value into `params` (in the order
/// they were saved, shapes checked); the optimizer state is not read.
void loadParameters(const std::string &path, const std::vector<torch::Tensor> &params);

class ConsolidatedCheckpoint {
public:
  /// Collective: rank 0 reads `path` and broadcasts it (no shared file system needed).
  /// Throws unless it holds `numParams` parameters.
  static ConsolidatedCheckpoint load(ProcessGroup &pg, const std::string &path, size_t numParams);
  /// This process reads `path` alone (a single-process run, e.g. tessel-bench model).
  static ConsolidatedCheckpoint read(const std::string &path, size_t numParams);
  /// Parameter i's saved value; throws unless its shape is `shape`.
  torch::Tensor param(size_t i, c10::IntArrayRef shape) const;
  /// The state of elements [offset, offset + numel) of parameter shard.param: per-element
  /// entries flattened and sliced, the others whole. Empty before any step was saved.
  ParamState stateOf(const LocalShard &shard) const;

private:
  ConsolidatedCheckpoint() = default;
  static ConsolidatedCheckpoint fromBytes(const std::string &path, torch::Tensor bytes, size_t numParams);
  std::string path_;
  std::vector<std::string> keys_;
  torch::Tensor bytes_; ///< the archive, kept for reading entries on demand
  std::shared_ptr<torch::serialize::InputArchive> archive_;
};

} // namespace tessel::dist

#endif // TESSEL_BENCH_DISTRIBUTED_CONSOLIDATEDCHECKPOINT_H
