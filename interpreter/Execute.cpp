//===- interpreter/Execute.cpp - run the instruction list per program -----===//
#include "interpreter/Elementwise.h"
#include "interpreter/Interpreter.h"
#include "interpreter/Program.h"

#include "dialect/TesselDialect.h"

#include <cstdio>
#include <cstring>
#include <fstream>

using namespace tessel::interp;
using namespace tessel::interp::detail;

namespace {

/// The source line `line` of `file` with a caret under `column`, or "".
std::string sourceExcerpt(const std::string &location) {
  // location is "file:line:col".
  size_t c2 = location.rfind(':');
  if (c2 == std::string::npos || c2 == 0)
    return "";
  size_t c1 = location.rfind(':', c2 - 1);
  if (c1 == std::string::npos)
    return "";
  std::ifstream in(location.substr(0, c1));
  if (!in)
    return "";
  long line = std::atol(location.c_str() + c1 + 1), column = std::atol(location.c_str() + c2 + 1);
  std::string text;
  for (long i = 0; i < line && std::getline(in, text); ++i) {
  }
  if (!in || line <= 0)
    return "";
  return "\n" + text + "\n" + std::string(size_t(std::max(column - 1, 0L)), ' ') + "^";
}

std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
  return buf;
}

/// Bytes of one element in memory (i1 takes a byte).
unsigned memBytes(Elem elem, unsigned bits) {
  switch (elem) {
  case Elem::F16:
  case Elem::BF16:
    return 2;
  case Elem::F32:
    return 4;
  case Elem::F64:
  case Elem::Ptr:
    return 8;
  case Elem::Int:
    return bits <= 8 ? 1 : bits / 8;
  }
  return 1;
}

class Frame {
public:
  Frame(const Program &p, const MemoryMap &memory)
      : p(p), memory(memory), f32(p.f32Init), f64(p.f64Init), i64(p.i64Init),
        scratch(p.maxSize) {}

  const Program &p;
  const MemoryMap &memory;
  std::vector<float> f32;
  std::vector<double> f64;
  std::vector<int64_t> i64;
  std::vector<double> scratch;
  int64_t pid[3] = {0, 0, 0};
  int64_t num[3] = {1, 1, 1};
  std::string error;

  float *fp(uint32_t s) { return f32.data() + p.slots[s].offset; }
  double *dp(uint32_t s) { return f64.data() + p.slots[s].offset; }
  int64_t *ip(uint32_t s) { return i64.data() + p.slots[s].offset; }
  const Slot &slot(uint32_t s) const { return p.slots[s]; }

  /// Runs one program instance; false with `error` set on failure.
  bool run();

private:
  /// The buffer of the last checked access: consecutive accesses mostly hit it.
  const Buffer *last = nullptr;

  bool inLastBuffer(uint64_t address, unsigned bytes) const {
    return last && address - last->base <= last->bytes &&
           bytes <= last->bytes - (address - last->base) && address % bytes == 0;
  }

  bool fail(const Instr &in, const std::string &message);
  void copy(uint32_t from, uint32_t to);
  void copies(const Instr &in) {
    for (size_t k = 0; k < in.from.size(); ++k)
      copy(in.from[k], in.to[k]);
  }
  bool checkAccess(const Instr &in, const char *what, uint32_t ptrSlot, size_t k, unsigned bytes);
  bool exec(const Instr &in);
  bool execLoad(const Instr &in);
  bool execStore(const Instr &in);
  void execReduce(const Instr &in);
  void execBroadcast(const Instr &in);
  void execDot(const Instr &in);
  bool execAtomic(const Instr &in);
  void execPrint(const Instr &in);
  bool execAssert(const Instr &in);
  void execCast(const Instr &in);
  void execCompare(const Instr &in);
  void execSelect(const Instr &in);
};

