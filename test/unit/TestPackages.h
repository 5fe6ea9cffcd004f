//===- test/unit/TestPackages.h - Sample packages for runtime tests -*- C++ -*-===//
#ifndef TESSEL_TEST_UNIT_TESTPACKAGES_H
#define TESSEL_TEST_UNIT_TESTPACKAGES_H

#include "package/Package.h"

namespace tessel::test {

/// A softmax-like kernel: 2 configs, each with a generic and a specialised
/// variant; config 1 also has an sm_90a variant.
inline Package samplePackage() {
  Package package;
  package.origin = "softmax.tslpkg";
  package.compiler = "tesselc 0.1.0";
  package.source = "kernels/softmax.tsl";
  package.sourceHash = "abc123";
  KernelInfo kernel;
  kernel.name = "softmax";
  kernel.params = {{"out", ParamKind::Pointer, DType::F32},
                   {"inp", ParamKind::Pointer, DType::F32},
                   {"stride", ParamKind::Scalar, DType::I32},
                   {"n_rows", ParamKind::Scalar, DType::I64},
                   {"n_cols", ParamKind::Scalar, DType::I32}};
  kernel.constexprParams = {"BLOCK"};
  kernel.autotuneKey = {"n_cols"};
  auto variant = [](int config, std::string arch, std::vector<std::string> divisible) {
    Variant v;
    v.config = config;
    v.sharedBytes = 64;
    v.arch = std::move(arch);
    v.entry = "softmax";
    v.divisibleBy16 = std::move(divisible);
    v.ptx = "// PTX for config " + std::to_string(config) + "\n.version 8.0\n";
    return v;
  };
  kernel.addConfig({{"BLOCK", Json(1024)}}, 4).variants = {
      variant(0, "sm_80", {}),
      variant(0, "sm_80", {"out", "inp", "stride", "n_cols"}),
  };
  kernel.addConfig({{"BLOCK", Json(2048)}}, 8).variants = {
      variant(1, "sm_80", {}),
      variant(1, "sm_80", {"out", "inp"}),
      variant(1, "sm_90a", {"out", "inp"}),
  };
  package.kernels.push_back(kernel);

  KernelInfo add;
  add.name = "add";
  add.params = {{"x", ParamKind::Pointer, DType::F16},
                {"n", ParamKind::Scalar, DType::I32}};
  add.addConfig({}).variants = {variant(0, "sm_80", {})};
  package.kernels.push_back(add);
  return package;
}

} // namespace tessel::test

#endif // TESSEL_TEST_UNIT_TESTPACKAGES_H
