//===- runtime/PackageBuilder.h - packages around PTX built in code -*- C++ -*-===//
//
// tesselc writes packages; this builds one in code around PTX that tesselc did not
// write (nvcc output, hand-written PTX), for the runtime's tests and the launch
// benchmark:
//
//   PackageBuilder builder("scale_add.tslpkg", "nvcc (test data)");
//   builder.kernel("scale_add", {{"out", ParamKind::Pointer, DType::F32}, ...}, {"ELEMS"}, {"n"});
//   builder.variant("scale_add_1", ptx, {{"ELEMS", Json(1)}}).numWarps = 8;
//   Package package = builder.build();
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_PACKAGEBUILDER_H
#define TESSEL_RUNTIME_PACKAGEBUILDER_H

#include "runtime/Error.h"
#include "runtime/Package.h"

#include <string>
#include <utility>
#include <vector>

namespace tessel {

class PackageBuilder {
public:
  explicit PackageBuilder(std::string origin, std::string compiler = "built in code") {
    package_.origin = std::move(origin);
    package_.compiler = std::move(compiler);
  }

  /// Starts a kernel: the variants added next are its own.
  PackageBuilder &kernel(std::string name, std::vector<ParamInfo> params,
                         std::vector<std::string> constexprParams = {},
                         std::vector<std::string> autotuneKey = {}) {
    KernelInfo kernel;
    kernel.name = std::move(name);
    kernel.params = std::move(params);
    kernel.constexprParams = std::move(constexprParams);
    kernel.autotuneKey = std::move(autotuneKey);
    package_.kernels.push_back(std::move(kernel));
    return *this;
  }

  /// A variant (arch sm_80, 4 warps, one stage, no shared memory, generic) of the
  /// current kernel's configuration `config` (-1: one past the last configuration so
  /// far). The reference stays valid until the next variant() or kernel().
  Variant &variant(std::string entry, std::string ptx, Json::Object constexprs = {},
                   int config = -1) {
    KernelInfo &kernel = current();
    Variant v;
    v.config = config >= 0 ? config : kernel.configCount();
    v.constexprs = std::move(constexprs);
    v.arch = "sm_80";
    v.entry = std::move(entry);
    v.ptx = std::move(ptx);
    kernel.variants.push_back(std::move(v));
    return kernel.variants.back();
  }

  KernelInfo &current() {
    if (package_.kernels.empty())
      throw Error("PackageBuilder: variant() before kernel()");
    return package_.kernels.back();
  }

  /// The package, validated as Package::parse would (throws).
  Package build() const {
    package_.validate();
    return package_;
  }

private:
  Package package_;
};

} // namespace tessel

#endif // TESSEL_RUNTIME_PACKAGEBUILDER_H