bool Frame::fail(const Instr &in, const std::string &message) {
  const std::string &where = p.locations[in.loc];
  error = (where.empty() ? "" : where + ": ") + "error: " + message + " (kernel '" + p.name +
          "', program (" + std::to_string(pid[0]) + ", " + std::to_string(pid[1]) + ", " +
          std::to_string(pid[2]) + "))" + (where.empty() ? "" : sourceExcerpt(where));
  return false;
}

void Frame::copy(uint32_t from, uint32_t to) {
  const Slot &s = slot(from);
  switch (s.store) {
  case Store::F32: std::memcpy(fp(to), fp(from), s.size * sizeof(float)); break;
  case Store::F64: std::memcpy(dp(to), dp(from), s.size * sizeof(double)); break;
  case Store::I64: std::memcpy(ip(to), ip(from), s.size * sizeof(int64_t)); break;
  }
}

bool Frame::checkAccess(const Instr &in, const char *what, uint32_t ptrSlot, size_t k,
                        unsigned bytes) {
  uint64_t address = uint64_t(ip(ptrSlot)[k]);
  if (inLastBuffer(address, bytes))
    return true;
  const Slot &s = slot(ptrSlot);
  std::string element = "element " + std::to_string(k);
  if (s.shape.size() > 1) {
    std::string index;
    size_t rest = k;
    for (size_t d = s.shape.size(); d-- > 0;) {
      index = std::to_string(rest % s.shape[d]) + (index.empty() ? "" : ", ") + index;
      rest /= s.shape[d];
    }
    element += " [" + index + "]";
  }
  if (!s.shape.empty())
    element += " of " + s.typeName;
  if (address % bytes != 0)
    return fail(in, std::string("misaligned ") + what + " of " + std::to_string(bytes) +
                        " bytes at " + hex(address) + ", " + element);
  const Buffer *b = memory.find(address, bytes);
  if (!b)
    return fail(in, std::string("out-of-bounds ") + what + " of " + std::to_string(bytes) +
                        " bytes at " + hex(address) + ", " + element + ": " +
                        memory.describe(address, bytes));
  last = b;
  return true;
}

bool Frame::execLoad(const Instr &in) {
  const Slot &r = slot(in.res);
  const int64_t *ptr = ip(in.a);
  const int64_t *mask = in.b != kNoSlot ? ip(in.b) : nullptr;
  unsigned bytes = memBytes(r.elem, r.bits);
  size_t n = r.size;
  for (size_t k = 0; k < n; ++k)
    if ((!mask || mask[k]) && !inLastBuffer(uint64_t(ptr[k]), bytes) &&
        !checkAccess(in, "load", in.a, k, bytes))
      return false;
  auto on = [&](size_t k) { return !mask || mask[k]; };
  auto addr = [&](size_t k) { return reinterpret_cast<const char *>(uintptr_t(ptr[k])); };
  if (r.store == Store::F32) {
    float *out = fp(in.res);
    const float *other = in.c != kNoSlot ? fp(in.c) : nullptr;
    auto fill = [&](auto read) {
      for (size_t k = 0; k < n; ++k)
        out[k] = on(k) ? read(addr(k)) : other ? other[k] : 0.0f;
    };
    if (r.elem == Elem::F32)
      fill([](const char *p) { float f; std::memcpy(&f, p, 4); return f; });
    else if (r.elem == Elem::F16)
      fill([](const char *p) { uint16_t h; std::memcpy(&h, p, 2); return halfToFloat(h); });
    else
      fill([](const char *p) { uint16_t h; std::memcpy(&h, p, 2); return bf16ToFloat(h); });
  } else if (r.store == Store::F64) {
    double *out = dp(in.res);
    const double *other = in.c != kNoSlot ? dp(in.c) : nullptr;
    for (size_t k = 0; k < n; ++k) {
      if (on(k))
        std::memcpy(&out[k], addr(k), 8);
      else
        out[k] = other ? other[k] : 0.0;
    }
  } else {
    int64_t *out = ip(in.res);
    const int64_t *other = in.c != kNoSlot ? ip(in.c) : nullptr;
    for (size_t k = 0; k < n; ++k) {
      if (!on(k)) {
        out[k] = other ? other[k] : 0;
        continue;
      }
      switch (bytes) {
      case 1: { int8_t v; std::memcpy(&v, addr(k), 1); out[k] = r.bits == 1 ? (v ? -1 : 0) : v; break; }
      case 2: { int16_t v; std::memcpy(&v, addr(k), 2); out[k] = v; break; }
      case 4: { int32_t v; std::memcpy(&v, addr(k), 4); out[k] = v; break; }
      default: std::memcpy(&out[k], addr(k), 8); break;
      }
      if (r.elem == Elem::Int)
        out[k] = sext(out[k], r.bits);
    }
  }
  return true;
}

