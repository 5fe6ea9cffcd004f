//===- bench/model/Nvtx.h - NVTX ranges that nsys shows ---------*- C++ -*-===//
//
// Header-only NVTX 3 underneath (no library to link, nothing needed at run
// time): without a profiler attached a range costs a branch.
//
//   { tessel::model::NvtxRange range("forward"); ... }
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_BENCH_MODEL_NVTX_H
#define TESSEL_BENCH_MODEL_NVTX_H

namespace tessel::model {

void nvtxPush(const char *name);
void nvtxPop();

/// Pushes a range on construction and pops it on destruction.
class NvtxRange {
public:
  explicit NvtxRange(const char *name) { nvtxPush(name); }
  ~NvtxRange() { nvtxPop(); }
  NvtxRange(const NvtxRange &) = delete;
  NvtxRange &operator=(const NvtxRange &) = delete;
};

} // namespace tessel::model

#endif // TESSEL_BENCH_MODEL_NVTX_H
