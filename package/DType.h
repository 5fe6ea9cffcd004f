//===- package/DType.h - Element and scalar types of kernel params -*- C++ -*-===//
//
// The dtypes a package may name for kernel parameters. Scalars are passed to
// the kernel at their natural width (i1 as one byte, like the NVPTX back end).
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_PACKAGE_DTYPE_H
#define TESSEL_PACKAGE_DTYPE_H

#include <cstddef>
#include <optional>
#include <string_view>

namespace tessel {

enum class DType { I1, I8, I16, I32, I64, F16, BF16, F32, F64 };

/// "i1", "i8", ..., "bf16", "f32", "f64".
std::string_view dtypeName(DType type);
/// Inverse of dtypeName; nullopt for an unknown name.
std::optional<DType> parseDType(std::string_view name);
/// The comma-separated list of valid names, for error messages.
std::string_view dtypeNames();
/// Bytes the value occupies as a kernel parameter.
size_t dtypeSize(DType type);
bool isIntegerDType(DType type);
bool isFloatDType(DType type);

} // namespace tessel

#endif // TESSEL_PACKAGE_DTYPE_H
