// test/gpu/runtime_smoke/vector_add.cu - source of vector_add.ptx (test data).
// Regenerate: nvcc -ptx -arch=sm_80 vector_add.cu -o vector_add.ptx
extern "C" __global__ void vector_add(float *out, const float *a,
                                      const float *b, int n, float alpha) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = a[i] + alpha * b[i];
}