bool Frame::execStore(const Instr &in) {
  const Slot &v = slot(in.b);
  const int64_t *ptr = ip(in.a);
  const int64_t *mask = in.c != kNoSlot ? ip(in.c) : nullptr;
  unsigned bytes = memBytes(v.elem, v.bits);
  size_t n = v.size;
  for (size_t k = 0; k < n; ++k)
    if ((!mask || mask[k]) && !inLastBuffer(uint64_t(ptr[k]), bytes) &&
        !checkAccess(in, "store", in.a, k, bytes))
      return false;
  for (size_t k = 0; k < n; ++k) {
    if (mask && !mask[k])
      continue;
    char *to = reinterpret_cast<char *>(uintptr_t(ptr[k]));
    switch (v.elem) {
    case Elem::F32: std::memcpy(to, &fp(in.b)[k], 4); break;
    case Elem::F16: { uint16_t h = floatToHalf(fp(in.b)[k]); std::memcpy(to, &h, 2); break; }
    case Elem::BF16: { uint16_t h = floatToBF16(fp(in.b)[k]); std::memcpy(to, &h, 2); break; }
    case Elem::F64: std::memcpy(to, &dp(in.b)[k], 8); break;
    case Elem::Ptr: std::memcpy(to, &ip(in.b)[k], 8); break;
    case Elem::Int: {
      int64_t x = ip(in.b)[k];
      if (v.bits == 1)
        x = x ? 1 : 0;
      switch (bytes) {
      case 1: { int8_t t = int8_t(x); std::memcpy(to, &t, 1); break; }
      case 2: { int16_t t = int16_t(x); std::memcpy(to, &t, 2); break; }
      case 4: { int32_t t = int32_t(x); std::memcpy(to, &t, 4); break; }
      default: std::memcpy(to, &x, 8); break;
      }
      break;
    }
    }
  }
  return true;
}

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

/// The multi-dimensional index of element `k` of a tile: "[1, 3]" ("" for scalars).
std::string indexText(const Slot &s, size_t k) {
  if (s.shape.empty())
    return "";
  std::string index;
  for (size_t d = s.shape.size(); d-- > 0;) {
    index = std::to_string(k % size_t(s.shape[d])) + (index.empty() ? "" : ", ") + index;
    k /= size_t(s.shape[d]);
  }
  return "[" + index + "]";
}

