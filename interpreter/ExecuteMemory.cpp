//===- interpreter/ExecuteMemory.cpp - checked loads, stores, atomics, output ===//
#include "interpreter/Elementwise.h"
#include "interpreter/Frame.h"

#include "dialect/TesselDialect.h"

#include <cstdio>
#include <cstring>
#include <fstream>

namespace tessel::interp::detail {

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

} // namespace

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

bool Frame::fail(const Instr &in, const std::string &message) {
  const std::string &where = p.locations[in.loc];
  error = (where.empty() ? "" : where + ": ") + "error: " + message + " (kernel '" + p.name +
          "', program (" + std::to_string(pid[0]) + ", " + std::to_string(pid[1]) + ", " +
          std::to_string(pid[2]) + "))" + (where.empty() ? "" : sourceExcerpt(where));
  return false;
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

} // namespace tessel::interp::detail
