//===- bench/distributed/ConsolidatedCheckpoint.cpp - One file for any world size -===//
#include "bench/distributed/ConsolidatedCheckpoint.h"

#include <torch/serialize/output-archive.h>
#include <torch/torch.h>

#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace tessel::dist {

bool perElementState(const std::string &name) { return name != "step"; }

namespace {

std::string paramKey(size_t i) { return "param_" + std::to_string(i); }
std::string statePrefix(size_t i) { return "state_" + std::to_string(i) + "_"; }

/// Key of a local shard's state entry in the per-rank archive saveConsolidated()
/// gathers: "shard_<param>_<offset>_<name>".
std::string shardKey(const LocalShard &s, const std::string &name) {
  return "shard_" + std::to_string(s.param) + "_" + std::to_string(s.offset) + "_" + name;
}

/// Parses shardKey(); returns false for other keys.
bool parseShardKey(const std::string &key, LocalShard &shard, std::string &name) {
  size_t a = key.find('_'), b = key.find('_', a + 1), c = key.find('_', b + 1);
  if (key.compare(0, a, "shard") != 0 || b == std::string::npos || c == std::string::npos)
    return false;
  shard.param = std::stoi(key.substr(a + 1, b - a - 1));
  shard.offset = std::stoll(key.substr(b + 1, c - b - 1));
  name = key.substr(c + 1);
  return true;
}


/// Rank 0's side of saveConsolidated(): joins the local shards' state entries
/// into whole-parameter ones ("state_<i>_<name>", in the parameter's shape).
class StateJoiner {
public:
  explicit StateJoiner(const std::vector<torch::Tensor> &params) : params_(params) {}
  void add(const std::string &key, const torch::Tensor &t) {
    LocalShard shard;
    std::string name;
    if (!parseShardKey(key, shard, name))
      throw std::runtime_error("saveConsolidated: unexpected state entry '" + key + "'");
    Entry &entry = joined_[statePrefix(shard.param) + name];
    entry.param = shard.param;
    if (!perElementState(name)) {
      entry.value = t;
      return;
    }
    entry.perElement = true;
    if (!entry.value.defined())
      entry.value = torch::zeros({params_.at(shard.param).numel()}, t.options());
    entry.value.narrow(0, shard.offset, t.numel()).copy_(t.reshape(-1));
  }
  void writeTo(torch::serialize::OutputArchive &out) const {
    for (const auto &[key, entry] : joined_)
      out.write(key, entry.perElement ? entry.value.view(params_[entry.param].sizes()) : entry.value);
  }

private:
  struct Entry {
    int param = 0;
    bool perElement = false;
    torch::Tensor value;
  };
  const std::vector<torch::Tensor> &params_;
  std::map<std::string, Entry> joined_;
};

} // namespace

void saveConsolidated(ProcessGroup &pg, const std::string &path,
                      const std::vector<torch::Tensor> &params, const std::vector<StatePiece> &mine) {
  // Each rank serialises the state of its pieces ...
  torch::serialize::OutputArchive pieces;
  for (const StatePiece &piece : mine)
    for (const auto &[name, t] : piece.state)
      pieces.write(shardKey(piece.shard, name), t.detach().cpu());
  std::ostringstream stream;
  pieces.save_to(stream);
  std::string bytes = stream.str();

  // ... and rank 0 gathers them (lengths first, then the padded bytes).
  int world = pg.size();
  auto longs = torch::TensorOptions().dtype(torch::kInt64).device(pg.device());
  torch::Tensor length = torch::tensor({static_cast<int64_t>(bytes.size())}, longs);
  torch::Tensor lengths = torch::zeros({world}, longs);
  pg.wait(pg.allGather(lengths, length), "checkpoint size all-gather");
  torch::Tensor lengthsCpu = lengths.cpu();
  int64_t maxLength = lengthsCpu.max().item<int64_t>();
  torch::Tensor padded = torch::zeros({maxLength}, torch::kUInt8);
  std::memcpy(padded.data_ptr(), bytes.data(), bytes.size());
  padded = padded.to(pg.device());
  torch::Tensor all = torch::zeros({maxLength * world}, padded.options());
  pg.wait(pg.allGather(all, padded), "checkpoint all-gather");

  if (pg.rank() == 0) {
    torch::Tensor allCpu = all.cpu();
    torch::serialize::OutputArchive out;
    out.write("meta_num_params", torch::tensor(static_cast<int64_t>(params.size())));
    out.write("meta_world_size", torch::tensor(static_cast<int64_t>(world)));
    for (size_t i = 0; i < params.size(); ++i)
      out.write(paramKey(i), params[i].detach().cpu().clone());
    StateJoiner joiner(params);
    for (int r = 0; r < world; ++r) {
      torch::serialize::InputArchive in;
      in.load_from(reinterpret_cast<const char *>(allCpu.data_ptr<uint8_t>()) + r * maxLength,
                   static_cast<size_t>(lengthsCpu[r].item<int64_t>()));
      for (const std::string &key : in.keys()) {
        torch::Tensor t;
        in.read(key, t);
        joiner.add(key, t);
      }
    }
    joiner.writeTo(out);
    out.save_to(path);
  }
  pg.barrier();
}

