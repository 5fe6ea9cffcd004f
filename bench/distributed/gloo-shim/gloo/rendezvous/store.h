// Stand-in for Gloo's gloo/rendezvous/store.h: the interface that
// ProcessGroupGloo::GlooStore overrides, declared only (see ../../README.md).
// GLOO_STORE_HAS_STORE_V2 stays undefined, so the V2 overrides are not compiled.
#pragma once
#include <chrono>
#include <string>
#include <vector>

namespace gloo::rendezvous {
class Store {
public:
  virtual ~Store();
  virtual void set(const std::string &key, const std::vector<char> &data) = 0;
  virtual std::vector<char> get(const std::string &key) = 0;
  virtual void wait(const std::vector<std::string> &keys) = 0;
  virtual void wait(const std::vector<std::string> &keys,
                    const std::chrono::milliseconds &timeout) = 0;
};
} // namespace gloo::rendezvous
