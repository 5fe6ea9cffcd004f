// The example project's program: loads the package tessel_add_kernels() built, launches
// the autotuned kernel on the GPU and checks the answer. Without a GPU it says why and
// exits 0 (the build is what CI checks).
#include "runtime/Runtime.h"

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
  tessel::Package package = tessel::Package::load(std::string(TESSEL_KERNELS_DIR) + "/scale_shift.tslpkg");
  std::printf("loaded %s: kernel %s\n", package.origin.c_str(),
              package.kernel("scale_shift").signature().c_str());
  if (!tessel::Driver::isAvailable()) {
    std::printf("no GPU (%s): not launching\n", tessel::Driver::unavailableReason().c_str());
    return 0;
  }
  tessel::Driver &driver = tessel::Driver::get();
  driver.ensureCurrent(0);
  tessel::TunedKernel kernel = tessel::TunedKernel::load(package, "scale_shift");
  const int64_t n = 1000003;
  std::vector<float> x(n), y(n, 0.f);
  for (int64_t i = 0; i < n; ++i)
    x[i] = float(i % 1000) * 0.001f;
  CUdeviceptr dx = 0, dy = 0;
  driver.check(driver.memAlloc(&dx, n * sizeof(float)), "cuMemAlloc");
  driver.check(driver.memAlloc(&dy, n * sizeof(float)), "cuMemAlloc");
  driver.check(driver.memcpyHtoD(dx, x.data(), n * sizeof(float)), "cuMemcpyHtoD");
  kernel.launch([&](const tessel::Config &c) { return tessel::cdiv(n, c["BLOCK"]); },
                {tessel::Arg::pointer(dy), tessel::Arg::pointer(dx), 2.0f, 0.5f, n});
  driver.check(driver.ctxSynchronize(), "cuCtxSynchronize");
  driver.check(driver.memcpyDtoH(y.data(), dy, n * sizeof(float)), "cuMemcpyDtoH");
  driver.memFree(dx);
  driver.memFree(dy);
  for (int64_t i = 0; i < n; ++i)
    if (std::abs(y[i] - (2.0f * x[i] + 0.5f)) > 1e-6f) {
      std::printf("wrong: y[%lld] = %g\n", (long long)i, y[i]);
      return 1;
    }
  std::printf("scale_shift: %lld elements right\n", (long long)n);
  return 0;
}
