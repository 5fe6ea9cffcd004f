//===- interpreter/FloatBits.h - exact f16/bf16 rounding ---------*- C++ -*-===//
//
// f16 and bf16 are emulated bit-exactly: a value is kept in a float and every
// result is rounded to nearest even in the narrow type. For + - * / and sqrt of
// narrow operands, computing in f32 then rounding is exact (f32 has more than
// 2p+2 bits, so the double rounding is innocuous); conversions from f64 round
// from the double directly.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_INTERPRETER_FLOATBITS_H
#define TESSEL_INTERPRETER_FLOATBITS_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace tessel::interp {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float bf16ToFloat(uint16_t bits) { return bitsFloat(uint32_t(bits) << 16); }

/// bfloat16 bits of `f`, rounded to nearest even (NaN stays a quiet NaN).
inline uint16_t floatToBF16(float f) {
  uint32_t u = floatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((u >> 16) | 0x40);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

inline float halfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0x1f)
    return bitsFloat(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {
    float v = std::ldexp(float(mant), -24);
    return sign ? -v : v;
  }
  return bitsFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

/// IEEE binary16 bits of `f`, rounded to nearest even (subnormals, overflow
/// to infinity, NaN stays a quiet NaN).
inline uint16_t floatToHalf(float f) {
  uint32_t u = floatBits(f);
  uint16_t sign = uint16_t((u >> 16) & 0x8000u);
  uint32_t absu = u & 0x7fffffffu;
  if (absu >= 0x7f800000u)
    return uint16_t(sign | 0x7c00u | (absu > 0x7f800000u ? 0x200u : 0u));
  if (absu >= 0x477ff000u) // >= 65520: rounds to infinity
    return uint16_t(sign | 0x7c00u);
  if (absu < 0x38800000u) { // below 2^-14: subnormal (or zero)
    // The value in units of 2^-24, rounded to nearest even by the FPU.
    float v = std::nearbyint(bitsFloat(absu) * 16777216.0f);
    return uint16_t(sign | uint16_t(v));
  }
  uint32_t rounded = absu + 0xfffu + ((absu >> 13) & 1u);
  return uint16_t(sign | ((rounded - 0x38000000u) >> 13));
}

/// `f` rounded to tf32 (10 fraction bits) to nearest, ties to even, as the sm_90
/// kernels' cvt.rn.tf32.f32 does (sm_80's cvt.rna differs on exact ties only: ties away).
inline float roundToTF32(float f) {
  uint32_t u = floatBits(f);
  if ((u & 0x7f800000u) == 0x7f800000u)
    return f;
  return bitsFloat((u + 0xfffu + ((u >> 13) & 1u)) & 0xffffe000u);
}

inline float roundToBF16(float f) { return bf16ToFloat(floatToBF16(f)); }
inline float roundToHalf(float f) { return halfToFloat(floatToHalf(f)); }

/// `v` rounded to nearest even in a binary format with `mantBits` fraction
/// bits, minimum normal exponent `minExp` and largest finite `maxFinite`.
inline double roundDouble(double v, int mantBits, int minExp, double maxFinite) {
  if (!std::isfinite(v) || v == 0)
    return v;
  int e;
  std::frexp(v, &e);
  int lead = e - 1 < minExp ? minExp : e - 1;
  double r = std::ldexp(std::nearbyint(std::ldexp(v, mantBits - lead)), lead - mantBits);
  if (std::fabs(r) > maxFinite)
    return v < 0 ? -HUGE_VAL : HUGE_VAL;
  return r;
}
inline float doubleToHalfValue(double v) { return float(roundDouble(v, 10, -14, 65504.0)); }
inline float doubleToBF16Value(double v) {
  return float(roundDouble(v, 7, -126, 3.3895313892515355e38));
}

} // namespace tessel::interp

#endif // TESSEL_INTERPRETER_FLOATBITS_H