namespace {
std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read checkpoint '" + path + "'");
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}
} // namespace

ConsolidatedCheckpoint ConsolidatedCheckpoint::read(const std::string &path, size_t numParams) {
  std::string bytes = readFile(path);
  torch::Tensor data = torch::empty({static_cast<int64_t>(bytes.size())}, torch::kUInt8);
  std::memcpy(data.data_ptr(), bytes.data(), bytes.size());
  return fromBytes(path, data, numParams);
}

ConsolidatedCheckpoint ConsolidatedCheckpoint::load(ProcessGroup &pg, const std::string &path,
                                                    size_t numParams) {
  // Rank 0 reads the file; everyone gets its bytes (no shared file system needed).
  std::string bytes;
  int64_t size = 0;
  if (pg.rank() == 0) {
    bytes = readFile(path);
    size = static_cast<int64_t>(bytes.size());
  }
  auto longs = torch::TensorOptions().dtype(torch::kInt64).device(pg.device());
  torch::Tensor sizeTensor = torch::tensor({size}, longs);
  pg.wait(pg.broadcast(sizeTensor, 0), "checkpoint size broadcast");
  size = sizeTensor.cpu().item<int64_t>();
  torch::Tensor data = torch::zeros({size}, torch::kUInt8);
  if (pg.rank() == 0)
    std::memcpy(data.data_ptr(), bytes.data(), bytes.size());
  data = data.to(pg.device());
  pg.wait(pg.broadcast(data, 0), "checkpoint broadcast");
  return fromBytes(path, data.cpu(), numParams);
}

ConsolidatedCheckpoint ConsolidatedCheckpoint::fromBytes(const std::string &path, torch::Tensor bytes,
                                                         size_t numParams) {
  ConsolidatedCheckpoint checkpoint;
  checkpoint.path_ = path;
  checkpoint.bytes_ = std::move(bytes);
  checkpoint.archive_ = std::make_shared<torch::serialize::InputArchive>();
  torch::Tensor count;
  try {
    checkpoint.archive_->load_from(reinterpret_cast<const char *>(checkpoint.bytes_.data_ptr<uint8_t>()),
                                   static_cast<size_t>(checkpoint.bytes_.numel()));
    checkpoint.keys_ = checkpoint.archive_->keys();
    checkpoint.archive_->read("meta_num_params", count);
  } catch (const c10::Error &e) {
    std::string what = e.what_without_backtrace();
    throw std::runtime_error("'" + path + "' is not a consolidated checkpoint: " +
                             what.substr(0, what.find('\n')));
  }
  if (count.item<int64_t>() != static_cast<int64_t>(numParams))
    throw std::runtime_error("checkpoint '" + path + "' holds " +
                             std::to_string(count.item<int64_t>()) + " parameters, the model has " +
                             std::to_string(numParams));
  return checkpoint;
}

torch::Tensor ConsolidatedCheckpoint::param(size_t i, c10::IntArrayRef shape) const {
  torch::Tensor value;
  archive_->read(paramKey(i), value);
  if (value.sizes() != shape)
    throw std::runtime_error("checkpoint parameter " + std::to_string(i) + " has shape " +
                             c10::str(value.sizes()) + ", the model's is " + c10::str(shape));
  return value;
}

ParamState ConsolidatedCheckpoint::stateOf(const LocalShard &shard) const {
  std::string prefix = statePrefix(shard.param);
  ParamState state;
  for (const std::string &key : keys_)
    if (key.rfind(prefix, 0) == 0) {
      torch::Tensor t;
      archive_->read(key, t);
      std::string name = key.substr(prefix.size());
      if (perElementState(name))
        t = t.reshape(-1).narrow(0, shard.offset, shard.numel);
      state.emplace_back(name, t);
    }
  return state;
}

void loadParameters(const std::string &path, const std::vector<torch::Tensor> &params) {
  ConsolidatedCheckpoint checkpoint = ConsolidatedCheckpoint::read(path, params.size());
  torch::NoGradGuard noGrad;
  for (size_t i = 0; i < params.size(); ++i)
    params[i].copy_(checkpoint.param(i, params[i].sizes()));
}

} // namespace tessel::dist
