//===- runtime/ConfigTable.h - The autotuner's lock-free table --*- C++ -*-===//
//
// Launch keys (the autotune key params' values and the arguments' 16-byte divisibility)
// to the chosen config, read on every launch without a lock. The table is write-once per
// entry: a writer (holding the device's tuning mutex) fills an entry and publishes its
// pointer with release order; readers load slots with acquire order. Growing builds a new
// table and publishes it; retired tables stay alive until the table dies, so readers
// never touch freed memory.
//
//===----------------------------------------------------------------------===//
#ifndef TESSEL_RUNTIME_CONFIGTABLE_H
#define TESSEL_RUNTIME_CONFIGTABLE_H

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace tessel::tuning {

constexpr size_t kMaxKeyParams = 16;

struct Key {
  uint64_t mask = 0;
  uint32_t count = 0;
  int64_t values[kMaxKeyParams];

  bool operator==(const Key &other) const {
    if (mask != other.mask || count != other.count)
      return false;
    for (uint32_t i = 0; i < count; ++i)
      if (values[i] != other.values[i])
        return false;
    return true;
  }
  uint64_t hash() const {
    uint64_t h = mask * 0x9e3779b97f4a7c15ull ^ count;
    for (uint32_t i = 0; i < count; ++i) {
      h ^= uint64_t(values[i]) + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
      h *= 0xff51afd7ed558ccdull;
    }
    return h ^ (h >> 33);
  }
};

struct Entry {
  uint64_t hash;
  Key key;
  int config;
};

class ConfigTable {
public:
  const Entry *find(const Key &key, uint64_t hash) const {
    const Table *table = current_.load(std::memory_order_acquire);
    if (!table)
      return nullptr;
    for (size_t i = hash & table->mask;; i = (i + 1) & table->mask) {
      const Entry *entry = table->slots[i].load(std::memory_order_acquire);
      if (!entry)
        return nullptr;
      if (entry->hash == hash && entry->key == key)
        return entry;
    }
  }

  /// The caller serialises inserts.
  void insert(const Key &key, uint64_t hash, int config) {
    entries_.push_back(std::make_unique<Entry>(Entry{hash, key, config}));
    const Table *table = current_.load(std::memory_order_relaxed);
    if (!table || entries_.size() * 2 > table->mask + 1) {
      size_t capacity = table ? (table->mask + 1) * 2 : 16;
      auto grown = std::make_unique<Table>(capacity);
      for (const std::unique_ptr<Entry> &entry : entries_)
        place(*grown, entry.get());
      current_.store(grown.get(), std::memory_order_release);
      tables_.push_back(std::move(grown));
      return;
    }
    place(*const_cast<Table *>(table), entries_.back().get());
  }

private:
  struct Table {
    explicit Table(size_t capacity)
        : mask(capacity - 1),
          slots(new std::atomic<const Entry *>[capacity]) {
      for (size_t i = 0; i < capacity; ++i)
        slots[i].store(nullptr, std::memory_order_relaxed);
    }
    size_t mask;
    std::unique_ptr<std::atomic<const Entry *>[]> slots;
  };

  static void place(Table &table, const Entry *entry) {
    for (size_t i = entry->hash & table.mask;; i = (i + 1) & table.mask)
      if (!table.slots[i].load(std::memory_order_relaxed)) {
        table.slots[i].store(entry, std::memory_order_release);
        return;
      }
  }

  std::atomic<const Table *> current_{nullptr};
  std::vector<std::unique_ptr<Table>> tables_;
  std::vector<std::unique_ptr<Entry>> entries_;
};

} // namespace tessel::tuning

#endif // TESSEL_RUNTIME_CONFIGTABLE_H
