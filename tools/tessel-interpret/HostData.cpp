//===- tools/tessel-interpret/HostData.cpp - argument buffers for a run ---===//
#include "tools/tessel-interpret/HostData.h"

#include "interpreter/FloatBits.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <new>
#include <random>
#include <sstream>
#include <unistd.h>

namespace tessel::interpret {

using namespace tessel::interp;

size_t dtypeBytes(const std::string &dtype) {
  if (dtype == "f64" || dtype == "i64")
    return 8;
  if (dtype == "f32" || dtype == "i32")
    return 4;
  if (dtype == "f16" || dtype == "bf16" || dtype == "i16")
    return 2;
  if (dtype == "i8" || dtype == "i1")
    return 1;
  return 0;
}

size_t HostData::count() const { return bytes.size() / dtypeBytes(dtype); }

double HostData::get(size_t i) const {
  const uint8_t *p = bytes.data() + i * dtypeBytes(dtype);
  auto read = [p](auto v) {
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  if (dtype == "f32") return read(float());
  if (dtype == "f64") return read(double());
  if (dtype == "f16") return halfToFloat(read(uint16_t()));
  if (dtype == "bf16") return bf16ToFloat(read(uint16_t()));
  if (dtype == "i64") return double(read(int64_t()));
  if (dtype == "i32") return read(int32_t());
  if (dtype == "i16") return read(int16_t());
  if (dtype == "i1") return read(int8_t()) ? 1 : 0;
  return read(int8_t());
}

void HostData::set(size_t i, double v) {
  uint8_t *p = bytes.data() + i * dtypeBytes(dtype);
  auto write = [p](auto x) { std::memcpy(p, &x, sizeof x); };
  if (dtype == "f32") write(float(v));
  else if (dtype == "f64") write(v);
  else if (dtype == "f16") write(floatToHalf(doubleToHalfValue(v)));
  else if (dtype == "bf16") write(floatToBF16(doubleToBF16Value(v)));
  else if (dtype == "i64") write(int64_t(v));
  else if (dtype == "i32") write(int32_t(v));
  else if (dtype == "i16") write(int16_t(v));
  else if (dtype == "i1") write(int8_t(v != 0));
  else write(int8_t(v));
}

static std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> parts;
  std::stringstream in(s);
  std::string part;
  while (std::getline(in, part, sep))
    parts.push_back(part);
  return parts;
}

static bool readFile(const std::string &path, std::vector<uint8_t> &out) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return true;
}

/// numpy descr <-> dtype.
static const char *npyDescr(const std::string &dtype) {
  if (dtype == "f32" || dtype == "bf16") return "<f4";
  if (dtype == "f64") return "<f8";
  if (dtype == "f16") return "<f2";
  if (dtype == "i64") return "<i8";
  if (dtype == "i32") return "<i4";
  if (dtype == "i16") return "<i2";
  if (dtype == "i1") return "|b1";
  return "|i1";
}

/// The largest host buffer: half the machine's memory (Linux overcommits, so a larger
/// allocation "succeeds" and the process is killed while zeroing it).
static uint64_t maxHostBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0)
    return uint64_t(1) << 32;
  return uint64_t(pages) * uint64_t(pageSize) / 2;
}

/// Elements of `shape`, or nullopt with `error` set when the product overflows or the
/// buffer would exceed maxHostBytes().
static std::optional<size_t> checkedCount(const std::vector<int64_t> &shape, size_t elementBytes,
                                          const std::string &what, std::string &error) {
  uint64_t count = 1, bytes = 0;
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(count, uint64_t(d), &count)) {
      error = what + ": the shape's element count overflows 64 bits";
      return std::nullopt;
    }
  uint64_t limit = maxHostBytes();
  if (__builtin_mul_overflow(count, uint64_t(elementBytes), &bytes) || bytes > limit) {
    error = what + ": " + std::to_string(count) + " elements need more than half of this " +
            "machine's memory (" + std::to_string(limit >> 20) + " MiB)";
    return std::nullopt;
  }
  return size_t(count);
}

/// `bytes` zeroed bytes, or nullopt with `error` set when the allocation fails.
static bool allocate(std::vector<uint8_t> &out, size_t bytes, const std::string &what,
                     std::string &error) {
  try {
    out.assign(bytes, 0);
    return true;
  } catch (const std::bad_alloc &) {
    error = what + ": cannot allocate " + std::to_string(bytes) + " bytes";
    return false;
  }
}

/// The value of `key` in a .npy header dict ("{'descr': '<f4', 'shape': (2, 3), ...}"):
/// the quoted string, the parenthesised tuple or the bare word; nullopt when absent or
/// unterminated.
static std::optional<std::string> npyField(const std::string &header, const std::string &key) {
  size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    return std::nullopt;
  at = header.find(':', at);
  if (at == std::string::npos)
    return std::nullopt;
  at = header.find_first_not_of(' ', at + 1);
  if (at == std::string::npos)
    return std::nullopt;
  size_t end = header[at] == '('    ? header.find(')', at)
               : header[at] == '\'' ? header.find('\'', at + 1)
                                    : header.find_first_of(",}", at) - 1;
  if (end == std::string::npos || end + 1 > header.size())
    return std::nullopt;
  return header.substr(at, end + 1 - at);
}

