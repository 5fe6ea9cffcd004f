//===- tools/tessel-plan/Bucket.cpp - DDP's gradient bucket size --------===//

#include "tools/tessel-plan/Bucket.h"

#include "package/Json.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tessel::plan {

double exposedOverheadSeconds(double gradientBytes, double buckets, double overheadSeconds,
                              double bytesPerSecond) {
  if (!(buckets > 0 && bytesPerSecond > 0))
    throw std::invalid_argument("the bucket count and the bandwidth must be positive");
  return buckets * overheadSeconds + gradientBytes / (buckets * bytesPerSecond);
}

int64_t optimalBucketBytes(double gradientBytes, double overheadSeconds, double bytesPerSecond,
                           int64_t minBytes) {
  double best = std::sqrt(std::max(0.0, gradientBytes * overheadSeconds * bytesPerSecond));
  double upper = std::max(gradientBytes, static_cast<double>(minBytes));
  return static_cast<int64_t>(std::clamp(best, static_cast<double>(minBytes), upper));
}

AllReduceCostModel fitAllReduceCost(const std::vector<double> &bytes,
                                    const std::vector<double> &seconds) {
  if (bytes.size() != seconds.size() || bytes.size() < 2)
    throw std::invalid_argument("the all-reduce cost fit needs at least two measurements");
  double n = static_cast<double>(bytes.size()), sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    sx += bytes[i];
    sy += seconds[i];
    sxx += bytes[i] * bytes[i];
    sxy += bytes[i] * seconds[i];
  }
  double denom = n * sxx - sx * sx;
  double slope = denom > 0 ? (n * sxy - sx * sy) / denom : 0;
  double intercept = (sy - slope * sx) / n;
  AllReduceCostModel model;
  model.overheadSeconds = std::max(0.0, intercept);
  // A flat or negative slope (noise) means bandwidth is not what limits: call it very fast.
  model.bytesPerSecond = slope > 0 ? 1.0 / slope : 1e15;
  return model;
}

std::optional<AllReduceCostModel> fitCollectiveJson(const std::string &path,
                                                    const std::string &collective) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot read '" + path + "'");
  std::stringstream text;
  text << in.rdbuf();
  tessel::Json json = tessel::Json::parse(text.str(), path);
  const tessel::Json *results = json.find("results");
  if (!results || !results->isArray())
    throw std::runtime_error("'" + path + "' has no results array (tessel-bench allreduce --json)");
  std::vector<double> bytes, seconds;
  for (const tessel::Json &row : results->asArray()) {
    const tessel::Json *kind = row.find("collective");
    std::string name = kind && kind->isString() ? kind->asString() : "all-reduce";
    if (name != collective)
      continue;
    const tessel::Json *b = row.find("bytes"), *ms = row.find("median_ms");
    if (!b || !ms || !b->isNumber() || !ms->isNumber())
      throw std::runtime_error("'" + path + "': a row lacks bytes or median_ms");
    bytes.push_back(b->asDouble());
    seconds.push_back(ms->asDouble() / 1e3);
  }
  if (bytes.empty())
    return std::nullopt;
  return fitAllReduceCost(bytes, seconds);
}

AllReduceCostModel fitAllReduceJson(const std::string &path) {
  std::optional<AllReduceCostModel> model = fitCollectiveJson(path, "all-reduce");
  if (!model)
    throw std::runtime_error("'" + path + "' has no all-reduce rows (tessel-bench allreduce --json)");
  return *model;
}

} // namespace tessel::plan
