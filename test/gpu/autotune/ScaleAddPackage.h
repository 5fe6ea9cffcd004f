//===- test/gpu/autotune/ScaleAddPackage.h - A tunable package from nvcc PTX -*- C++ -*-===//
//
// Builds a multi-config package around scale_add.ptx (nvcc output, so the GPU
// tests and tessel-launch-bench need no compiler): out = out * alpha + x in
// place, ELEMS elements per thread, grid = cdiv(n, ELEMS * num_warps * 32).
//
//   config 0: ELEMS=1, 4 warps, scale_add_slow (spins first: never the fastest)
//   config 1: ELEMS=1, 8 warps
//   config 2: ELEMS=4, 4 warps
//   config 3: ELEMS=8, 4 warps, asks for 1 GiB of shared memory (never fits)
//   config 4: ELEMS=8, 2 warps
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_TEST_GPU_AUTOTUNE_SCALEADDPACKAGE_H
#define TESSEL_TEST_GPU_AUTOTUNE_SCALEADDPACKAGE_H

#include "package/PackageBuilder.h"
#include "runtime/Runtime.h"

namespace tessel::test {

inline Package scaleAddPackage(const std::string &ptxPath, bool restore = true) {
  std::string ptx = readFile(ptxPath);
  PackageBuilder builder("scale_add.tslpkg", "nvcc (test data)");
  builder.kernel("scale_add",
                 {{"out", ParamKind::Pointer, DType::F32},
                  {"x", ParamKind::Pointer, DType::F32},
                  {"n", ParamKind::Scalar, DType::I32},
                  {"alpha", ParamKind::Scalar, DType::F32}},
                 {"ELEMS"}, {"n"});
  if (restore)
    builder.current().autotuneRestore = {"out"};
  struct Spec {
    const char *entry;
    int elems, warps;
    int64_t shared;
  };
  const Spec specs[] = {{"scale_add_slow", 1, 4, 0},
                        {"scale_add_1", 1, 8, 0},
                        {"scale_add_4", 4, 4, 0},
                        {"scale_add_8", 8, 4, int64_t(1) << 30},
                        {"scale_add_8", 8, 2, 0}};
  for (const Spec &spec : specs) {
    builder.config({{"ELEMS", Json(spec.elems)}}, spec.warps);
    Variant &v = builder.variant(spec.entry, ptx);
    v.sharedBytes = spec.shared;
  }
  return builder.build();
}

/// The grid of scale_add for n elements under config c.
inline Grid scaleAddGrid(int64_t n, const Config &c) {
  return cdiv(n, c["ELEMS"] * c.numWarps * 32);
}

} // namespace tessel::test

#endif // TESSEL_TEST_GPU_AUTOTUNE_SCALEADDPACKAGE_H
