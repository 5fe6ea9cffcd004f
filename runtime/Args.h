//===- runtime/Args.h - Kernel arguments: checking and packing --*- C++ -*-===//
//
// A launch takes its arguments as a list of tessel::Arg (tagged values built
// implicitly from pointers, integers, floats and bools). packArgs() checks
// them against the kernel's signature and packs them at the parameters'
// widths in one pass, recording which ones are "divisible by 16" for variant
// selection. It is a pure function (no driver), so the checks are unit-tested
// without a GPU, and it does not allocate for kernels of up to
// PackedArgs::kInline parameters, keeping the launch path thin.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_ARGS_H
#define TESSEL_RUNTIME_ARGS_H

#include "package/Package.h"

#include <cuda.h>

#include <cstdint>
#include <cstring>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tessel {

/// One kernel argument. Device pointers are passed as pointers (void*,
/// float*, ...) or via Arg::pointer(CUdeviceptr); a CUdeviceptr passed
/// directly is an integer.
class Arg {
public:
  enum class Kind : uint8_t { Pointer, Int32, Int64, UInt64, Float32, Float64, Bool };

  Arg(std::nullptr_t) : kind_(Kind::Pointer) { bits_.u = 0; }
  template <typename T> Arg(T *pointer) : kind_(Kind::Pointer) {
    bits_.u = uint64_t(reinterpret_cast<uintptr_t>(pointer));
  }
  Arg(bool value) : kind_(Kind::Bool) { bits_.i = value ? 1 : 0; }
  template <typename T,
            std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>,
                             int> = 0>
  Arg(T value) {
    if constexpr (std::is_signed_v<T> && sizeof(T) <= 4) {
      kind_ = Kind::Int32;
      bits_.i = value;
    } else if constexpr (std::is_signed_v<T> || sizeof(T) < 8) {
      kind_ = Kind::Int64;
      bits_.i = int64_t(value);
    } else {
      kind_ = Kind::UInt64;
      bits_.u = uint64_t(value);
    }
  }
  Arg(float value) : kind_(Kind::Float32) { bits_.d = value; }
  Arg(double value) : kind_(Kind::Float64) { bits_.d = value; }

  static Arg pointer(CUdeviceptr address) {
    Arg arg(nullptr);
    arg.bits_.u = uint64_t(address);
    return arg;
  }

  Kind kind() const { return kind_; }
  bool isPointer() const { return kind_ == Kind::Pointer; }
  bool isInteger() const {
    return kind_ == Kind::Int32 || kind_ == Kind::Int64 ||
           kind_ == Kind::UInt64 || kind_ == Kind::Bool;
  }
  bool isFloat() const {
    return kind_ == Kind::Float32 || kind_ == Kind::Float64;
  }
  uint64_t address() const { return bits_.u; }
  /// Integer kinds (UInt64 values above INT64_MAX wrap; see fitsInt64()).
  int64_t intValue() const { return bits_.i; }
  bool fitsInt64() const {
    return kind_ != Kind::UInt64 || bits_.u <= uint64_t(INT64_MAX);
  }
  double floatValue() const { return bits_.d; }
  /// "pointer", "i32", "i64", "u64", "f32", "f64", "bool".
  std::string_view kindName() const;
  /// The value for messages ("0x7f00...", "42", "1.5", "true").
  std::string valueText() const;

private:
  Kind kind_;
  union {
    uint64_t u;
    int64_t i;
    double d;
  } bits_;
};

/// Arguments packed at the kernel parameters' widths: pointers() is the
/// `kernelParams` array for cuLaunchKernel.
class PackedArgs {
public:
  static constexpr size_t kInline = 24;

  PackedArgs() = default;
  PackedArgs(const PackedArgs &) = delete;
  PackedArgs &operator=(const PackedArgs &) = delete;

  void **pointers() { return pointers_; }
  size_t size() const { return size_; }
  /// Bit i set: parameter i is a 16-byte aligned pointer or an integer
  /// multiple of 16 (only the first 64 parameters are tracked).
  uint64_t divisibleMask() const { return divisible_; }
  /// The packed bytes of parameter i (for tests).
  const void *slot(size_t i) const { return pointers_[i]; }

private:
  friend void packArgs(const KernelInfo &, const Arg *, size_t, PackedArgs &);
  void reset(size_t count);

  uint64_t inlineSlots_[kInline];
  void *inlinePointers_[kInline];
  std::vector<uint64_t> heapSlots_;
  std::vector<void *> heapPointers_;
  uint64_t *slots_ = inlineSlots_;
  void **pointers_ = inlinePointers_;
  size_t size_ = 0;
  uint64_t divisible_ = 0;
};

/// Checks `args` against the kernel's runtime parameters and packs them.
/// Throws tessel::Error naming the kernel, the argument (1-based) and the
/// parameter, e.g. "argument 3 'stride' of softmax: expected i32, got f32".
/// Accepted: pointers for pointer params; for integer params any integer
/// whose value fits the dtype (bool only for i1); for float params f32 or
/// f64 values, converted to the param's dtype (f16/bf16 round to nearest).
void packArgs(const KernelInfo &kernel, const Arg *args, size_t count,
              PackedArgs &packed);

/// IEEE binary16 / bfloat16 bits of `value`, rounded to nearest even.
uint16_t floatToHalfBits(float value);
uint16_t floatToBFloat16Bits(float value);

} // namespace tessel

#endif // TESSEL_RUNTIME_ARGS_H
