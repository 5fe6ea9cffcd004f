//===- runtime/TuningCache.h - The autotuner's on-disk cache ----*- C++ -*-===//
//
// One small JSON file per tuning decision, under
//   $TESSEL_CACHE_DIR/autotune/<kernel>-<package hash>/<hash of the key>.json
// ($TESSEL_CACHE_DIR defaults to ~/.cache/tessel). The file repeats every part
// of its key (kernel, package hash, key values, device name, driver version)
// and is only used when all of them match, so a new package, another GPU or
// a driver update never reuses a stale choice. Files are written atomically
// (temp + fsync + rename): concurrent processes tuning the same key each
// write a complete file and the last rename wins; one file per key means no
// process ever loses another's entries. A file that is truncated, garbage or
// inconsistent is reported with a one-line warning and treated as absent
// (the tuner then rewrites it); the cache never throws.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_TUNINGCACHE_H
#define TESSEL_RUNTIME_TUNINGCACHE_H

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tessel {

/// Everything a tuning decision depends on.
struct TuningKey {
  std::string kernel;
  std::string packageHash;
  /// The autotune key values and argument alignment, e.g.
  /// "n_cols=4096; aligned=out,inp,stride,n_cols" (see TunedKernel).
  std::string keyValues;
  std::string device;
  int driverVersion = 0;

  /// The canonical one-line text of the whole key (what the file name hashes).
  std::string text() const;
};

/// A tuning decision.
struct TuningRecord {
  int config = 0;
  /// Config::text() when it was chosen: a package whose
  /// config numbering changed is caught even if its hash collided.
  std::string configText;
  /// Median time per config in milliseconds; negative for configs that were
  /// not timed (pruned, do not fit).
  std::vector<double> timesMs;
};

class TuningCache {
public:
  static constexpr int kVersion = 1;
  using Warn = std::function<void(const std::string &)>;

  /// $TESSEL_CACHE_DIR, else $HOME/.cache/tessel (the passwd home when HOME
  /// is unset); empty when neither is known.
  static std::string defaultDirectory();

  /// `directory` empty: a disabled cache (load finds nothing, store does
  /// nothing). `warn` receives one-line warnings (default: stderr).
  explicit TuningCache(std::string directory = defaultDirectory(),
                       Warn warn = nullptr);

  bool enabled() const { return !directory_.empty(); }
  const std::string &directory() const { return directory_; }
  /// The file holding `key`'s decision.
  std::string pathFor(const TuningKey &key) const;

  /// The stored decision, or nullopt when there is none or the file is
  /// unusable (then warns once, in one line, naming the file and why).
  std::optional<TuningRecord> load(const TuningKey &key) const;
  /// Writes the decision atomically, creating directories as needed; on
  /// failure warns and returns false. Never throws.
  bool store(const TuningKey &key, const TuningRecord &record) const;

  /// Serialisation, public for tests.
  static std::string serialize(const TuningKey &key,
                               const TuningRecord &record);
  /// Throws tessel::Error saying what is wrong with `text` for `key`.
  static TuningRecord parse(const std::string &text, const TuningKey &key);

private:
  void warn(const std::string &message) const;

  std::string directory_;
  Warn warn_;
};

/// Creates `path` and its parents (like mkdir -p); throws tessel::Error.
void makeDirectories(const std::string &path);

} // namespace tessel

#endif // TESSEL_RUNTIME_TUNINGCACHE_H
