//===- interpreter/Elementwise.h - typed loops of elementwise ops -*- C++ -*-===//
//
// Internal to the interpreter: one loop per (op, storage type), the switch on
// the op outside the loop, so no per-element dispatch.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_INTERPRETER_ELEMENTWISE_H
#define TESSEL_INTERPRETER_ELEMENTWISE_H

#include "interpreter/FloatBits.h"
#include "interpreter/Program.h"

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace tessel::interp::detail {

/// `v` sign-extended from its low `bits` bits.
inline int64_t sext(int64_t v, unsigned bits) {
  if (bits >= 64)
    return v;
  unsigned shift = 64 - bits;
  return int64_t(uint64_t(v) << shift) >> shift;
}
/// The low `bits` bits of `v`, zero-extended.
inline uint64_t zext(int64_t v, unsigned bits) {
  return bits >= 64 ? uint64_t(v) : uint64_t(v) & ((uint64_t(1) << bits) - 1);
}

/// Rounds a tile of f16/bf16 results (kept in floats) to their type.
inline void roundNarrow(Elem elem, float *r, size_t n) {
  if (elem == Elem::F16)
    for (size_t k = 0; k < n; ++k)
      r[k] = roundToHalf(r[k]);
  else if (elem == Elem::BF16)
    for (size_t k = 0; k < n; ++k)
      r[k] = roundToBF16(r[k]);
}

/// NaN-propagating max/min (arith.maximumf, reduce max).
template <class T> inline T maximumOf(T a, T b) {
  if (std::isnan(a) || std::isnan(b))
    return a + b;
  if (a == b)
    return std::signbit(a) ? b : a; // max(-0, +0) = +0
  return a > b ? a : b;
}
template <class T> inline T minimumOf(T a, T b) {
  if (std::isnan(a) || std::isnan(b))
    return a + b;
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

template <class T, class F> inline void map1(T *r, const T *a, size_t n, F f) {
  for (size_t k = 0; k < n; ++k)
    r[k] = f(a[k]);
}
template <class T, class F> inline void map2(T *r, const T *a, const T *b, size_t n, F f) {
  for (size_t k = 0; k < n; ++k)
    r[k] = f(a[k], b[k]);
}

/// Float ops of one or two operands; false when `op` is not one of them.
template <class T> bool floatOp(Opcode op, T *r, const T *a, const T *b, size_t n) {
  using std::abs;
  switch (op) {
  case Opcode::AddF: map2(r, a, b, n, [](T x, T y) { return x + y; }); return true;
  case Opcode::SubF: map2(r, a, b, n, [](T x, T y) { return x - y; }); return true;
  case Opcode::MulF: map2(r, a, b, n, [](T x, T y) { return x * y; }); return true;
  case Opcode::DivF: map2(r, a, b, n, [](T x, T y) { return x / y; }); return true;
  case Opcode::RemF: map2(r, a, b, n, [](T x, T y) { return std::fmod(x, y); }); return true;
  case Opcode::MaximumF: map2(r, a, b, n, maximumOf<T>); return true;
  case Opcode::MinimumF: map2(r, a, b, n, minimumOf<T>); return true;
  case Opcode::MaxNumF: map2(r, a, b, n, [](T x, T y) { return std::fmax(x, y); }); return true;
  case Opcode::MinNumF: map2(r, a, b, n, [](T x, T y) { return std::fmin(x, y); }); return true;
  case Opcode::PowF: map2(r, a, b, n, [](T x, T y) { return std::pow(x, y); }); return true;
  case Opcode::Atan2: map2(r, a, b, n, [](T x, T y) { return std::atan2(x, y); }); return true;
  case Opcode::NegF: map1(r, a, n, [](T x) { return -x; }); return true;
  case Opcode::AbsF: map1(r, a, n, [](T x) { return std::fabs(x); }); return true;
  case Opcode::Exp: map1(r, a, n, [](T x) { return std::exp(x); }); return true;
  case Opcode::Exp2: map1(r, a, n, [](T x) { return std::exp2(x); }); return true;
  case Opcode::Log: map1(r, a, n, [](T x) { return std::log(x); }); return true;
  case Opcode::Log2: map1(r, a, n, [](T x) { return std::log2(x); }); return true;
  case Opcode::Log1p: map1(r, a, n, [](T x) { return std::log1p(x); }); return true;
  case Opcode::Expm1: map1(r, a, n, [](T x) { return std::expm1(x); }); return true;
  case Opcode::Sqrt: map1(r, a, n, [](T x) { return std::sqrt(x); }); return true;
  case Opcode::Rsqrt: map1(r, a, n, [](T x) { return T(1) / std::sqrt(x); }); return true;
  case Opcode::Sin: map1(r, a, n, [](T x) { return std::sin(x); }); return true;
  case Opcode::Cos: map1(r, a, n, [](T x) { return std::cos(x); }); return true;
  case Opcode::Tan: map1(r, a, n, [](T x) { return std::tan(x); }); return true;
  case Opcode::Tanh: map1(r, a, n, [](T x) { return std::tanh(x); }); return true;
  case Opcode::Erf: map1(r, a, n, [](T x) { return std::erf(x); }); return true;
  case Opcode::Floor: map1(r, a, n, [](T x) { return std::floor(x); }); return true;
  case Opcode::Ceil: map1(r, a, n, [](T x) { return std::ceil(x); }); return true;
  case Opcode::Trunc: map1(r, a, n, [](T x) { return std::trunc(x); }); return true;
  case Opcode::Round: map1(r, a, n, [](T x) { return std::round(x); }); return true;
  case Opcode::RoundEven: map1(r, a, n, [](T x) { return std::nearbyint(x); }); return true;
  default:
    return false;
  }
}

/// Integer ops of one or two operands on sign-extended values of width
/// `bits`; results are sign-extended again. False when `op` is not one.
inline bool intOp(Opcode op, unsigned bits, int64_t *r, const int64_t *a, const int64_t *b,
                  size_t n) {
  auto u = [bits](int64_t v) { return zext(v, bits); };
  switch (op) {
  case Opcode::AddI: map2(r, a, b, n, [](int64_t x, int64_t y) { return int64_t(uint64_t(x) + uint64_t(y)); }); break;
  case Opcode::SubI: map2(r, a, b, n, [](int64_t x, int64_t y) { return int64_t(uint64_t(x) - uint64_t(y)); }); break;
  case Opcode::MulI: map2(r, a, b, n, [](int64_t x, int64_t y) { return int64_t(uint64_t(x) * uint64_t(y)); }); break;
  // Division by zero is undefined in the kernel; the interpreter gives -1 (as PTX does).
  case Opcode::DivSI: map2(r, a, b, n, [](int64_t x, int64_t y) { return y == 0 ? -1 : (y == -1 ? int64_t(0 - uint64_t(x)) : x / y); }); break;
  case Opcode::RemSI: map2(r, a, b, n, [](int64_t x, int64_t y) { return y == 0 || y == -1 ? (y == 0 ? x : 0) : x % y; }); break;
  case Opcode::DivUI: map2(r, a, b, n, [&](int64_t x, int64_t y) { return u(y) == 0 ? int64_t(-1) : int64_t(u(x) / u(y)); }); break;
  case Opcode::RemUI: map2(r, a, b, n, [&](int64_t x, int64_t y) { return u(y) == 0 ? x : int64_t(u(x) % u(y)); }); break;
  case Opcode::CeilDivSI:
    map2(r, a, b, n, [](int64_t x, int64_t y) {
      if (y == 0) return int64_t(-1);
      if (y == -1) return int64_t(0 - uint64_t(x));
      int64_t q = x / y;
      return (x % y != 0 && ((x < 0) == (y < 0))) ? q + 1 : q;
    });
    break;
  case Opcode::FloorDivSI:
    map2(r, a, b, n, [](int64_t x, int64_t y) {
      if (y == 0) return int64_t(-1);
      if (y == -1) return int64_t(0 - uint64_t(x));
      int64_t q = x / y;
      return (x % y != 0 && ((x < 0) != (y < 0))) ? q - 1 : q;
    });
    break;
  case Opcode::AndI: map2(r, a, b, n, [](int64_t x, int64_t y) { return x & y; }); break;
  case Opcode::OrI: map2(r, a, b, n, [](int64_t x, int64_t y) { return x | y; }); break;
  case Opcode::XOrI: map2(r, a, b, n, [](int64_t x, int64_t y) { return x ^ y; }); break;
  // Shifts by the width or more are poison in arith; the interpreter gives 0 (or the sign).
  case Opcode::ShLI: map2(r, a, b, n, [&](int64_t x, int64_t y) { return u(y) >= bits ? int64_t(0) : int64_t(uint64_t(x) << u(y)); }); break;
  case Opcode::ShRSI: map2(r, a, b, n, [&](int64_t x, int64_t y) { return u(y) >= bits ? (x < 0 ? int64_t(-1) : int64_t(0)) : x >> u(y); }); break;
  case Opcode::ShRUI: map2(r, a, b, n, [&](int64_t x, int64_t y) { return u(y) >= bits ? int64_t(0) : int64_t(u(x) >> u(y)); }); break;
  case Opcode::MaxSI: map2(r, a, b, n, [](int64_t x, int64_t y) { return x > y ? x : y; }); break;
  case Opcode::MinSI: map2(r, a, b, n, [](int64_t x, int64_t y) { return x < y ? x : y; }); break;
  case Opcode::MaxUI: map2(r, a, b, n, [&](int64_t x, int64_t y) { return u(x) > u(y) ? x : y; }); break;
  case Opcode::MinUI: map2(r, a, b, n, [&](int64_t x, int64_t y) { return u(x) < u(y) ? x : y; }); break;
  case Opcode::AbsI: map1(r, a, n, [](int64_t x) { return x < 0 ? int64_t(0 - uint64_t(x)) : x; }); break;
  default:
    return false;
  }
  if (bits < 64)
    for (size_t k = 0; k < n; ++k)
      r[k] = sext(r[k], bits);
  return true;
}

} // namespace tessel::interp::detail

#endif // TESSEL_INTERPRETER_ELEMENTWISE_H
