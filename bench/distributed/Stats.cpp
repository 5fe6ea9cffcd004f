//===- bench/distributed/Stats.cpp - Summaries of timed repetitions -------===//

#include "bench/distributed/Stats.h"

#include <algorithm>
#include <cmath>

namespace tessel::dist {

Summary summarize(std::vector<double> values) {
  Summary s;
  s.count = static_cast<int>(values.size());
  if (values.empty())
    return s;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (double v : values)
    sum += v;
  s.mean = sum / values.size();
  size_t mid = values.size() / 2;
  s.median = values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
  double squares = 0;
  for (double v : values)
    squares += (v - s.mean) * (v - s.mean);
  s.std = values.size() > 1 ? std::sqrt(squares / (values.size() - 1)) : 0;
  s.min = values.front();
  s.max = values.back();
  return s;
}

double algorithmBandwidth(double bytes, double seconds) { return seconds > 0 ? bytes / seconds : 0; }

double busBandwidth(double bytes, double seconds, int worldSize) {
  return algorithmBandwidth(bytes, seconds) * 2.0 * (worldSize - 1) / worldSize;
}

} // namespace tessel::dist
