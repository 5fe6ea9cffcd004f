//===- runtime/TuningCache.cpp - The autotuner's on-disk cache ------------===//
#include "runtime/TuningCache.h"

#include "package/Error.h"
#include "package/FileUtil.h"
#include "package/Hash.h"
#include "package/Json.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tessel;

static constexpr const char *kFormat = "tessel-autotune";

void tessel::makeDirectories(const std::string &path) {
  if (path.empty())
    throw Error("cannot create a directory with an empty name");
  for (size_t at = 1; at <= path.size(); ++at) {
    if (at != path.size() && path[at] != '/')
      continue;
    std::string prefix = path.substr(0, at);
    if (::mkdir(prefix.c_str(), 0755) == 0 || errno == EEXIST)
      continue;
    throw Error("cannot create directory '" + prefix +
                "': " + std::strerror(errno));
  }
  struct stat info;
  if (::stat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    throw Error("'" + path + "' is not a directory");
}

std::string TuningKey::text() const {
  return "kernel=" + kernel + "; package=" + packageHash + "; key=" +
         keyValues + "; device=" + device +
         "; driver=" + std::to_string(driverVersion);
}

std::string TuningCache::defaultDirectory() {
  if (const char *dir = std::getenv("TESSEL_CACHE_DIR"))
    return dir;
  const char *home = std::getenv("HOME");
  if (!home || !*home) {
    struct passwd *entry = ::getpwuid(::getuid());
    home = entry ? entry->pw_dir : nullptr;
  }
  if (!home || !*home)
    return {};
  return std::string(home) + "/.cache/tessel";
}

TuningCache::TuningCache(std::string directory, Warn warn)
    : directory_(std::move(directory)), warn_(std::move(warn)) {
  while (directory_.size() > 1 && directory_.back() == '/')
    directory_.pop_back();
}

void TuningCache::warn(const std::string &message) const {
  if (warn_)
    warn_(message);
  else
    std::cerr << message << std::endl;
}

/// A kernel name as a file-name component (letters, digits, _ - .).
static std::string safeName(const std::string &name) {
  std::string result;
  for (char c : name)
    result += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' ||
               c == '-')
                  ? c
                  : '_';
  return result.empty() ? "_" : result.substr(0, 64);
}

std::string TuningCache::pathFor(const TuningKey &key) const {
  return directory_ + "/autotune/" + safeName(key.kernel) + "-" +
         key.packageHash + "/" + fnv1aHex(key.text()) + ".json";
}

std::string TuningCache::serialize(const TuningKey &key,
                                   const TuningRecord &record) {
  Json root = Json::object();
  root.set("format", kFormat);
  root.set("version", kVersion);
  root.set("kernel", key.kernel);
  root.set("package_hash", key.packageHash);
  root.set("key", key.keyValues);
  root.set("device", key.device);
  root.set("driver", key.driverVersion);
  root.set("config", record.config);
  root.set("config_text", record.configText);
  Json times = Json::array();
  for (double ms : record.timesMs)
    times.push(ms);
  root.set("times_ms", std::move(times));
  return root.pretty() + "\n";
}

TuningRecord TuningCache::parse(const std::string &text,
                                const TuningKey &key) {
  Json root = Json::parse(text, "cache file");
  auto field = [&](const char *name) -> const Json & {
    const Json *value = root.find(name);
    if (!value)
      throw Error(std::string("missing field '") + name + "'");
    return *value;
  };
  auto string = [&](const char *name) -> const std::string & {
    const Json &value = field(name);
    if (!value.isString())
      throw Error(std::string("field '") + name + "' is not a string");
    return value.asString();
  };
  auto integer = [&](const char *name) {
    const Json &value = field(name);
    if (!value.isInt())
      throw Error(std::string("field '") + name + "' is not an integer");
    return value.asInt();
  };
  if (!root.isObject() || string("format") != kFormat)
    throw Error("not a tessel-autotune file");
  if (integer("version") != kVersion)
    throw Error("version " + std::to_string(integer("version")) +
                ", expected " + std::to_string(kVersion));
  // A file under the right name with another key: a hash collision or a
  // hand-edited file. Either way it does not answer this key.
  auto same = [&](const char *name, const std::string &expected) {
    if (string(name) != expected)
      throw Error(std::string("field '") + name + "' is '" + string(name) +
                  "', expected '" + expected + "'");
  };
  same("kernel", key.kernel);
  same("package_hash", key.packageHash);
  same("key", key.keyValues);
  same("device", key.device);
  if (integer("driver") != key.driverVersion)
    throw Error("field 'driver' is " + std::to_string(integer("driver")) +
                ", expected " + std::to_string(key.driverVersion));
  TuningRecord record;
  int64_t config = integer("config");
  if (config < 0 || config > 4095)
    throw Error("field 'config' is out of range");
  record.config = int(config);
  record.configText = string("config_text");
  const Json &times = field("times_ms");
  if (!times.isArray())
    throw Error("field 'times_ms' is not an array");
  for (const Json &ms : times.asArray()) {
    if (!ms.isNumber())
      throw Error("field 'times_ms' holds a non-number");
    record.timesMs.push_back(ms.asDouble());
  }
  return record;
}

std::optional<TuningRecord> TuningCache::load(const TuningKey &key) const {
  if (!enabled())
    return std::nullopt;
  std::string path = pathFor(key);
  if (::access(path.c_str(), F_OK) != 0)
    return std::nullopt;
  try {
    return parse(readFile(path), key);
  } catch (const std::exception &error) {
    std::string reason = error.what();
    for (char &c : reason)
      if (c == '\n')
        c = ' ';
    warn("tessel: warning: ignoring autotune cache file " + path + " (" +
         reason + "); it will be rewritten");
    return std::nullopt;
  }
}

bool TuningCache::store(const TuningKey &key,
                        const TuningRecord &record) const {
  if (!enabled())
    return false;
  std::string path = pathFor(key);
  try {
    makeDirectories(path.substr(0, path.rfind('/')));
    writeFileAtomic(path, serialize(key, record));
    return true;
  } catch (const std::exception &error) {
    warn(std::string("tessel: warning: cannot write the autotune cache (") +
         error.what() + "); the choice is kept in memory only");
    return false;
  }
}
