//===- interpreter/ExecuteTile.cpp - reductions, broadcasts, dot, casts ---===//
#include "interpreter/Elementwise.h"
#include "interpreter/Frame.h"

#include "dialect/TesselDialect.h"

#include <cstring>

namespace tessel::interp::detail {

namespace {

/// Combines `n` values (n a power of two) the way a butterfly of shuffles does:
/// halves added pairwise, so the result matches a tree reduction on the GPU.
template <class T, class F> T treeReduce(T *v, size_t n, F combine) {
  if ((n & (n - 1)) != 0) {
    T acc = v[0];
    for (size_t k = 1; k < n; ++k)
      acc = combine(acc, v[k]);
    return acc;
  }
  for (size_t half = n / 2; half > 0; half /= 2)
    for (size_t k = 0; k < half; ++k)
      v[k] = combine(v[k], v[k + half]);
  return v[0];
}

template <class T> T clampToInt(double v, bool isSigned, unsigned bits) {
  // Saturating like PTX cvt.rzi: NaN -> 0.
  if (std::isnan(v))
    return 0;
  double lo = isSigned ? -std::ldexp(1.0, int(bits) - 1) : 0.0;
  double hi = isSigned ? std::ldexp(1.0, int(bits) - 1) : std::ldexp(1.0, int(bits));
  v = std::trunc(v);
  if (v < lo)
    return T(isSigned ? sext(int64_t(uint64_t(1) << (bits - 1)), bits) : 0);
  if (v >= hi)
    return T(isSigned ? int64_t((uint64_t(1) << (bits - 1)) - 1) : int64_t(zext(-1, bits)));
  return isSigned ? T(int64_t(v)) : T(sext(int64_t(uint64_t(v)), bits));
}

template <class T> bool compareFloat(uint8_t pred, T a, T b) {
  using P = mlir::arith::CmpFPredicate;
  bool unordered = std::isnan(a) || std::isnan(b);
  switch (P(pred)) {
  case P::AlwaysFalse: return false;
  case P::OEQ: return !unordered && a == b;
  case P::OGT: return !unordered && a > b;
  case P::OGE: return !unordered && a >= b;
  case P::OLT: return !unordered && a < b;
  case P::OLE: return !unordered && a <= b;
  case P::ONE: return !unordered && a != b;
  case P::ORD: return !unordered;
  case P::UEQ: return unordered || a == b;
  case P::UGT: return unordered || a > b;
  case P::UGE: return unordered || a >= b;
  case P::ULT: return unordered || a < b;
  case P::ULE: return unordered || a <= b;
  case P::UNE: return unordered || a != b;
  case P::UNO: return unordered;
  case P::AlwaysTrue: return true;
  }
  return false;
}

} // namespace

void Frame::execReduce(const Instr &in) {
  const Slot &s = slot(in.a);
  size_t axis = size_t(in.imm);
  size_t outer = 1, n = size_t(s.shape[axis]), inner = 1;
  for (size_t d = 0; d < axis; ++d)
    outer *= size_t(s.shape[d]);
  for (size_t d = axis + 1; d < s.shape.size(); ++d)
    inner *= size_t(s.shape[d]);
  auto kind = mlir::tessel::ReduceKind(in.pred);
  auto run = [&](auto *src, auto *dst, auto *buf, auto combine) {
    for (size_t o = 0; o < outer; ++o)
      for (size_t i = 0; i < inner; ++i) {
        for (size_t k = 0; k < n; ++k)
          buf[k] = src[(o * n + k) * inner + i];
        dst[o * inner + i] = treeReduce(buf, n, combine);
      }
  };
  if (s.store == Store::I64) {
    unsigned bits = s.bits;
    auto *buf = reinterpret_cast<int64_t *>(scratch.data());
    if (kind == mlir::tessel::ReduceKind::Add)
      run(ip(in.a), ip(in.res), buf, [bits](int64_t a, int64_t b) { return sext(int64_t(uint64_t(a) + uint64_t(b)), bits); });
    else if (kind == mlir::tessel::ReduceKind::Max)
      run(ip(in.a), ip(in.res), buf, [](int64_t a, int64_t b) { return a > b ? a : b; });
    else
      run(ip(in.a), ip(in.res), buf, [](int64_t a, int64_t b) { return a < b ? a : b; });
  } else if (s.store == Store::F64) {
    double *buf = scratch.data();
    if (kind == mlir::tessel::ReduceKind::Add)
      run(dp(in.a), dp(in.res), buf, [](double a, double b) { return a + b; });
    else if (kind == mlir::tessel::ReduceKind::Max)
      run(dp(in.a), dp(in.res), buf, maximumOf<double>);
    else
      run(dp(in.a), dp(in.res), buf, minimumOf<double>);
  } else {
    auto *buf = reinterpret_cast<float *>(scratch.data());
    Elem e = s.elem;
    if (kind == mlir::tessel::ReduceKind::Add) {
      if (e == Elem::F32)
        run(fp(in.a), fp(in.res), buf, [](float a, float b) { return a + b; });
      else if (e == Elem::F16)
        run(fp(in.a), fp(in.res), buf, [](float a, float b) { return roundToHalf(a + b); });
      else
        run(fp(in.a), fp(in.res), buf, [](float a, float b) { return roundToBF16(a + b); });
    } else if (kind == mlir::tessel::ReduceKind::Max) {
      run(fp(in.a), fp(in.res), buf, maximumOf<float>);
    } else {
      run(fp(in.a), fp(in.res), buf, minimumOf<float>);
    }
  }
}

void Frame::execDot(const Instr &in) {
  // r[i, j] = acc[i, j] + sum over k ascending of a[i, k] * b[k, j], in f32. Products
  // of f16/bf16 (and tf32) operands are exact in f32; f32 operands are rounded to
  // tf32 first unless inputPrecision = "ieee".
  const Slot &sa = slot(in.a), &sb = slot(in.b);
  size_t m = size_t(sa.shape[0]), kk = size_t(sa.shape[1]), n = size_t(sb.shape[1]);
  const float *a = fp(in.a), *b = fp(in.b);
  float *r = fp(in.res);
  std::memmove(r, fp(in.c), m * n * sizeof(float));
  bool tf32 = in.imm && sa.elem == Elem::F32;
  float *bt = reinterpret_cast<float *>(scratch.data());
  const float *bv = b;
  if (tf32) {
    for (size_t k = 0; k < kk * n; ++k)
      bt[k] = roundToTF32(b[k]);
    bv = bt;
  }
  for (size_t i = 0; i < m; ++i)
    for (size_t k = 0; k < kk; ++k) {
      float aik = tf32 ? roundToTF32(a[i * kk + k]) : a[i * kk + k];
      const float *brow = bv + k * n;
      float *rrow = r + i * n;
      for (size_t j = 0; j < n; ++j)
        rrow[j] += aik * brow[j];
    }
}

void Frame::execTrans(const Instr &in) {
  const Slot &s = slot(in.a);
  size_t rows = size_t(s.shape[0]), cols = size_t(s.shape[1]);
  auto run = [&](auto *src, auto *dst) {
    for (size_t i = 0; i < rows; ++i)
      for (size_t j = 0; j < cols; ++j)
        dst[j * rows + i] = src[i * cols + j];
  };
  switch (slot(in.res).store) {
  case Store::F32: run(fp(in.a), fp(in.res)); break;
  case Store::F64: run(dp(in.a), dp(in.res)); break;
  case Store::I64: run(ip(in.a), ip(in.res)); break;
  }
}

void Frame::execBroadcast(const Instr &in) {
  const Slot &s = slot(in.a), &r = slot(in.res);
  size_t rank = r.shape.size();
  llvm::SmallVector<size_t, 4> stride(rank, 0), index(rank, 0);
  size_t st = 1;
  for (size_t d = rank; d-- > 0;) {
    stride[d] = s.shape[d] == 1 ? 0 : st;
    st *= size_t(s.shape[d]);
  }
  auto run = [&](auto *src, auto *dst) {
    size_t from = 0;
    for (size_t k = 0; k < r.size; ++k) {
      dst[k] = src[from];
      for (size_t d = rank; d-- > 0;) {
        from += stride[d];
        if (++index[d] < size_t(r.shape[d]))
          break;
        from -= stride[d] * index[d];
        index[d] = 0;
      }
    }
  };
  switch (r.store) {
  case Store::F32: run(fp(in.a), fp(in.res)); break;
  case Store::F64: run(dp(in.a), dp(in.res)); break;
  case Store::I64: run(ip(in.a), ip(in.res)); break;
  }
}

void Frame::execCast(const Instr &in) {
  const Slot &s = slot(in.a), &r = slot(in.res);
  size_t n = r.size;
  auto toFloat = [&](double v, size_t k) {
    switch (r.elem) {
    case Elem::F64: dp(in.res)[k] = v; break;
    case Elem::F32: fp(in.res)[k] = float(v); break;
    case Elem::F16: fp(in.res)[k] = doubleToHalfValue(v); break;
    default: fp(in.res)[k] = doubleToBF16Value(v); break;
    }
  };
  auto source = [&](size_t k) -> double {
    return s.store == Store::F64 ? dp(in.a)[k] : double(fp(in.a)[k]);
  };
  switch (in.op) {
  case Opcode::IntCast:
    for (size_t k = 0; k < n; ++k)
      ip(in.res)[k] = sext(ip(in.a)[k], r.bits);
    break;
  case Opcode::ZeroExt:
    for (size_t k = 0; k < n; ++k)
      ip(in.res)[k] = sext(int64_t(zext(ip(in.a)[k], s.bits)), r.bits);
    break;
  case Opcode::SIToFP:
  case Opcode::UIToFP:
    for (size_t k = 0; k < n; ++k) {
      int64_t v = ip(in.a)[k];
      if (r.elem == Elem::F32)
        fp(in.res)[k] = in.op == Opcode::SIToFP ? float(v) : float(zext(v, s.bits));
      else
        toFloat(in.op == Opcode::SIToFP ? double(v) : double(zext(v, s.bits)), k);
    }
    break;
  case Opcode::FPToSI:
  case Opcode::FPToUI:
    for (size_t k = 0; k < n; ++k)
      ip(in.res)[k] = clampToInt<int64_t>(source(k), in.op == Opcode::FPToSI, r.bits);
    break;
  case Opcode::FloatCast:
    if (s.store == Store::F32 && r.store == Store::F32) {
      std::memcpy(fp(in.res), fp(in.a), n * sizeof(float));
      roundNarrow(r.elem, fp(in.res), n);
    } else {
      for (size_t k = 0; k < n; ++k)
        toFloat(source(k), k);
    }
    break;
  case Opcode::BitcastToInt:
    for (size_t k = 0; k < n; ++k) {
      int64_t bits;
      switch (s.elem) {
      case Elem::F16: bits = floatToHalf(fp(in.a)[k]); break;
      case Elem::BF16: bits = floatToBF16(fp(in.a)[k]); break;
      case Elem::F32: bits = floatBits(fp(in.a)[k]); break;
      default: std::memcpy(&bits, &dp(in.a)[k], 8); break;
      }
      ip(in.res)[k] = sext(bits, r.bits);
    }
    break;
  case Opcode::BitcastToFloat:
    for (size_t k = 0; k < n; ++k) {
      int64_t bits = ip(in.a)[k];
      switch (r.elem) {
      case Elem::F16: fp(in.res)[k] = halfToFloat(uint16_t(bits)); break;
      case Elem::BF16: fp(in.res)[k] = bf16ToFloat(uint16_t(bits)); break;
      case Elem::F32: fp(in.res)[k] = bitsFloat(uint32_t(bits)); break;
      default: std::memcpy(&dp(in.res)[k], &bits, 8); break;
      }
    }
    break;
  default:
    break;
  }
}

void Frame::execCompare(const Instr &in) {
  const Slot &s = slot(in.a);
  size_t n = slot(in.res).size;
  int64_t *r = ip(in.res);
  if (in.op == Opcode::CmpF) {
    if (s.store == Store::F64)
      for (size_t k = 0; k < n; ++k)
        r[k] = compareFloat(in.pred, dp(in.a)[k], dp(in.b)[k]) ? -1 : 0;
    else
      for (size_t k = 0; k < n; ++k)
        r[k] = compareFloat(in.pred, fp(in.a)[k], fp(in.b)[k]) ? -1 : 0;
    return;
  }
  using P = mlir::arith::CmpIPredicate;
  const int64_t *a = ip(in.a), *b = ip(in.b);
  unsigned bits = s.bits;
  auto cmp = [&](auto f) {
    for (size_t k = 0; k < n; ++k)
      r[k] = f(a[k], b[k]) ? -1 : 0;
  };
  auto u = [bits](int64_t v) { return zext(v, bits); };
  switch (P(in.pred)) {
  case P::eq: cmp([](int64_t x, int64_t y) { return x == y; }); break;
  case P::ne: cmp([](int64_t x, int64_t y) { return x != y; }); break;
  case P::slt: cmp([](int64_t x, int64_t y) { return x < y; }); break;
  case P::sle: cmp([](int64_t x, int64_t y) { return x <= y; }); break;
  case P::sgt: cmp([](int64_t x, int64_t y) { return x > y; }); break;
  case P::sge: cmp([](int64_t x, int64_t y) { return x >= y; }); break;
  case P::ult: cmp([&](int64_t x, int64_t y) { return u(x) < u(y); }); break;
  case P::ule: cmp([&](int64_t x, int64_t y) { return u(x) <= u(y); }); break;
  case P::ugt: cmp([&](int64_t x, int64_t y) { return u(x) > u(y); }); break;
  case P::uge: cmp([&](int64_t x, int64_t y) { return u(x) >= u(y); }); break;
  }
}

void Frame::execSelect(const Instr &in) {
  const Slot &r = slot(in.res);
  const int64_t *cond = ip(in.a);
  bool scalarCond = slot(in.a).size == 1;
  auto run = [&](auto *x, auto *y, auto *out) {
    for (size_t k = 0; k < r.size; ++k)
      out[k] = cond[scalarCond ? 0 : k] ? x[k] : y[k];
  };
  switch (r.store) {
  case Store::F32: run(fp(in.b), fp(in.c), fp(in.res)); break;
  case Store::F64: run(dp(in.b), dp(in.c), dp(in.res)); break;
  case Store::I64: run(ip(in.b), ip(in.c), ip(in.res)); break;
  }
}

} // namespace tessel::interp::detail