bool Frame::execAtomic(const Instr &in) {
  const Slot &v = slot(in.b);
  const int64_t *ptr = ip(in.a);
  const int64_t *mask = in.c != kNoSlot ? ip(in.c) : nullptr;
  unsigned bytes = memBytes(v.elem, v.bits);
  for (size_t k = 0; k < v.size; ++k)
    if ((!mask || mask[k]) && !inLastBuffer(uint64_t(ptr[k]), bytes) &&
        !checkAccess(in, "atomic", in.a, k, bytes))
      return false;
  enum { Add, Max, Min, Xchg, And, Or, Xor };
  for (size_t k = 0; k < v.size; ++k) {
    if (mask && !mask[k])
      continue;
    char *at = reinterpret_cast<char *>(uintptr_t(ptr[k]));
    if (v.store == Store::I64) {
      int64_t old = 0, x = ip(in.b)[k], now;
      std::memcpy(&old, at, bytes); // little-endian: the low bytes
      old = sext(old, bytes * 8);
      switch (in.pred) {
      case Add: now = int64_t(uint64_t(old) + uint64_t(x)); break;
      case Max: now = std::max(old, x); break;
      case Min: now = std::min(old, x); break;
      case And: now = old & x; break;
      case Or: now = old | x; break;
      case Xor: now = old ^ x; break;
      default: now = x; break;
      }
      std::memcpy(at, &now, bytes);
      if (in.res != kNoSlot)
        ip(in.res)[k] = sext(old, v.bits);
      continue;
    }
    double old, x = v.store == Store::F64 ? dp(in.b)[k] : double(fp(in.b)[k]), now;
    uint16_t h;
    float f;
    switch (v.elem) {
    case Elem::F64: std::memcpy(&old, at, 8); break;
    case Elem::F32: std::memcpy(&f, at, 4); old = f; break;
    case Elem::F16: std::memcpy(&h, at, 2); old = halfToFloat(h); break;
    default: std::memcpy(&h, at, 2); old = bf16ToFloat(h); break;
    }
    switch (in.pred) {
    case Add: now = v.elem == Elem::F64 ? old + x : double(float(old) + float(x)); break;
    case Max: now = maximumOf(old, x); break;
    case Min: now = minimumOf(old, x); break;
    default: now = x; break;
    }
    switch (v.elem) {
    case Elem::F64: std::memcpy(at, &now, 8); break;
    case Elem::F32: f = float(now); std::memcpy(at, &f, 4); break;
    case Elem::F16: h = floatToHalf(float(now)); std::memcpy(at, &h, 2); break;
    default: h = floatToBF16(float(now)); std::memcpy(at, &h, 2); break;
    }
    if (in.res != kNoSlot) {
      if (v.store == Store::F64)
        dp(in.res)[k] = old;
      else
        fp(in.res)[k] = float(old);
    }
  }
  return true;
}

void Frame::execPrint(const Instr &in) {
  std::string head = "program (" + std::to_string(pid[0]) + ", " + std::to_string(pid[1]) +
                     ", " + std::to_string(pid[2]) + ") " + p.strings[size_t(in.imm)];
  std::string out;
  for (size_t o = 0; o < in.from.size(); ++o) {
    const Slot &s = slot(in.from[o]);
    for (size_t k = 0; k < s.size; ++k) {
      out += head;
      if (in.from.size() > 1)
        out += " #" + std::to_string(o);
      out += indexText(s, k) + " = ";
      char buf[64];
      switch (s.store) {
      case Store::F32: std::snprintf(buf, sizeof buf, "%.9g", double(fp(in.from[o])[k])); break;
      case Store::F64: std::snprintf(buf, sizeof buf, "%.17g", dp(in.from[o])[k]); break;
      case Store::I64:
        if (s.elem == Elem::Ptr)
          std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)ip(in.from[o])[k]);
        else if (s.bits == 1)
          std::snprintf(buf, sizeof buf, "%s", ip(in.from[o])[k] ? "true" : "false");
        else
          std::snprintf(buf, sizeof buf, "%lld", (long long)ip(in.from[o])[k]);
        break;
      }
      out += buf;
      out += "\n";
    }
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
}

