//===- package/PackageBuilder.h - packages around PTX built in code -*- C++ -*-===//
//
// tesselc writes packages; this builds one in code around PTX that tesselc did not
// write (nvcc output, hand-written PTX), for the runtime's tests and the launch
// benchmark:
//
//   PackageBuilder builder("scale_add.tslpkg", "nvcc (test data)");
//   builder.kernel("scale_add", {{"out", ParamKind::Pointer, DType::F32}, ...}, {"ELEMS"}, {"n"});
//   builder.config({{"ELEMS", Json(1)}}, /*numWarps=*/8);
//   builder.variant("scale_add_1", ptx);
//   Package package = builder.build();
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PACKAGE_PACKAGEBUILDER_H
#define TESSEL_PACKAGE_PACKAGEBUILDER_H

#include "package/Error.h"
#include "package/Package.h"

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

  /// Starts a configuration of the current kernel (numbered next): the variants
  /// added next are its own.
  Config &config(Json::Object constexprs = {}, int numWarps = 4, int numStages = 1) {
    return current().addConfig(std::move(constexprs), numWarps, numStages);
  }

  /// A variant (arch sm_80, no shared memory, generic) of configuration `config` of the
  /// current kernel (-1: the last one started). The reference stays valid until the
  /// next variant(), config() or kernel().
  Variant &variant(std::string entry, std::string ptx, int config = -1) {
    KernelInfo &kernel = current();
    if (kernel.configs.empty() || config >= kernel.configCount())
      throw Error("PackageBuilder: variant() of a configuration not started with config()");
    Variant v;
    v.arch = "sm_80";
    v.entry = std::move(entry);
    v.ptx = std::move(ptx);
    return kernel.configs[size_t(config < 0 ? kernel.configCount() - 1 : config)].addVariant(
        std::move(v));
  }

  KernelInfo &current() {
    if (package_.kernels.empty())
      throw Error("PackageBuilder: config() or variant() before kernel()");
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

#endif // TESSEL_PACKAGE_PACKAGEBUILDER_H