/// "(2, 3)" -> {2, 3}; "()" -> {} (a scalar); nullopt when malformed.
static std::optional<std::vector<int64_t>> parseNpyShape(const std::string &tuple) {
  if (tuple.size() < 2 || tuple.front() != '(' || tuple.back() != ')')
    return std::nullopt;
  std::vector<int64_t> shape;
  for (std::string d : split(tuple.substr(1, tuple.size() - 2), ',')) {
    size_t first = d.find_first_not_of(' '), last = d.find_last_not_of(' ');
    if (first == std::string::npos) // "(5,)" ends with an empty part
      continue;
    d = d.substr(first, last - first + 1);
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(d.c_str(), &end, 10);
    if (*end || errno == ERANGE || v < 0)
      return std::nullopt;
    shape.push_back(v);
  }
  return shape;
}

static std::optional<HostData> readNpy(const std::string &path, const std::string &dtype,
                                       std::string &error) {
  std::vector<uint8_t> file;
  if (!readFile(path, file)) {
    error = "cannot read '" + path + "'";
    return std::nullopt;
  }
  return parseNpy(file, path, dtype, error);
}

std::optional<HostData> parseNpy(const std::vector<uint8_t> &file, const std::string &path,
                                 const std::string &dtype, std::string &error) {
  if (dtypeBytes(dtype) == 0) {
    error = path + ": the parameter's element type " + dtype + " has no host buffers";
    return std::nullopt;
  }
  if (file.size() < 10 || std::memcmp(file.data(), "\x93NUMPY", 6) != 0) {
    error = path + ": not a .npy file";
    return std::nullopt;
  }
  size_t headerLen = size_t(file[8]) | size_t(file[9]) << 8;
  size_t start = 10;
  if (file[6] >= 2) {
    if (file.size() < 12) {
      error = path + ": truncated .npy header";
      return std::nullopt;
    }
    headerLen = size_t(file[8]) | size_t(file[9]) << 8 | size_t(file[10]) << 16 |
                size_t(file[11]) << 24;
    start = 12;
  }
  if (headerLen > file.size() - start) {
    error = path + ": the .npy header (" + std::to_string(headerLen) +
            " bytes) runs past the end of the file (" + std::to_string(file.size()) + " bytes)";
    return std::nullopt;
  }
  std::string header(file.begin() + long(start), file.begin() + long(start + headerLen));
  std::optional<std::string> descr = npyField(header, "descr");
  std::optional<std::string> shapeText = npyField(header, "shape");
  if (!descr || !shapeText) {
    error = path + ": the .npy header has no " + (descr ? "'shape'" : "'descr'");
    return std::nullopt;
  }
  if (npyField(header, "fortran_order").value_or("").find("True") != std::string::npos) {
    error = path + ": Fortran-ordered arrays are not supported";
    return std::nullopt;
  }
  // bf16 params read float32 files (numpy has no bf16), rounding each value.
  std::string want = std::string("'") + npyDescr(dtype) + "'";
  if (*descr != want && !(dtype == "bf16" && *descr == "'<f4'")) {
    error = path + ": dtype " + *descr + " does not match the parameter's " + dtype +
            " (expected " + want + ")";
    return std::nullopt;
  }
  std::string fileDtype = dtype == "bf16" ? "f32" : dtype;
  std::optional<std::vector<int64_t>> shape = parseNpyShape(*shapeText);
  if (!shape) {
    error = path + ": malformed shape " + *shapeText + " in the .npy header";
    return std::nullopt;
  }
  std::optional<size_t> count = checkedCount(*shape, dtypeBytes(fileDtype), path, error);
  if (!count)
    return std::nullopt;
  size_t dataBytes = file.size() - start - headerLen;
  if (*count * dtypeBytes(fileDtype) != dataBytes) {
    error = path + ": shape " + *shapeText + " needs " +
            std::to_string(*count * dtypeBytes(fileDtype)) + " bytes of data, the file has " +
            std::to_string(dataBytes);
    return std::nullopt;
  }
  HostData raw{fileDtype, *shape, std::vector<uint8_t>(file.begin() + long(start + headerLen), file.end())};
  if (fileDtype == dtype)
    return raw;
  HostData data{dtype, raw.shape, {}};
  if (!allocate(data.bytes, raw.count() * 2, path, error))
    return std::nullopt;
  for (size_t i = 0; i < raw.count(); ++i)
    data.set(i, raw.get(i));
  return data;
}

