//===- test/unit/TuningCacheTest.cpp - The autotuner's on-disk cache ------===//
//
// Keying and invalidation, corrupt and truncated files (a one-line warning,
// then treated as absent), unwritable directories, and several processes
// (fork) writing the same and different keys at once.
//
//===----------------------------------------------------------------------===//
#include "package/FileUtil.h"
#include "runtime/TuningCache.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace tessel;

namespace {
std::string makeTempDir() {
  char pattern[] = "/tmp/tessel-tuningcache-test-XXXXXX";
  return mkdtemp(pattern);
}

TuningKey sampleKey() {
  return {"softmax", "0123456789abcdef", "n_cols=4096; aligned=out,inp",
          "NVIDIA H100 80GB HBM3", 13000};
}

TuningRecord sampleRecord(int config = 1) {
  return {config, "BLOCK=2048 num_warps=8 num_stages=1", {0.5, 0.25, -1}};
}

/// A cache whose warnings are collected.
struct Collecting {
  std::vector<std::string> warnings;
  TuningCache cache;
  explicit Collecting(const std::string &dir)
      : cache(dir, [this](const std::string &w) { warnings.push_back(w); }) {}
};

void writeRaw(const std::string &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
}

int countFiles(const std::string &dir) {
  int count = 0;
  DIR *handle = opendir(dir.c_str());
  if (!handle)
    return 0;
  while (dirent *entry = readdir(handle))
    if (entry->d_name[0] != '.')
      ++count;
  closedir(handle);
  return count;
}
} // namespace

TEST(TuningCache, RoundTripAndLayout) {
  std::string dir = makeTempDir();
  Collecting c(dir);
  TuningKey key = sampleKey();
  EXPECT_FALSE(c.cache.load(key).has_value());
  ASSERT_TRUE(c.cache.store(key, sampleRecord()));
  std::string path = c.cache.pathFor(key);
  EXPECT_EQ(path.rfind(dir + "/autotune/softmax-0123456789abcdef/", 0), 0u)
      << path;
  std::optional<TuningRecord> record = c.cache.load(key);
  ASSERT_TRUE(record.has_value());
  EXPECT_EQ(record->config, 1);
  EXPECT_EQ(record->configText, "BLOCK=2048 num_warps=8 num_stages=1");
  EXPECT_EQ(record->timesMs, (std::vector<double>{0.5, 0.25, -1}));
  EXPECT_TRUE(c.warnings.empty());
  // The file names every part of its key, for a person reading it.
  std::string text = readFile(path);
  for (const char *part : {"softmax", "0123456789abcdef", "n_cols=4096",
                           "NVIDIA H100 80GB HBM3", "13000"})
    EXPECT_NE(text.find(part), std::string::npos) << part;
}

TEST(TuningCache, EveryKeyPartSelectsItsOwnEntry) {
  std::string dir = makeTempDir();
  Collecting c(dir);
  TuningKey base = sampleKey();
  c.cache.store(base, sampleRecord(1));
  std::vector<TuningKey> others(5, base);
  others[0].kernel = "softmax_bwd";
  others[1].packageHash = "fedcba9876543210"; // the package changed
  others[2].keyValues = "n_cols=8192; aligned=out,inp";
  others[3].device = "NVIDIA H200";
  others[4].driverVersion = 13010; // a driver update
  for (const TuningKey &key : others) {
    EXPECT_NE(c.cache.pathFor(key), c.cache.pathFor(base)) << key.text();
    EXPECT_FALSE(c.cache.load(key).has_value()) << key.text();
  }
  EXPECT_EQ(c.cache.load(base)->config, 1);
  EXPECT_TRUE(c.warnings.empty());
}

TEST(TuningCache, ForeignKeyInTheFileIsNotUsed) {
  // A file at this key's path that belongs to another key (a collision or
  // a hand edit) must not answer this key.
  std::string dir = makeTempDir();
  Collecting c(dir);
  TuningKey key = sampleKey(), other = sampleKey();
  other.driverVersion = 12080;
  makeDirectories(c.cache.pathFor(key).substr(
      0, c.cache.pathFor(key).rfind('/')));
  writeRaw(c.cache.pathFor(key), TuningCache::serialize(other, sampleRecord()));
  EXPECT_FALSE(c.cache.load(key).has_value());
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("field 'driver' is 12080, expected 13000"),
            std::string::npos)
      << c.warnings[0];
}

