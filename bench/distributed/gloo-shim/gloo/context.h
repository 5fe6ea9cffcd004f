// Stand-in for Gloo's gloo/context.h: declarations only (see ../README.md).
#pragma once
#include <chrono>

namespace gloo {
/// Declared so that ProcessGroupGloo::setTimeout's inline body parses; never defined here.
class Context {
public:
  void setTimeout(std::chrono::milliseconds timeout);
};
} // namespace gloo