bool Frame::execAssert(const Instr &in) {
  for (uint32_t from : in.from) {
    const Slot &s = slot(from);
    for (size_t k = 0; k < s.size; ++k)
      if (!ip(from)[k])
        return fail(in, "device assertion failed: " + p.strings[size_t(in.imm)] +
                            (s.shape.empty() ? "" : " (element " + indexText(s, k) + ")"));
  }
  return true;
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

bool Frame::exec(const Instr &in) {
  switch (in.op) {
  case Opcode::ProgramId:
    ip(in.res)[0] = pid[in.imm];
    return true;
  case Opcode::NumPrograms:
    ip(in.res)[0] = num[in.imm];
    return true;
  case Opcode::Splat: {
    const Slot &r = slot(in.res);
    switch (r.store) {
    case Store::F32: std::fill_n(fp(in.res), r.size, fp(in.a)[0]); break;
    case Store::F64: std::fill_n(dp(in.res), r.size, dp(in.a)[0]); break;
    case Store::I64: std::fill_n(ip(in.res), r.size, ip(in.a)[0]); break;
    }
    return true;
  }
  case Opcode::Broadcast:
    execBroadcast(in);
    return true;
  case Opcode::AddPtr: {
    const Slot &r = slot(in.res);
    int64_t scale = memBytes(r.pointee, r.pointeeBits);
    const int64_t *ptr = ip(in.a), *off = ip(in.b);
    int64_t *out = ip(in.res);
    for (size_t k = 0; k < r.size; ++k)
      out[k] = int64_t(uint64_t(ptr[k]) + uint64_t(off[k]) * uint64_t(scale));
    return true;
  }
  case Opcode::Load:
    return execLoad(in);
  case Opcode::Store:
    return execStore(in);
  case Opcode::Reduce:
    execReduce(in);
    return true;
  case Opcode::Dot:
    execDot(in);
    return true;
  case Opcode::AtomicRMW:
    return execAtomic(in);
  case Opcode::Print:
    execPrint(in);
    return true;
  case Opcode::Assert:
    return execAssert(in);
  case Opcode::Fma: {
    const Slot &r = slot(in.res);
    if (r.store == Store::F64) {
      for (size_t k = 0; k < r.size; ++k)
        dp(in.res)[k] = std::fma(dp(in.a)[k], dp(in.b)[k], dp(in.c)[k]);
    } else {
      for (size_t k = 0; k < r.size; ++k)
        fp(in.res)[k] = std::fma(fp(in.a)[k], fp(in.b)[k], fp(in.c)[k]);
      roundNarrow(r.elem, fp(in.res), r.size);
    }
    return true;
  }
  case Opcode::CmpI:
  case Opcode::CmpF:
    execCompare(in);
    return true;
  case Opcode::Select:
    execSelect(in);
    return true;
  case Opcode::IntCast:
  case Opcode::ZeroExt:
  case Opcode::SIToFP:
  case Opcode::UIToFP:
  case Opcode::FPToSI:
  case Opcode::FPToUI:
  case Opcode::FloatCast:
  case Opcode::BitcastToInt:
  case Opcode::BitcastToFloat:
    execCast(in);
    return true;
  default:
    break;
  }
  const Slot &r = slot(in.res);
  uint32_t b = in.b == kNoSlot ? in.a : in.b;
  if (r.store == Store::F32) {
    if (floatOp(in.op, fp(in.res), fp(in.a), fp(b), r.size)) {
      roundNarrow(r.elem, fp(in.res), r.size);
      return true;
    }
  } else if (r.store == Store::F64) {
    if (floatOp(in.op, dp(in.res), dp(in.a), dp(b), r.size))
      return true;
  } else if (intOp(in.op, r.bits, ip(in.res), ip(in.a), ip(b), r.size)) {
    return true;
  }
  return fail(in, "internal error: instruction " + std::to_string(int(in.op)) +
                      " on " + r.typeName);
}

bool Frame::run() {
  const std::vector<Instr> &code = p.code;
  size_t pc = 0;
  while (pc < code.size()) {
    const Instr &in = code[pc];
    switch (in.op) {
    case Opcode::ForInit:
      ip(in.res)[0] = ip(in.a)[0];
      copies(in);
      ++pc;
      break;
    case Opcode::ForCheck: {
      int64_t iv = ip(in.a)[0], ub = ip(in.b)[0];
      bool more = in.imm ? uint64_t(iv) < uint64_t(ub) : iv < ub;
      if (!more) {
        pc = in.target;
        break;
      }
      copies(in);
      ++pc;
      break;
    }
    case Opcode::ForNext: {
      copies(in);
      int64_t step = ip(in.b)[0];
      if (step <= 0)
        return fail(in, "scf.for step must be positive, got " + std::to_string(step));
      int64_t *iv = ip(in.a);
      int64_t next = int64_t(uint64_t(*iv) + uint64_t(step));
      // An induction variable that would wrap ends the loop (as the GPU's would not: be safe).
      if (next < *iv) {
        pc = code[in.target].target;
        break;
      }
      *iv = sext(next, slot(in.a).bits);
      pc = in.target;
      break;
    }
    case Opcode::IfBranch:
      pc = ip(in.a)[0] ? pc + 1 : in.target;
      break;
    case Opcode::Yield:
      copies(in);
      pc = in.target;
      break;
    case Opcode::Return:
      return true;
    default:
      if (!exec(in))
        return false;
      ++pc;
      break;
    }
  }
  return true;
}

std::string argumentError(const Program &p, size_t i, const std::string &message) {
  return "argument " + std::to_string(i + 1) + " of " + p.name + ": " + message;
}

} // namespace

