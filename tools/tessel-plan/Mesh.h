//===- tools/tessel-plan/Mesh.h - When an FSDP x tensor-parallel mesh is compute-bound -*- C++ -*-===//
//
// The forward of one feed-forward layer (two matmuls, d_model x d_ff and back) on a mesh
// of X devices sharding the batch and the weights (FSDP) by Y devices sharding d_ff
// (tensor parallel), in the notation of the Scaling Book (Austin et al., "How to Scale
// Your Model", part 5), for B tokens in all:
//
//   T_math = 4 B D F / (X Y C)                 two matmuls of 2 B D F / (X Y) FLOPs each
//   T_fsdp = 2 b D F / (Y W M_X)               all-gather both weights over X
//   T_tp   = 2 b B D / (X W M_Y)               all-gather and reduce-scatter the activations over Y
//
// with b bytes per element, C FLOP/s per device, W the link bandwidth (bytes/s) and M_X,
// M_Y the mesh axes each dimension spans. The two collectives run on different axes, so
// the layer is compute-bound when T_math >= max(T_fsdp, T_tp):
//
//   B / (X Y) >= b C / (2 Y W M_X)             (FSDP)
//   F         >= b Y C / (2 W M_Y)             (tensor parallel; no batch makes up for it)
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PLAN_MESH_H
#define TESSEL_PLAN_MESH_H

#include <string>

namespace tessel::plan {

struct Hardware {
  std::string name;
  double flopsPerSecond = 0;  ///< C
  double linkBytesPerSecond = 0; ///< W
};
/// "tpu-v5p" (C 4.6e14, W_ici 2 x 9e10 B/s) or "h100" (C 9.89e14 dense bf16, NVLink 4.5e11
/// B/s a direction); throws std::invalid_argument otherwise.
Hardware hardwarePreset(const std::string &name);

struct MeshSetup {
  double dModel = 0, dFF = 0;
  Hardware hardware;
  double fsdp = 1, tensorParallel = 1; ///< X, Y
  double axesX = 1, axesY = 1;         ///< M_X, M_Y
  double bytesPerElement = 2;          ///< communication dtype (bf16)
};

struct MeshPlan {
  double devices = 0; ///< X Y
  /// The smallest tokens per device (and in all) at which T_math >= T_fsdp.
  double computeBoundTokensPerDevice = 0, computeBoundTokens = 0;
  /// Whether T_math >= T_tp can hold at all, and the d_ff it needs.
  bool tensorParallelComputeBound = false;
  double dffNeeded = 0;
  /// Per layer at `tokens` tokens in all, seconds.
  double tokens = 0, mathSeconds = 0, fsdpSeconds = 0, tensorParallelSeconds = 0;
};
/// `tokens`: the global batch at which to report the three times (0: at the compute-bound
/// batch).
MeshPlan planMesh(const MeshSetup &setup, double tokens = 0);

} // namespace tessel::plan

#endif // TESSEL_PLAN_MESH_H
