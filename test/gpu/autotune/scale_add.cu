// test/gpu/autotune/scale_add.cu - source of scale_add.ptx (test data for the
// autotuner's GPU tests and tessel-launch-bench). Regenerate:
//   nvcc -ptx -arch=sm_80 scale_add.cu -o scale_add.ptx
// out = out * alpha + x, in place (the tuner must restore `out`), with
// ELEMS elements per thread; scale_add_slow spins ~50 us per block first, a
// configuration the tuner must never pick; noop does nothing (launch overhead).
template <int ELEMS>
__device__ void scaleAdd(float *out, const float *x, int n, float alpha) {
  int base = (blockIdx.x * blockDim.x) * ELEMS + threadIdx.x;
#pragma unroll
  for (int e = 0; e < ELEMS; ++e) {
    int i = base + e * blockDim.x;
    if (i < n)
      out[i] = out[i] * alpha + x[i];
  }
}

extern "C" __global__ void scale_add_1(float *out, const float *x, int n, float alpha) {
  scaleAdd<1>(out, x, n, alpha);
}
extern "C" __global__ void scale_add_4(float *out, const float *x, int n, float alpha) {
  scaleAdd<4>(out, x, n, alpha);
}
extern "C" __global__ void scale_add_8(float *out, const float *x, int n, float alpha) {
  scaleAdd<8>(out, x, n, alpha);
}
extern "C" __global__ void scale_add_slow(float *out, const float *x, int n, float alpha) {
  long long start = clock64();
  while (clock64() - start < 100000) {
  }
  scaleAdd<1>(out, x, n, alpha);
}
extern "C" __global__ void noop(float *out, const float *x, int n, float alpha) {}
