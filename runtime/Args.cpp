//===- runtime/Args.cpp - Kernel arguments: checking and packing ----------===//
#include "runtime/Args.h"

#include <cinttypes>
#include <cmath>
#include <cstdio>

using namespace tessel;

std::string_view Arg::kindName() const {
  switch (kind_) {
  case Kind::Pointer:
    return "pointer";
  case Kind::Int32:
    return "i32";
  case Kind::Int64:
    return "i64";
  case Kind::UInt64:
    return "u64";
  case Kind::Float32:
    return "f32";
  case Kind::Float64:
    return "f64";
  case Kind::Bool:
    return "bool";
  }
  return "?";
}

std::string Arg::valueText() const {
  char buf[64];
  switch (kind_) {
  case Kind::Pointer:
    std::snprintf(buf, sizeof(buf), "0x%" PRIx64, bits_.u);
    return buf;
  case Kind::UInt64:
    return std::to_string(bits_.u);
  case Kind::Int32:
  case Kind::Int64:
    return std::to_string(bits_.i);
  case Kind::Bool:
    return bits_.i ? "true" : "false";
  case Kind::Float32:
  case Kind::Float64:
    std::snprintf(buf, sizeof(buf), "%g", bits_.d);
    return buf;
  }
  return "?";
}

//===----------------------------------------------------------------------===//
// Half-precision conversion
//===----------------------------------------------------------------------===//

uint16_t tessel::floatToBFloat16Bits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (std::isnan(value))
    return uint16_t((bits >> 16) | 0x40); // keep it a (quiet) NaN
  uint32_t rounding = 0x7FFF + ((bits >> 16) & 1);
  return uint16_t((bits + rounding) >> 16);
}

uint16_t tessel::floatToHalfBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  uint16_t sign = uint16_t((bits >> 16) & 0x8000);
  uint32_t exponent = (bits >> 23) & 0xFF;
  uint32_t mantissa = bits & 0x7FFFFF;
  if (exponent == 0xFF) // inf or NaN
    return uint16_t(sign | 0x7C00 | (mantissa ? 0x200 : 0));
  int e = int(exponent) - 127 + 15;
  if (e >= 31)
    return uint16_t(sign | 0x7C00); // overflow to inf
  if (e <= 0) {
    // Subnormal half (or zero): shift the implicit-one mantissa into place.
    if (e < -10)
      return sign;
    uint32_t m = mantissa | 0x800000;
    int shift = 14 - e;
    uint32_t half = m >> shift;
    uint32_t rest = m & ((1u << shift) - 1);
    uint32_t midpoint = 1u << (shift - 1);
    if (rest > midpoint || (rest == midpoint && (half & 1)))
      ++half;
    return uint16_t(sign | half);
  }
  uint32_t half = (uint32_t(e) << 10) | (mantissa >> 13);
  uint32_t rest = mantissa & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (half & 1)))
    ++half; // may carry into the exponent, which is the right result
  return uint16_t(sign | half);
}

//===----------------------------------------------------------------------===//
// Packing
//===----------------------------------------------------------------------===//

void PackedArgs::reset(size_t count) {
  size_ = count;
  divisible_ = 0;
  if (count <= kInline) {
    slots_ = inlineSlots_;
    pointers_ = inlinePointers_;
  } else {
    heapSlots_.resize(count);
    heapPointers_.resize(count);
    slots_ = heapSlots_.data();
    pointers_ = heapPointers_.data();
  }
  for (size_t i = 0; i < count; ++i) {
    slots_[i] = 0;
    pointers_[i] = &slots_[i];
  }
}

[[noreturn]] static void argError(const KernelInfo &kernel, size_t index,
                                  const std::string &message) {
  throw Error("argument " + std::to_string(index + 1) + " '" +
              kernel.params[index].name + "' of " + kernel.name + ": " +
              message);
}

[[noreturn]] static void countError(const KernelInfo &kernel, size_t count) {
  std::string names;
  for (const ParamInfo &param : kernel.params)
    names += (names.empty() ? "" : ", ") + param.name;
  throw Error(kernel.name + " expects " + std::to_string(kernel.params.size()) +
              " argument" + (kernel.params.size() == 1 ? "" : "s") + " (" +
              names + "), got " + std::to_string(count));
}

static bool intFits(DType type, int64_t value) {
  switch (type) {
  case DType::I1:
    return value == 0 || value == 1;
  case DType::I8:
    return value >= INT8_MIN && value <= INT8_MAX;
  case DType::I16:
    return value >= INT16_MIN && value <= INT16_MAX;
  case DType::I32:
    return value >= INT32_MIN && value <= INT32_MAX;
  default:
    return true;
  }
}

template <typename T> static void store(uint64_t &slot, T value) {
  std::memcpy(&slot, &value, sizeof(T));
}

void tessel::packArgs(const KernelInfo &kernel, const Arg *args, size_t count,
                      PackedArgs &packed) {
  if (count != kernel.params.size())
    countError(kernel, count);
  packed.reset(count);
  for (size_t i = 0; i < count; ++i) {
    const ParamInfo &param = kernel.params[i];
    const Arg &arg = args[i];
    uint64_t &slot = packed.slots_[i];
    bool divisible = false;
    if (param.isPointer()) {
      if (!arg.isPointer())
        argError(kernel, i,
                 "expected a pointer (" + param.typeName() + "), got " +
                     std::string(arg.kindName()) + " " + arg.valueText());
      store(slot, arg.address());
      divisible = arg.address() % 16 == 0;
    } else if (isIntegerDType(param.dtype)) {
      bool accepted = arg.kind() == Arg::Kind::Bool
                          ? param.dtype == DType::I1
                          : arg.isInteger();
      if (!accepted)
        argError(kernel, i,
                 "expected " + std::string(dtypeName(param.dtype)) + ", got " +
                     std::string(arg.kindName()));
      int64_t value = arg.intValue();
      if (!arg.fitsInt64() || !intFits(param.dtype, value))
        argError(kernel, i,
                 "value " + arg.valueText() + " does not fit " +
                     std::string(dtypeName(param.dtype)));
      switch (param.dtype) {
      case DType::I1:
      case DType::I8:
        store(slot, int8_t(value));
        break;
      case DType::I16:
        store(slot, int16_t(value));
        break;
      case DType::I32:
        store(slot, int32_t(value));
        break;
      default:
        store(slot, value);
      }
      divisible = value % 16 == 0;
    } else {
      if (!arg.isFloat())
        argError(kernel, i,
                 "expected " + std::string(dtypeName(param.dtype)) + ", got " +
                     std::string(arg.kindName()));
      double value = arg.floatValue();
      switch (param.dtype) {
      case DType::F16:
        store(slot, floatToHalfBits(float(value)));
        break;
      case DType::BF16:
        store(slot, floatToBFloat16Bits(float(value)));
        break;
      case DType::F32:
        store(slot, float(value));
        break;
      default:
        store(slot, value);
      }
    }
    if (divisible && i < 64)
      packed.divisible_ |= uint64_t(1) << i;
  }
}