TEST(TuningCache, CorruptAndTruncatedFilesWarnOnceAndAreIgnored) {
  std::string dir = makeTempDir();
  TuningKey key = sampleKey();
  std::string good = TuningCache::serialize(key, sampleRecord());
  std::vector<std::string> bad = {
      "",
      good.substr(0, good.size() / 2), // truncated
      std::string("\x00\xff\xfe garbage", 11),
      "[1, 2, 3]",
      "{\"format\": \"tessel-autotune\", \"version\": 99}",
      "{\"format\": \"something-else\"}",
  };
  // Valid JSON with a wrong type in a field.
  std::string wrongType = good;
  wrongType.replace(wrongType.find("\"config\": 1"), 11, "\"config\": \"1\"");
  bad.push_back(wrongType);
  for (size_t i = 0; i < bad.size(); ++i) {
    Collecting c(dir);
    std::string path = c.cache.pathFor(key);
    makeDirectories(path.substr(0, path.rfind('/')));
    writeRaw(path, bad[i]);
    EXPECT_FALSE(c.cache.load(key).has_value()) << i;
    ASSERT_EQ(c.warnings.size(), 1u) << i;
    const std::string &warning = c.warnings[0];
    EXPECT_EQ(warning.find('\n'), std::string::npos) << warning;
    EXPECT_EQ(warning.rfind("tessel: warning: ignoring autotune cache file " +
                                path,
                            0),
              0u)
        << warning;
    // Rewriting repairs it.
    ASSERT_TRUE(c.cache.store(key, sampleRecord(2)));
    EXPECT_EQ(c.cache.load(key)->config, 2) << i;
    EXPECT_EQ(c.warnings.size(), 1u);
  }
}

TEST(TuningCache, UnwritableDirectoryWarnsAndDoesNotThrow) {
  std::string dir = makeTempDir();
  std::string file = dir + "/not-a-dir";
  writeRaw(file, "x");
  Collecting c(file); // the cache "directory" is a regular file
  EXPECT_FALSE(c.cache.load(sampleKey()).has_value());
  EXPECT_FALSE(c.cache.store(sampleKey(), sampleRecord()));
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("cannot write the autotune cache"),
            std::string::npos);

  Collecting disabled("");
  EXPECT_FALSE(disabled.cache.enabled());
  EXPECT_FALSE(disabled.cache.store(sampleKey(), sampleRecord()));
  EXPECT_FALSE(disabled.cache.load(sampleKey()).has_value());
  EXPECT_TRUE(disabled.warnings.empty());
}

TEST(TuningCache, DefaultDirectoryFollowsTheEnvironment) {
  const char *saved = std::getenv("TESSEL_CACHE_DIR");
  std::string savedValue = saved ? saved : "";
  ::setenv("TESSEL_CACHE_DIR", "/some/where", 1);
  EXPECT_EQ(TuningCache::defaultDirectory(), "/some/where");
  ::unsetenv("TESSEL_CACHE_DIR");
  const char *home = std::getenv("HOME");
  if (home && *home) {
    EXPECT_EQ(TuningCache::defaultDirectory(),
              std::string(home) + "/.cache/tessel");
  }
  if (saved)
    ::setenv("TESSEL_CACHE_DIR", savedValue.c_str(), 1);
}

TEST(TuningCache, ConcurrentProcessesNeverCorruptIt) {
  // 8 processes, each storing 50 times into one shared key and into its own
  // key, while reading the shared key: every read sees a complete file.
  std::string dir = makeTempDir();
  constexpr int kProcesses = 8, kRounds = 50;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int failures = 0;
      std::vector<std::string> warnings;
      TuningCache cache(dir, [&](const std::string &w) { warnings.push_back(w); });
      TuningKey shared = sampleKey();
      TuningKey own = sampleKey();
      own.keyValues = "n_cols=" + std::to_string(p);
      for (int round = 0; round < kRounds; ++round) {
        failures += !cache.store(shared, sampleRecord(round % 4));
        failures += !cache.store(own, sampleRecord(p));
        std::optional<TuningRecord> seen = cache.load(shared);
        failures += !seen || seen->config < 0 || seen->config > 3;
      }
      ::_exit(failures == 0 && warnings.empty() ? 0 : 1);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  Collecting c(dir);
  ASSERT_TRUE(c.cache.load(sampleKey()).has_value());
  for (int p = 0; p < kProcesses; ++p) {
    TuningKey own = sampleKey();
    own.keyValues = "n_cols=" + std::to_string(p);
    std::optional<TuningRecord> record = c.cache.load(own);
    ASSERT_TRUE(record.has_value()) << p;
    EXPECT_EQ(record->config, p);
  }
  EXPECT_TRUE(c.warnings.empty());
  // No temporary files are left behind: 1 shared + kProcesses own.
  std::string path = c.cache.pathFor(sampleKey());
  EXPECT_EQ(countFiles(path.substr(0, path.rfind('/'))), 1 + kProcesses);
}
