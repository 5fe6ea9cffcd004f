//===- tools/tessel-plan/Mesh.cpp - When an FSDP x tensor-parallel mesh is compute-bound -===//

#include "tools/tessel-plan/Mesh.h"

#include <stdexcept>

namespace tessel::plan {

Hardware hardwarePreset(const std::string &name) {
  if (name == "tpu-v5p")
    return {name, 4.6e14, 2 * 9e10};
  if (name == "h100")
    return {name, 9.89e14, 4.5e11};
  throw std::invalid_argument("unknown hardware '" + name + "' (expected tpu-v5p or h100)");
}

MeshPlan planMesh(const MeshSetup &s, double tokens) {
  const Hardware &h = s.hardware;
  if (!(s.dModel > 0 && s.dFF > 0 && h.flopsPerSecond > 0 && h.linkBytesPerSecond > 0 &&
        s.fsdp >= 1 && s.tensorParallel >= 1 && s.axesX > 0 && s.axesY > 0 && s.bytesPerElement > 0))
    throw std::invalid_argument("mesh: sizes, FLOP rate, bandwidth, X, Y, M_X, M_Y and bytes "
                                "must be positive (X, Y >= 1)");
  double b = s.bytesPerElement, c = h.flopsPerSecond, w = h.linkBytesPerSecond;
  double x = s.fsdp, y = s.tensorParallel;
  MeshPlan p;
  p.devices = x * y;
  p.computeBoundTokensPerDevice = b * c / (2 * y * w * s.axesX);
  p.computeBoundTokens = p.computeBoundTokensPerDevice * p.devices;
  p.dffNeeded = b * y * c / (2 * w * s.axesY);
  p.tensorParallelComputeBound = s.dFF >= p.dffNeeded;
  p.tokens = tokens > 0 ? tokens : p.computeBoundTokens;
  p.mathSeconds = 4 * p.tokens * s.dModel * s.dFF / (x * y * c);
  p.fsdpSeconds = 2 * b * s.dModel * s.dFF / (y * w * s.axesX);
  p.tensorParallelSeconds = 2 * b * p.tokens * s.dModel / (x * w * s.axesY);
  return p;
}

} // namespace tessel::plan
