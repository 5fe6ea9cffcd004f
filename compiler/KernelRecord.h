//===- compiler/KernelRecord.h - a kernel's package record from its source -*- C++ -*-===//
//
// What a package records of a kernel apart from its compiled variants (name,
// constexpr parameters, @autotune key and prune condition, one Config per
// configuration), made from the AST and the resolved configurations. tesselc
// fills its packages with it; the interpreter's source bridge uses it so that
// tessel-interpret refuses a pruned configuration exactly as the runtime does.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_COMPILER_KERNELRECORD_H
#define TESSEL_COMPILER_KERNELRECORD_H

#include "frontend/AST.h"
#include "frontend/Config.h"
#include "frontend/Diagnostics.h"
#include "package/Json.h"
#include "package/Package.h"

#include <vector>

namespace tessel::compiler {

/// A constexpr value as a package's config stores it.
Json constToJson(const frontend::ConstValue &value);

/// The record of `kernel` with one Config per entry of `configs` and no variants
/// (and no runtime params: those come from a compiled variant). A prune condition
/// the runtime's parser (package/ConfigExpr.h) cannot read is an error at the condition.
KernelInfo describeKernel(const frontend::ast::Function &kernel,
                          const std::vector<frontend::Specialization> &configs,
                          frontend::DiagnosticEngine &diags);

} // namespace tessel::compiler

#endif // TESSEL_COMPILER_KERNELRECORD_H