namespace tessel::interp {

llvm::Error CompiledKernel::run(const LaunchGrid &grid, llvm::ArrayRef<Arg> args,
                                const MemoryMap &memory) const {
  const Program &p = *program_;
  if (grid.x < 0 || grid.y < 0 || grid.z < 0)
    return llvm::createStringError("negative grid dimension for kernel " + p.name);
  if (args.size() != p.argSlots.size())
    return llvm::createStringError("kernel " + p.name + " takes " +
                                   std::to_string(p.argSlots.size()) + " arguments, got " +
                                   std::to_string(args.size()));
  Frame frame(p, memory);
  for (size_t i = 0; i < args.size(); ++i) {
    const Arg &arg = args[i];
    uint32_t s = p.argSlots[i];
    const Slot &slot = p.slots[s];
    auto mismatch = [&] {
      return llvm::createStringError(argumentError(
          p, i, "expected " + slot.typeName + ", got " + std::string(arg.kindName())));
    };
    switch (slot.elem) {
    case Elem::Ptr:
      if (!arg.isPointer())
        return mismatch();
      frame.ip(s)[0] = int64_t(arg.address());
      break;
    case Elem::Int: {
      if (!arg.isInteger())
        return mismatch();
      int64_t v = arg.intValue();
      bool fits = arg.fitsInt64() && (slot.bits >= 64 || sext(v, slot.bits) == v ||
                                      (slot.bits == 1 && v == 1));
      if (!fits)
        return llvm::createStringError(
            argumentError(p, i, "value " + arg.valueText() + " does not fit " + slot.typeName));
      frame.ip(s)[0] = sext(v, slot.bits);
      break;
    }
    default: {
      if (!arg.isFloat())
        return mismatch();
      double v = arg.floatValue();
      if (slot.elem == Elem::F64)
        frame.dp(s)[0] = v;
      else if (slot.elem == Elem::F32)
        frame.fp(s)[0] = float(v);
      else if (slot.elem == Elem::F16)
        frame.fp(s)[0] = doubleToHalfValue(v);
      else
        frame.fp(s)[0] = doubleToBF16Value(v);
      break;
    }
    }
  }
  frame.num[0] = grid.x;
  frame.num[1] = grid.y;
  frame.num[2] = grid.z;
  for (int64_t z = 0; z < grid.z; ++z)
    for (int64_t y = 0; y < grid.y; ++y)
      for (int64_t x = 0; x < grid.x; ++x) {
        frame.pid[0] = x;
        frame.pid[1] = y;
        frame.pid[2] = z;
        if (!frame.run())
          return llvm::createStringError(frame.error);
      }
  return llvm::Error::success();
}

} // namespace tessel::interp
