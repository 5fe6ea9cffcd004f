//===- tools/tessel-plan/tessel-plan.cpp - Memory, mesh and bucket accounting -===//
//
// tessel-plan memory | mesh | bucket: the accounting questions of data-parallel and
// sharded training (Memory.h, Mesh.h, Bucket.h), a table for people, --json for machines.
//
//===----------------------------------------------------------------------===//
#include "bench/tools/Flags.h"
#include "bench/tools/Report.h"
#include "bench/tools/Subcommand.h"
#include "tools/tessel-plan/Bucket.h"
#include "tools/tessel-plan/Communication.h"
#include "tools/tessel-plan/Memory.h"
#include "tools/tessel-plan/Mesh.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <stdexcept>

using tessel::bench::FlagParser;
using tessel::bench::Record;
using tessel::bench::fieldColumn;
using namespace tessel::plan;

namespace {

constexpr double kGB = 1e9;

/// Device memory: a name (h100 80 GB, h200 141 GB, tpu-v5p 95 GB) or a figure in GB.
double deviceMemoryBytes(const std::string &text) {
  if (text == "h100")
    return 80 * kGB;
  if (text == "h200")
    return 141 * kGB;
  if (text == "tpu-v5p")
    return 95 * kGB;
  size_t used = 0;
  double gb = 0;
  try {
    gb = std::stod(text, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used != text.size() || !(gb > 0))
    throw std::invalid_argument("bad device memory '" + text +
                                "' (h100, h200, tpu-v5p or a positive figure in GB)");
  return gb * kGB;
}

/// The model: a preset, with any size given on the command line changed.
struct ShapeFlags {
  std::string model = "xl";
  int64_t dModel = 0, dFF = 0, numLayers = 0, numHeads = 0, numKvHeads = 0, vocabSize = -1;
  void addTo(FlagParser &flags) {
    flags.add("model", "NAME", "preset: " + presetNames(), model);
    flags.add("d-model", "N", "override d_model", dModel);
    flags.add("d-ff", "N", "override d_ff", dFF);
    flags.add("num-layers", "N", "override the number of blocks", numLayers);
    flags.add("num-heads", "N", "override the number of heads", numHeads);
    flags.add("kv-heads", "N", "key/value heads (grouped-query attention; default: the heads)",
              numKvHeads);
    flags.add("vocab-size", "N", "override the vocabulary", vocabSize);
  }
  ModelShape shape() const {
    std::optional<ModelShape> s = findPreset(model);
    if (!s)
      throw std::invalid_argument("unknown model '" + model + "' (known: " + presetNames() + ")");
    auto apply = [&](int64_t value, int64_t &field) {
      if (value < 0 || (value == 0 && &field != &s->vocabSize))
        return;
      field = value;
      s->name = model + "-custom";
    };
    apply(dModel, s->dModel);
    apply(dFF, s->dFF);
    apply(numLayers, s->numLayers);
    apply(numHeads, s->numHeads);
    apply(numKvHeads, s->numKvHeads);
    apply(vocabSize, s->vocabSize);
    if (s->dModel <= 0 || s->dFF <= 0 || s->numLayers <= 0 ||
        (s->architecture == Architecture::TransformerLM && (s->numHeads <= 0 || s->vocabSize <= 0)))
      throw std::invalid_argument("model sizes must be positive");
    if (s->architecture == Architecture::TransformerLM && s->dModel % s->numHeads != 0)
      throw std::invalid_argument("d_model must be a multiple of the number of heads");
    if (s->architecture == Architecture::TransformerLM && s->numHeads % s->kvHeads() != 0)
      throw std::invalid_argument("the number of heads must be a multiple of --kv-heads");
    return *s;
  }
};

int usageError(const FlagParser &flags, const std::string &message) {
  std::cerr << "error: " << message << "\n\n" << flags.usage();
  return 2;
}

void writeOutputs(const std::string &json, const Record &meta, const std::vector<Record> &rows) {
  if (!json.empty())
    tessel::bench::writeFile(json, [&](std::ostream &out) { tessel::bench::writeJson(out, meta, rows); });
}

std::string gb(double bytes) {
  std::ostringstream s;
  s.precision(bytes >= 100 * kGB ? 1 : 2);
  s << std::fixed << bytes / kGB;
  return s.str();
}

int runMemory(int argc, char **argv) {
  ShapeFlags shape;
  StepSetup s;
  std::string precision = "fp32", attention = "sdpa", kernels = "eager", deviceMemory = "h100";
  std::string json;
  std::vector<std::string> shardings = {"single", "ddp", "zero1", "zero2", "zero3"};
  int64_t devices = 2, masterBytes = 4, gradBytes = 4, stateBytes = 4, gathered = 3;
  double activationShard = 0;
  bool explain = false, markdown = false;
  FlagParser flags(
      "tessel-plan memory",
      "Bytes per device of a training step: f32 master weights, gradients and AdamW's two\n"
      "moments (16 B a parameter by default), bf16 weight copies, activations (what autograd\n"
      "keeps, tensor by tensor: --explain), for one device and sharded over --devices, the\n"
      "train step's peak, and how many devices of --device-memory the model needs.\n"
      "GB = 10^9 bytes.\n\n"
      "examples:\n"
      "  tessel-plan memory --model xl --batch 4 --context 512 --precision bf16\n"
      "  tessel-plan memory --model xxl --batch 1 --context 1 --precision bf16 \\\n"
      "      --sharding zero3 --activation-shard 0.5 --device-memory tpu-v5p\n"
      "  tessel-plan memory --model 2.7B --attention naive --explain");
  shape.addTo(flags);
  flags.add("batch", "N", "global batch, sequences (split over the devices)", s.batch);
  flags.add("context", "N", "tokens per sequence", s.context);
  flags.add("precision", "P", "fp32 | bf16 (autocast: bf16 activations, f32 masters)", precision);
  flags.add("attention", "A", "naive | sdpa | tessel", attention);
  flags.add("kernels", "K", "eager | tessel (fused RMSNorm, RoPE, SwiGLU, cross-entropy)", kernels);
  flags.addSwitch("activation-checkpointing", "keep each block's inputs only",
                  s.activationCheckpointing);
  flags.addSwitch("weight-copies", "bf16 weight copies that AdamW writes (instead of autocast's casts)",
                  s.workingCopies);
  flags.addList("sharding", "LIST", "single | ddp | zero1 | zero2 | zero3 (= fsdp)", shardings);
  flags.add("devices", "N", "devices the sharded rows use", devices);
  flags.add("device-memory", "M", "h100 | h200 | tpu-v5p | GB, for the devices-needed column",
            deviceMemory);
  flags.add("master-bytes", "B", "bytes per master weight", masterBytes);
  flags.add("grad-bytes", "B", "bytes per gradient", gradBytes);
  flags.add("state-bytes", "B", "bytes per optimizer moment", stateBytes);
  flags.add("gathered-units", "N", "ZeRO-3 units gathered at once (0: count the shards alone)",
            gathered);
  flags.add("activation-shard", "F",
            "CS336's accounting: every device keeps the whole batch's activations, this "
            "fraction of them sharded over the devices (default 0: the batch is split)",
            activationShard);
  flags.addSwitch("explain", "list the tensors each block keeps for its backward", explain);
  flags.add("json", "FILE", "write the rows as JSON (- for stdout)", json);
  flags.addSwitch("markdown", "print the table as markdown", markdown);
  if (auto exit = flags.parseOrExit(argc, argv))
    return *exit;
  std::vector<Sharding> kinds;
  double memory = 0;
  try {
    s.model = shape.shape();
    if (precision != "fp32" && precision != "bf16")
      throw std::invalid_argument("unknown precision '" + precision + "' (expected fp32 or bf16)");
    s.bf16 = precision == "bf16";
    s.attention = parseAttention(attention);
    s.kernels = parseKernels(kernels);
    for (const std::string &name : shardings)
      kinds.push_back(parseSharding(name));
    memory = deviceMemoryBytes(deviceMemory);
    if (s.batch <= 0 || s.context <= 0 || devices < 1 || devices > (1 << 20))
      throw std::invalid_argument("--batch and --context must be positive, --devices in [1, 2^20]");
    for (int64_t b : {masterBytes, gradBytes, stateBytes})
      if (b != 1 && b != 2 && b != 4 && b != 8)
        throw std::invalid_argument("bytes per element must be 1, 2, 4 or 8");
    if (gathered < 0 || gathered > 1000)
      throw std::invalid_argument("--gathered-units must be in [0, 1000]");
    if (!(activationShard >= 0 && activationShard <= 1))
      throw std::invalid_argument("--activation-shard must be in [0, 1]");
  } catch (const std::invalid_argument &e) {
    return usageError(flags, e.what());
  }
  s.masterBytes = static_cast<int>(masterBytes), s.gradientBytes = static_cast<int>(gradBytes);
  s.stateBytes = static_cast<int>(stateBytes), s.activationShardFraction = activationShard;
  s.gatheredUnits = static_cast<int>(gathered);

  std::vector<Record> rows;
  for (Sharding kind : kinds) {
    int n = kind == Sharding::Single ? 1 : static_cast<int>(devices);
    MemoryPlan p = planMemory(s, kind, n);
    Record r;
    r.set("sharding", toString(kind));
    r.set("devices", static_cast<int64_t>(n));
    r.set("weights_bytes", p.weights);
    r.set("gradients_bytes", p.gradients);
    r.set("optimizer_state_bytes", p.optimizerState);
    r.set("weight_copies_bytes", p.weightCopies);
    r.set("gathered_units_bytes", p.gatheredUnits);
    r.set("activations_bytes", p.activations);
    r.set("total_bytes", p.total());
    r.set("step_peak_bytes", p.stepPeak);
    int needed = devicesNeeded(s, kind, memory);
    r.set("devices_needed", static_cast<int64_t>(needed)); // 0: no count fits
    r.set("needs", needed ? std::to_string(needed) : std::string(kind == Sharding::Single ? "no fit" : "never"));
    for (const char *key : {"weights", "gradients", "optimizer_state", "weight_copies",
                            "gathered_units", "activations", "total", "step_peak"})
      r.set(std::string(key) + "_GB", gb(std::get<double>(*r.get(std::string(key) + "_bytes"))));
    rows.push_back(r);
  }
  const ModelShape &m = s.model;
  std::cout << "tessel-plan memory: " << m.name << " (" << m.parameters() << " parameters), batch "
            << s.batch << " x context " << s.context << ", " << precision << ", attention "
            << attention << ", kernels " << kernels
            << (s.activationCheckpointing ? ", activation checkpointing" : "") << "; GB = 1e9 B\n\n"
            << tessel::bench::formatTable(
                   rows,
                   {fieldColumn("sharding", "sharding", 0, true), fieldColumn("devices", "devices", 0),
                    fieldColumn("weights", "weights_GB"), fieldColumn("grads", "gradients_GB"),
                    fieldColumn("optim", "optimizer_state_GB"), fieldColumn("copies", "weight_copies_GB"),
                    fieldColumn("gathered", "gathered_units_GB"), fieldColumn("activations", "activations_GB"),
                    fieldColumn("total GB", "total_GB"), fieldColumn("step peak GB", "step_peak_GB"),
                    fieldColumn("needs " + deviceMemory, "needs", 0)},
                   markdown);
  if (explain) {
    std::cout << "\nper block, per token (what autograd keeps for the backward; ZeRO-3 with bf16"
                 " keeps a bf16 residual stream, which Tessel's norms keep at 2 B):\n";
    double total = 0;
    for (const SavedTensor &t : savedPerBlock(s)) {
      std::printf("  %-62s %9.0f elements x %d B\n", t.what.c_str(), t.elementsPerToken, t.bytesPerElement);
      total += t.bytesPerToken();
    }
    std::printf("  %-62s %9.0f B\n", "block total", total);
    std::cout << "outside the blocks, per token:\n";
    for (const SavedTensor &t : savedOutsideBlocks(s))
      std::printf("  %-62s %9.0f elements x %d B\n", t.what.c_str(), t.elementsPerToken, t.bytesPerElement);
  }
  Record meta;
  meta.set("tool", "tessel-plan memory");
  meta.set("version", tessel::bench::versionString());
  meta.set("model", m.name);
  meta.set("parameters", m.parameters());
  meta.set("batch", s.batch);
  meta.set("context", s.context);
  meta.set("precision", precision);
  meta.set("attention", attention);
  meta.set("kernels", kernels);
  meta.set("device_memory_bytes", memory);
  writeOutputs(json, meta, rows);
  return 0;
}

int runMesh(int argc, char **argv) {
  ShapeFlags shape;
  shape.model = "xxl";
  std::string hardware = "tpu-v5p", json;
  double flops = 0, bandwidth = 0, fsdp = 16, tp = 4, mx = 2, my = 1, bytes = 2, tokens = 0;
  FlagParser flags(
      "tessel-plan mesh",
      "Per-layer forward times of a feed-forward layer on an FSDP (X) x tensor-parallel (Y)\n"
      "mesh and the batch at which it becomes compute-bound (Mesh.h; the Scaling Book's\n"
      "notation). Prints the formulas with their inputs.\n\n"
      "examples:\n"
      "  tessel-plan mesh                       # CS336: xxl, TPU v5p, X 16, Y 4, M_X 2, M_Y 1\n"
      "  tessel-plan mesh --model 10B --hardware h100 --fsdp 8 --tp 1 --mx 1 --my 1");
  shape.addTo(flags);
  flags.add("hardware", "H", "tpu-v5p | h100 (C and W defaults)", hardware);
  flags.add("flops", "C", "override FLOP/s per device", flops);
  flags.add("bandwidth", "W", "override link bandwidth, bytes/s", bandwidth);
  flags.add("fsdp", "X", "devices on the FSDP axis", fsdp);
  flags.add("tp", "Y", "devices on the tensor-parallel axis", tp);
  flags.add("mx", "M_X", "mesh axes the FSDP dimension spans", mx);
  flags.add("my", "M_Y", "mesh axes the tensor-parallel dimension spans", my);
  flags.add("bytes", "B", "bytes per communicated element (bf16: 2)", bytes);
  flags.add("tokens", "B", "global batch in tokens for the per-layer times (default: the "
                          "compute-bound batch)",
            tokens);
  flags.add("json", "FILE", "write the result as JSON (- for stdout)", json);
  if (auto exit = flags.parseOrExit(argc, argv))
    return *exit;
  MeshSetup s;
  MeshPlan p;
  try {
    ModelShape m = shape.shape();
    s.dModel = static_cast<double>(m.dModel), s.dFF = static_cast<double>(m.dFF);
    s.hardware = hardwarePreset(hardware);
    if (flops != 0)
      s.hardware.flopsPerSecond = flops;
    if (bandwidth != 0)
      s.hardware.linkBytesPerSecond = bandwidth;
    s.fsdp = fsdp, s.tensorParallel = tp, s.axesX = mx, s.axesY = my, s.bytesPerElement = bytes;
    if (tokens < 0)
      throw std::invalid_argument("--tokens must be positive");
    p = planMesh(s, tokens);
  } catch (const std::invalid_argument &e) {
    return usageError(flags, e.what());
  }
  double c = s.hardware.flopsPerSecond, w = s.hardware.linkBytesPerSecond;
  std::printf("tessel-plan mesh: D %.0f, F %.0f, %s: C %.4g FLOP/s, W %.4g B/s; X %g, Y %g, M_X %g, "
              "M_Y %g, %g B per element\n\n",
              s.dModel, s.dFF, hardware.c_str(), c, w, fsdp, tp, mx, my, bytes);
  std::printf("compute-bound against FSDP's all-gather when T_math >= T_fsdp:\n"
              "  B / (X Y) >= b C / (2 Y W M_X) = %g x %.4g / (2 x %g x %.4g x %g) = %.2f tokens per device\n"
              "  (B >= %.1f tokens in all; at whole tokens per device: %.0f per device, %.0f in all)\n",
              bytes, c, tp, w, mx, p.computeBoundTokensPerDevice, p.computeBoundTokens,
              std::ceil(p.computeBoundTokensPerDevice), std::ceil(p.computeBoundTokensPerDevice) * p.devices);
  std::printf("compute-bound against tensor parallelism's collectives when T_math >= T_tp:\n"
              "  F >= b Y C / (2 W M_Y) = %g x %g x %.4g / (2 x %.4g x %g) = %.0f: %s (F = %.0f)\n",
              bytes, tp, c, w, my, p.dffNeeded, p.tensorParallelComputeBound ? "holds" : "fails",
              s.dFF);
  std::printf("per layer at B = %.0f tokens:\n"
              "  T_math = 4 B D F / (X Y C) = %.4g s\n"
              "  T_fsdp = 2 b D F / (Y W M_X) = %.4g s\n"
              "  T_tp   = 2 b B D / (X W M_Y) = %.4g s\n",
              p.tokens, p.mathSeconds, p.fsdpSeconds, p.tensorParallelSeconds);
  Record r;
  r.set("d_model", s.dModel);
  r.set("d_ff", s.dFF);
  r.set("flops_per_second", c);
  r.set("link_bytes_per_second", w);
  r.set("fsdp", fsdp);
  r.set("tensor_parallel", tp);
  r.set("m_x", mx);
  r.set("m_y", my);
  r.set("bytes_per_element", bytes);
  r.set("compute_bound_tokens_per_device", p.computeBoundTokensPerDevice);
  r.set("compute_bound_tokens", p.computeBoundTokens);
  r.set("tensor_parallel_compute_bound", p.tensorParallelComputeBound ? "yes" : "no");
  r.set("d_ff_needed", p.dffNeeded);
  r.set("tokens", p.tokens);
  r.set("t_math_s", p.mathSeconds);
  r.set("t_fsdp_s", p.fsdpSeconds);
  r.set("t_tp_s", p.tensorParallelSeconds);
  Record meta;
  meta.set("tool", "tessel-plan mesh");
  meta.set("version", tessel::bench::versionString());
  meta.set("hardware", hardware);
  writeOutputs(json, meta, {r});
  return 0;
}
std::string formatCost(const AllReduceCostModel &m) {
  char text[64];
  std::snprintf(text, sizeof text, "o = %.4g us, w = %.4g GB/s", m.overheadSeconds * 1e6,
                m.bytesPerSecond / kGB);
  return text;
}

/// An all-reduce's cost t = o + bytes / w: given, or fitted from `tessel-bench allreduce`.
struct CostFlags {
  std::string fit;
  double overheadUs = 0, bandwidthGBs = 0;
  void addTo(FlagParser &flags) {
    flags.add("overhead-us", "O", "o, microseconds per all-reduce", overheadUs);
    flags.add("bandwidth-gbs", "W", "w, GB/s", bandwidthGBs);
    flags.add("fit", "FILE", "fit o and w from an all-reduce benchmark's JSON", fit);
  }
  AllReduceCostModel model() const {
    AllReduceCostModel m{overheadUs / 1e6, bandwidthGBs * kGB};
    if (!fit.empty())
      m = fitAllReduceJson(fit);
    if (!(m.overheadSeconds >= 0 && m.bytesPerSecond > 0))
      throw std::invalid_argument("give --overhead-us and --bandwidth-gbs (o >= 0, w > 0), or --fit");
    return m;
  }
  /// With --fit, also the all-gather and reduce-scatter fits the file has.
  CollectiveCosts costs() const {
    CollectiveCosts c(model());
    if (!fit.empty())
      c = CollectiveCosts::fromJson(fit);
    return c;
  }
  std::string source() const { return fit.empty() ? "" : " (fitted from " + fit + ")"; }
};

int runBucket(int argc, char **argv) {
  ShapeFlags shape;
  CostFlags cost;
  std::string json;
  double gradientBytes = 0;
  int64_t gradBytes = 4;
  FlagParser flags(
      "tessel-plan bucket",
      "DDP's exposed communication T(n_b) = n_b o + s / (n_b w) and the bucket size that\n"
      "minimises it, b = sqrt(s o w) (Bucket.h); o and w given, or fitted from\n"
      "`tessel-bench allreduce --json` (t = o + bytes / w, least squares over median times).\n\n"
      "examples:\n"
      "  tessel-plan bucket --model xl --overhead-us 30 --bandwidth-gbs 150\n"
      "  tessel-plan bucket --model xl --fit bench/results/.../allreduce-nccl.json");
  shape.addTo(flags);
  flags.add("grad-bytes", "B", "bytes per gradient (f32 4, bf16 2)", gradBytes);
  flags.add("gradient-bytes", "S", "gradient bytes s (overrides --model)", gradientBytes);
  cost.addTo(flags);
  flags.add("json", "FILE", "write the rows as JSON (- for stdout)", json);
  if (auto exit = flags.parseOrExit(argc, argv))
    return *exit;
  double s = gradientBytes, o = 0, w = 0;
  try {
    if (s <= 0)
      s = static_cast<double>(shape.shape().parameters()) * static_cast<double>(gradBytes);
    AllReduceCostModel model = cost.model();
    o = model.overheadSeconds, w = model.bytesPerSecond;
  } catch (const std::invalid_argument &e) {
    return usageError(flags, e.what());
  } catch (const std::exception &e) {
    std::cerr << "tessel-plan bucket: error: " << e.what() << "\n";
    return 1;
  }
  int64_t best = optimalBucketBytes(s, o, w);
  std::vector<Record> rows;
  auto row = [&](const std::string &label, double bucketBytes) {
    double buckets = std::max(1.0, std::ceil(s / bucketBytes));
    Record r;
    r.set("bucket", label);
    r.set("bucket_MB", bucketBytes / 1e6);
    r.set("buckets", static_cast<int64_t>(buckets));
    r.set("exposed_ms", exposedOverheadSeconds(s, buckets, o, w) * 1e3);
    rows.push_back(r);
  };
  row("best", static_cast<double>(best));
  for (double mb : {1.0, 10.0, 25.0, 100.0, 1000.0})
    if (mb * 1e6 < s)
      row(std::to_string(static_cast<int>(mb)) + " MB", mb * 1e6);
  row("one bucket", s);
  std::printf("tessel-plan bucket: s = %.4g B of gradients, o = %.4g us, w = %.4g GB/s%s\n"
              "  best bucket b = sqrt(s o w) = %.4g MB (n_b = sqrt(s / (o w)) = %.2f)\n\n%s",
              s, o * 1e6, w / kGB, cost.source().c_str(),
              static_cast<double>(best) / 1e6, std::sqrt(s / std::max(o * w, 1e-30)),
              tessel::bench::formatTable(rows, {fieldColumn("bucket", "bucket", 0, true),
                                                fieldColumn("MB", "bucket_MB", 1),
                                                fieldColumn("buckets", "buckets", 0),
                                                fieldColumn("T(n_b) ms", "exposed_ms", 3)})
                  .c_str());
  Record meta;
  meta.set("tool", "tessel-plan bucket");
  meta.set("version", tessel::bench::versionString());
  meta.set("gradient_bytes", s);
  meta.set("overhead_s", o);
  meta.set("bytes_per_second", w);
  meta.set("best_bucket_bytes", best);
  writeOutputs(json, meta, rows);
  return 0;
}

int runComm(int argc, char **argv) {
  ShapeFlags shape;
  CostFlags cost;
  std::string json;
  std::vector<std::string> shardings = {"ddp", "zero1", "zero3"};
  int64_t gradBytes = 4, gatherBytes = 2;
  double bucketMb = 25;
  FlagParser flags(
      "tessel-plan comm",
      "The collectives of one data-parallel training step and their time, from an all-reduce\n"
      "cost t = o + bytes / w (all-gather and reduce-scatter: o + bytes / (2 w), half a ring\n"
      "all-reduce); Communication.h gives the sums. The time the collectives take, not how\n"
      "much of it the backward hides.\n\n"
      "examples:\n"
      "  tessel-plan comm --model xl --fit bench/results/.../allreduce-nccl.json\n"
      "  tessel-plan comm --model 2.7B --sharding zero3 --grad-bytes 2 --overhead-us 50 "
      "--bandwidth-gbs 300");
  shape.addTo(flags);
  flags.addList("sharding", "LIST", "ddp | zero1 | zero3 (fsdp)", shardings);
  flags.add("grad-bytes", "B", "bytes per gradient as communicated (f32 4, bf16 2)", gradBytes);
  flags.add("gather-bytes", "B", "ZeRO-3: bytes per gathered parameter (bf16 2, f32 4)", gatherBytes);
  flags.add("bucket-mb", "MB", "DDP and ZeRO-1 gradient bucket cap", bucketMb);
  cost.addTo(flags);
  flags.add("json", "FILE", "write the rows as JSON (- for stdout)", json);
  if (auto exit = flags.parseOrExit(argc, argv))
    return *exit;
  std::vector<Record> rows;
  AllReduceCostModel model;
  std::optional<CollectiveCosts> fitted;
  try {
    model = cost.model();
    fitted = cost.costs();
    if (gradBytes <= 0 || gatherBytes <= 0 || !(bucketMb > 0))
      throw std::invalid_argument("byte sizes and the bucket cap must be positive");
    ModelShape m = shape.shape();
    double gradients = static_cast<double>(m.parameters()) * static_cast<double>(gradBytes);
    const CollectiveCosts &costs = *fitted;
    for (const std::string &name : shardings) {
      CommunicationSetup c;
      c.model = m;
      c.sharding = parseSharding(name);
      c.gradientBytes = static_cast<int>(gradBytes);
      c.gatherBytes = static_cast<int>(gatherBytes);
      c.buckets = static_cast<int>(std::ceil(gradients / (bucketMb * 1e6)));
      CommunicationPlan p = planCommunication(c, costs);
      Record r;
      r.set("sharding", toString(c.sharding));
      r.set("collectives", static_cast<int64_t>(p.collectives));
      r.set("all_reduce_GB", p.allReduceBytes / kGB);
      r.set("all_gather_GB", p.allGatherBytes / kGB);
      r.set("reduce_scatter_GB", p.reduceScatterBytes / kGB);
      r.set("comm_ms", p.seconds * 1e3);
      r.set("formula", p.formula);
      rows.push_back(r);
    }
  } catch (const std::invalid_argument &e) {
    return usageError(flags, e.what());
  }
  // Every fit the plan priced with, so a reader can redo a row by hand.
  std::string fits = formatCost(model);
  auto addFit = [&](const char *name, const std::optional<AllReduceCostModel> &fit) {
    if (fit)
      fits += std::string("; ") + name + ": " + formatCost(*fit);
  };
  // planCommunication prices gathers and scatters from their own fits only when both exist.
  bool own = fitted->allGather && fitted->reduceScatter;
  if (own) {
    addFit("all-gather", fitted->allGather);
    addFit("reduce-scatter", fitted->reduceScatter);
  }
  std::printf("tessel-plan comm: %s, all-reduce %s%s\n\n%s", shape.model.c_str(), fits.c_str(),
              cost.source().c_str(),
              tessel::bench::formatTable(rows, {fieldColumn("sharding", "sharding", 0, true),
                                                fieldColumn("collectives", "collectives", 0),
                                                fieldColumn("all-reduce GB", "all_reduce_GB", 2),
                                                fieldColumn("all-gather GB", "all_gather_GB", 2),
                                                fieldColumn("reduce-scatter GB", "reduce_scatter_GB", 2),
                                                fieldColumn("time ms", "comm_ms", 2),
                                                fieldColumn("formula", "formula", 0, true)})
                  .c_str());
  Record meta;
  meta.set("tool", "tessel-plan comm");
  meta.set("version", tessel::bench::versionString());
  meta.set("overhead_s", model.overheadSeconds);
  meta.set("bytes_per_second", model.bytesPerSecond);
  for (auto [key, fit] : {std::pair{"all_gather", fitted->allGather},
                          std::pair{"reduce_scatter", fitted->reduceScatter}})
    if (fit && own) {
      meta.set(std::string(key) + "_overhead_s", fit->overheadSeconds);
      meta.set(std::string(key) + "_bytes_per_second", fit->bytesPerSecond);
    }
  writeOutputs(json, meta, rows);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  return tessel::bench::runSubcommands(
      "tessel-plan", "Accounting for training a model on a mesh of devices.",
      {{"memory", "bytes per device by category and strategy, the step's peak, devices needed",
        runMemory},
       {"mesh", "when an FSDP x tensor-parallel mesh is compute-bound", runMesh},
       {"bucket", "DDP's exposed communication and the best gradient bucket", runBucket},
       {"comm", "a step's collectives and their time for DDP, ZeRO-1 and ZeRO-3", runComm}},
      argc, argv);
}