std::optional<HostData> makeHostData(const std::string &spec, const std::string &dtype,
                                     unsigned seed, std::string &error) {
  if (dtypeBytes(dtype) == 0) {
    error = "'" + spec + "': the parameter's element type " + dtype + " has no host buffers";
    return std::nullopt;
  }
  if (!spec.empty() && spec[0] == '@') {
    std::string path = spec.substr(1);
    if (path.size() > 4 && path.compare(path.size() - 4, 4, ".npy") == 0)
      return readNpy(path, dtype, error);
    HostData data{dtype, {}, {}};
    if (!readFile(path, data.bytes)) {
      error = "cannot read '" + path + "'";
      return std::nullopt;
    }
    if (data.bytes.size() % dtypeBytes(dtype) != 0) {
      error = path + ": " + std::to_string(data.bytes.size()) + " bytes is not a whole number of " +
              dtype + " elements";
      return std::nullopt;
    }
    data.shape = {int64_t(data.count())};
    return data;
  }
  std::vector<std::string> parts = split(spec, ':');
  if (parts.size() < 2) {
    error = "expected KIND[:DTYPE]:SHAPE[:VALUE] or @FILE, got '" + spec + "'";
    return std::nullopt;
  }
  const std::string &kind = parts[0];
  if (kind != "randn" && kind != "rand" && kind != "zeros" && kind != "ones" &&
      kind != "arange" && kind != "full") {
    error = "unknown generator '" + kind + "' (randn, rand, zeros, ones, arange, full)";
    return std::nullopt;
  }
  size_t next = 1;
  if (dtypeBytes(parts[1])) {
    if (parts[1] != dtype) {
      error = "'" + spec + "' names " + parts[1] + " but the parameter points to " + dtype;
      return std::nullopt;
    }
    ++next;
  }
  if (next >= parts.size()) {
    error = "'" + spec + "' has no shape";
    return std::nullopt;
  }
  HostData data{dtype, {}, {}};
  for (const std::string &d : split(parts[next], 'x')) {
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(d.c_str(), &end, 10);
    if (d.empty() || *end || v < 0 || errno == ERANGE) {
      error = "bad shape '" + parts[next] + "' in '" + spec +
              "' (non-negative integers below 2^63, e.g. 1000 or 256x1000)";
      return std::nullopt;
    }
    data.shape.push_back(v);
  }
  if (parts[next].empty() || parts.size() > next + 2) {
    error = "expected KIND[:DTYPE]:SHAPE[:VALUE], got '" + spec + "'";
    return std::nullopt;
  }
  double value = 0.0;
  if (next + 1 < parts.size()) {
    const std::string &text = parts[next + 1];
    char *end = nullptr;
    value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end || kind != "full") {
      error = kind != "full" ? "'" + spec + "': only full takes a value"
                             : "'" + text + "' in '" + spec + "' is not a number";
      return std::nullopt;
    }
  }
  std::optional<size_t> count = checkedCount(data.shape, dtypeBytes(dtype), "'" + spec + "'", error);
  if (!count || !allocate(data.bytes, *count * dtypeBytes(dtype), "'" + spec + "'", error))
    return std::nullopt;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (size_t i = 0; i < *count; ++i) {
    if (kind == "randn") data.set(i, normal(rng));
    else if (kind == "rand") data.set(i, uniform(rng));
    else if (kind == "ones") data.set(i, 1);
    else if (kind == "arange") data.set(i, double(i));
    else if (kind == "full") data.set(i, value);
  }
  return data;
}

bool writeHostData(const HostData &data, const std::string &path, std::string &error) {
  std::ofstream out(path, std::ios::binary);
  if (!out) {
    error = "cannot write '" + path + "'";
    return false;
  }
  if (path.size() < 4 || path.compare(path.size() - 4, 4, ".npy") != 0) {
    out.write(reinterpret_cast<const char *>(data.bytes.data()), std::streamsize(data.bytes.size()));
    return bool(out);
  }
  HostData body = data;
  if (data.dtype == "bf16") { // numpy has no bf16: widen to float32
    body = HostData{"f32", data.shape, std::vector<uint8_t>(data.count() * 4)};
    for (size_t i = 0; i < data.count(); ++i)
      body.set(i, data.get(i));
  }
  std::string shape = "(";
  for (int64_t d : data.shape)
    shape += std::to_string(d) + ",";
  if (data.shape.size() > 1)
    shape.pop_back();
  shape += ")";
  std::string header = std::string("{'descr': '") + npyDescr(body.dtype) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = uint16_t(header.size());
  char lenBytes[2] = {char(len & 0xff), char(len >> 8)};
  out.write(lenBytes, 2);
  out << header;
  out.write(reinterpret_cast<const char *>(body.bytes.data()), std::streamsize(body.bytes.size()));
  return bool(out);
}

std::string summarize(const HostData &data, size_t show) {
  std::ostringstream os;
  os << data.dtype << "[";
  for (size_t d = 0; d < data.shape.size(); ++d)
    os << (d ? "x" : "") << data.shape[d];
  os << "]";
  size_t n = data.count(), nans = 0, finite = 0;
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  for (size_t i = 0; i < n; ++i) {
    double v = data.get(i);
    if (std::isnan(v)) {
      ++nans;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    if (std::isfinite(v)) {
      sum += v;
      ++finite;
    }
  }
  if (n)
    os << " min " << lo << " max " << hi << " mean " << (finite ? sum / double(finite) : NAN)
       << " nan " << nans;
  os << ":";
  for (size_t i = 0; i < std::min(n, show); ++i)
    os << " " << data.get(i);
  if (n > show)
    os << " ...";
  return os.str();
}

} // namespace tessel::interpret
