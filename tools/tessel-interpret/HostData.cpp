//===- tools/tessel-interpret/HostData.cpp - argument buffers for a run ---===//
#include "tools/tessel-interpret/HostData.h"

#include "interpreter/FloatBits.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

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

static std::optional<HostData> readNpy(const std::string &path, const std::string &dtype,
                                       std::string &error) {
  std::vector<uint8_t> file;
  if (!readFile(path, file)) {
    error = "cannot read '" + path + "'";
    return std::nullopt;
  }
  if (file.size() < 10 || std::memcmp(file.data(), "\x93NUMPY", 6) != 0) {
    error = path + ": not a .npy file";
    return std::nullopt;
  }
  size_t headerLen = file[6] == 1 ? size_t(file[8] | (file[9] << 8)) : 0;
  size_t start = 10;
  if (file[6] >= 2) {
    headerLen = size_t(file[8]) | size_t(file[9]) << 8 | size_t(file[10]) << 16 |
                size_t(file[11]) << 24;
    start = 12;
  }
  std::string header(file.begin() + long(start), file.begin() + long(start + headerLen));
  auto field = [&](const std::string &key) {
    size_t at = header.find("'" + key + "'");
    if (at == std::string::npos)
      return std::string();
    at = header.find(':', at) + 1;
    while (at < header.size() && header[at] == ' ')
      ++at;
    size_t end = header[at] == '(' ? header.find(')', at) + 1
                 : header[at] == '\'' ? header.find('\'', at + 1) + 1
                                       : header.find(',', at);
    return header.substr(at, end - at);
  };
  std::string descr = field("descr");
  if (field("fortran_order").find("True") != std::string::npos) {
    error = path + ": Fortran-ordered arrays are not supported";
    return std::nullopt;
  }
  // bf16 params read float32 files (numpy has no bf16), rounding each value.
  std::string want = std::string("'") + npyDescr(dtype) + "'";
  std::string fileDtype = dtype;
  if (descr != want && !(dtype == "bf16" && descr == "'<f4'")) {
    error = path + ": dtype " + descr + " does not match the parameter's " + dtype +
            " (expected " + want + ")";
    return std::nullopt;
  }
  if (dtype == "bf16")
    fileDtype = "f32";
  HostData raw{fileDtype, {}, std::vector<uint8_t>(file.begin() + long(start + headerLen), file.end())};
  for (const std::string &d : split(field("shape").substr(1), ','))
    if (d.find_first_of("0123456789") != std::string::npos)
      raw.shape.push_back(std::stoll(d.substr(d.find_first_of("0123456789"))));
  if (fileDtype == dtype)
    return raw;
  HostData data{dtype, raw.shape, std::vector<uint8_t>(raw.count() * 2)};
  for (size_t i = 0; i < raw.count(); ++i)
    data.set(i, raw.get(i));
  return data;
}

std::optional<HostData> makeHostData(const std::string &spec, const std::string &dtype,
                                     unsigned seed, std::string &error) {
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
  size_t count = 1;
  for (const std::string &d : split(parts[next], 'x')) {
    char *end = nullptr;
    long long v = std::strtoll(d.c_str(), &end, 10);
    if (d.empty() || *end || v < 0) {
      error = "bad shape '" + parts[next] + "' in '" + spec + "' (e.g. 1000 or 256x1000)";
      return std::nullopt;
    }
    data.shape.push_back(v);
    count *= size_t(v);
  }
  data.bytes.assign(count * dtypeBytes(dtype), 0);
  double value = next + 1 < parts.size() ? std::atof(parts[next + 1].c_str()) : 0.0;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (size_t i = 0; i < count; ++i) {
    if (kind == "randn") data.set(i, normal(rng));
    else if (kind == "rand") data.set(i, uniform(rng));
    else if (kind == "zeros") data.set(i, 0);
    else if (kind == "ones") data.set(i, 1);
    else if (kind == "arange") data.set(i, double(i));
    else if (kind == "full") data.set(i, value);
    else {
      error = "unknown generator '" + kind + "' (randn, rand, zeros, ones, arange, full)";
      return std::nullopt;
    }
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
