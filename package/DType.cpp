//===- package/DType.cpp - Element and scalar types of kernel params ------===//
#include "package/DType.h"

using namespace tessel;

namespace {
struct DTypeEntry {
  DType type;
  std::string_view name;
  size_t size;
};
constexpr DTypeEntry kDTypes[] = {
    {DType::I1, "i1", 1},     {DType::I8, "i8", 1},   {DType::I16, "i16", 2},
    {DType::I32, "i32", 4},   {DType::I64, "i64", 8}, {DType::F16, "f16", 2},
    {DType::BF16, "bf16", 2}, {DType::F32, "f32", 4}, {DType::F64, "f64", 8},
};
} // namespace

std::string_view tessel::dtypeName(DType type) {
  return kDTypes[int(type)].name;
}

std::optional<DType> tessel::parseDType(std::string_view name) {
  for (const DTypeEntry &entry : kDTypes)
    if (entry.name == name)
      return entry.type;
  return std::nullopt;
}

std::string_view tessel::dtypeNames() {
  return "i1, i8, i16, i32, i64, f16, bf16, f32, f64";
}

size_t tessel::dtypeSize(DType type) { return kDTypes[int(type)].size; }

bool tessel::isIntegerDType(DType type) { return type <= DType::I64; }

bool tessel::isFloatDType(DType type) { return !isIntegerDType(type); }
