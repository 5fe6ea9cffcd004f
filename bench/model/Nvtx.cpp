//===- bench/model/Nvtx.cpp - NVTX ranges that nsys shows -----------------===//

#include "bench/model/Nvtx.h"

#ifdef TESSEL_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#endif

namespace tessel::model {

#ifdef TESSEL_HAVE_NVTX
void nvtxPush(const char *name) { nvtxRangePushA(name); }
void nvtxPop() { nvtxRangePop(); }
#else
void nvtxPush(const char *) {}
void nvtxPop() {}
#endif

} // namespace tessel::model
