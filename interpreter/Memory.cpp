//===- interpreter/Memory.cpp - the allocation table of a run -------------===//
#include "interpreter/Interpreter.h"

#include <algorithm>
#include <cstdio>

namespace tessel::interp {

static std::string hex(uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)v);
  return buf;
}

static std::string bufferText(const Buffer &b) {
  return "buffer" + (b.name.empty() ? std::string() : " '" + b.name + "'") + " (" +
         std::to_string(b.bytes) + " bytes at " + hex(b.base) + ")";
}

void MemoryMap::add(const void *base, size_t bytes, std::string name) {
  Buffer b{uint64_t(reinterpret_cast<uintptr_t>(base)), uint64_t(bytes), std::move(name)};
  auto at = std::upper_bound(buffers_.begin(), buffers_.end(), b.base,
                             [](uint64_t v, const Buffer &x) { return v < x.base; });
  buffers_.insert(at, std::move(b));
}

const Buffer *MemoryMap::find(uint64_t address, uint64_t size) const {
  auto at = std::upper_bound(buffers_.begin(), buffers_.end(), address,
                             [](uint64_t v, const Buffer &x) { return v < x.base; });
  // Buffers may overlap (views of one allocation): try every one starting at or before.
  while (at != buffers_.begin()) {
    --at;
    if (address - at->base <= at->bytes && size <= at->bytes - (address - at->base))
      return &*at;
  }
  return nullptr;
}

std::string MemoryMap::describe(uint64_t address, uint64_t size) const {
  if (buffers_.empty())
    return "no buffer is registered";
  const Buffer *before = nullptr, *after = nullptr;
  for (const Buffer &b : buffers_) {
    if (b.base <= address)
      before = &b;
    else if (!after)
      after = &b;
  }
  if (before && address < before->base + before->bytes)
    return std::to_string(address - before->base) + " bytes into " + bufferText(*before) +
           ", overrunning its end";
  if (before && (!after || address - (before->base + before->bytes) <= after->base - address))
    return std::to_string(address - (before->base + before->bytes)) +
           " bytes past the end of " + bufferText(*before);
  return std::to_string(after->base - address) + " bytes before the start of " +
         bufferText(*after);
}

} // namespace tessel::interp
