//===- bench/model/TransformerLM.cpp - The CS336 Transformer LM in LibTorch ===//

#include "bench/model/TransformerLM.h"
#include "bench/model/ActivationCheckpoint.h"
#include "bench/model/Nvtx.h"
#include "bench/model/TesselOps.h"

#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/utils.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace tessel::model {

TesselOps &tesselOps() {
  static TesselOps ops;
  return ops;
}

void requireTesselOp(bool present, const char *op, const char *kernel) {
  if (!present)
    throw std::runtime_error(std::string(op) + " with Tessel kernels is not available yet: needs the " +
                             kernel + " kernel");
}

/// torch.nn.init.trunc_normal_: inverse-CDF sampling, then a clamp for safety.
static void truncNormal_(torch::Tensor &t, double std, double lo, double hi) {
  torch::NoGradGuard noGrad;
  auto cdf = [](double x) { return 0.5 * (1.0 + std::erf(x / std::sqrt(2.0))); };
  double l = cdf(lo / std), u = cdf(hi / std);
  t.uniform_(2 * l - 1, 2 * u - 1);
  t.erfinv_();
  t.mul_(std * std::sqrt(2.0));
  t.clamp_(lo, hi);
}

//===-- Linear, Embedding, RMSNorm ----------------------------------------===//

LinearImpl::LinearImpl(int64_t in, int64_t out, const torch::TensorOptions &options,
                       int64_t blocks)
    : inFeatures(in), outFeatures(out), fusedBlocks(blocks) {
  weight = register_parameter("weight", torch::empty({out, in}, options.dtype(torch::kFloat32)));
  resetParameters();
}

LinearImpl::LinearImpl(int64_t in, std::vector<int64_t> rows, const torch::TensorOptions &options)
    : inFeatures(in), outFeatures(0), fusedBlocks(int64_t(rows.size())), blockRows(std::move(rows)) {
  for (int64_t r : blockRows)
    outFeatures += r;
  weight = register_parameter("weight",
                              torch::empty({outFeatures, in}, options.dtype(torch::kFloat32)));
  resetParameters();
}

void LinearImpl::resetParameters() {
  if (blockRows.empty()) {
    double std = std::sqrt(2.0 / static_cast<double>(inFeatures + outFeatures / fusedBlocks));
    truncNormal_(weight, std, -3 * std, 3 * std);
    return;
  }
  int64_t start = 0;
  for (int64_t rows : blockRows) {
    torch::Tensor block = weight.narrow(0, start, rows);
    double std = std::sqrt(2.0 / static_cast<double>(inFeatures + rows));
    truncNormal_(block, std, -3 * std, 3 * std);
    start += rows;
  }
}

torch::Tensor LinearImpl::forward(const torch::Tensor &x) {
  at::DeviceType device = weight.device().type();
  bool useCopy = workingWeight.defined() && at::autocast::is_autocast_enabled(device) &&
                 at::autocast::get_autocast_dtype(device) == workingWeight.scalar_type();
  const torch::Tensor &w = useCopy ? workingWeight : weight;
  if (matmul == MatmulImpl::Tessel) {
    requireTesselOp(bool(tesselOps().linear), "linear", "Tessel matmul");
    return tesselOps().linear(x, w);
  }
  return at::linear(x, w);
}

EmbeddingImpl::EmbeddingImpl(int64_t vocabSize, int64_t dModel,
                             const torch::TensorOptions &options) {
  weight = register_parameter("weight",
                              torch::empty({vocabSize, dModel}, options.dtype(torch::kFloat32)));
  resetParameters();
}

void EmbeddingImpl::resetParameters() { truncNormal_(weight, 1.0, -3.0, 3.0); }

torch::Tensor EmbeddingImpl::forward(const torch::Tensor &tokens) {
  return at::embedding(weight, tokens);
}

RMSNormImpl::RMSNormImpl(int64_t dModel, double eps, KernelImpl kernels,
                         const torch::TensorOptions &options)
    : eps(eps), kernels(kernels) {
  weight = register_parameter("weight", torch::ones({dModel}, options.dtype(torch::kFloat32)));
}

torch::Tensor RMSNormImpl::forward(const torch::Tensor &x) {
  if (kernels == KernelImpl::Tessel) {
    requireTesselOp(bool(tesselOps().rmsNorm), "RMSNorm", "Tessel RMSNorm");
    return tesselOps().rmsNorm(x, weight, eps);
  }
  torch::Tensor xf = x.to(torch::kFloat32);
  torch::Tensor rms = torch::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return (xf * rms * weight).to(x.scalar_type());
}

std::tuple<torch::Tensor, torch::Tensor> RMSNormImpl::addForward(const torch::Tensor &x,
                                                                 const torch::Tensor &delta) {
  if (!delta.defined())
    return {x, forward(x)};
  if (kernels == KernelImpl::Tessel) {
    requireTesselOp(bool(tesselOps().addRmsNorm), "RMSNorm", "Tessel residual-add RMSNorm");
    return tesselOps().addRmsNorm(x, delta, weight, eps);
  }
  torch::Tensor h = x + delta;
  return {h, forward(h)};
}

//===-- RoPE ---------------------------------------------------------------===//

namespace {
/// angle[p][i] = p * theta^(-2i / dHead), computed in f64: {cos, sin} in f32.
std::pair<torch::Tensor, torch::Tensor> ropeTables(double theta, int64_t dHead, int64_t maxSeqLen,
                                                   const torch::TensorOptions &options) {
  auto f64 = options.dtype(torch::kFloat64);
  torch::Tensor inv = torch::pow(theta, -torch::arange(0, dHead, 2, f64) / double(dHead));
  torch::Tensor angles = torch::outer(torch::arange(maxSeqLen, f64), inv);
  return {angles.cos().to(torch::kFloat32), angles.sin().to(torch::kFloat32)};
}
} // namespace

RotaryEmbeddingImpl::RotaryEmbeddingImpl(double theta, int64_t dHead, int64_t maxSeqLen,
                                         const torch::TensorOptions &options) {
  if (dHead % 2 != 0)
    throw std::invalid_argument("RoPE needs an even head dimension, got " + std::to_string(dHead));
  // A model built on the meta device still gets its (small) tables, on the host.
  auto [cos, sin] = ropeTables(theta, dHead, maxSeqLen,
                               options.device().is_meta() ? options.device(torch::kCPU) : options);
  cosTable = register_buffer("cos", cos);
  sinTable = register_buffer("sin", sin);
}

namespace {
/// The parameters a module registered, to replace a meta-built model's (whose tensors cannot
/// take storage on another device in place): torch::nn::Module keeps them for its subclasses.
struct RegisteredEntries : torch::nn::Module {
  static torch::Tensor &parameter(torch::nn::Module &m, const std::string &name) {
    return (m.*(&RegisteredEntries::parameters_))[name];
  }
};
} // namespace



torch::Tensor RotaryEmbeddingImpl::forward(const torch::Tensor &x, const torch::Tensor &positions) {
  int64_t seq = x.size(-2), half = x.size(-1) / 2;
  torch::Tensor cos, sin;
  if (positions.defined()) {
    std::vector<int64_t> shape = positions.sizes().vec();
    shape.push_back(half);
    cos = cosTable.index_select(0, positions.reshape(-1)).view(shape);
    sin = sinTable.index_select(0, positions.reshape(-1)).view(shape);
  } else {
    TORCH_CHECK(seq <= cosTable.size(0), "RoPE: sequence of ", seq,
                " is longer than the model's context length ", cosTable.size(0));
    cos = cosTable.narrow(0, 0, seq);
    sin = sinTable.narrow(0, 0, seq);
  }
  torch::Tensor pairs = x.unflatten(-1, {half, 2});
  torch::Tensor x0 = pairs.select(-1, 0), x1 = pairs.select(-1, 1);
  torch::Tensor out = torch::stack({x0 * cos - x1 * sin, x0 * sin + x1 * cos}, -1);
  return out.flatten(-2).to(x.scalar_type());
}

//===-- Attention, SwiGLU, block -------------------------------------------===//

CausalSelfAttentionImpl::CausalSelfAttentionImpl(const ModelConfig &config,
                                                 const torch::TensorOptions &options)
    : numHeads(config.numHeads), numKvHeads(config.kvHeads()), window(config.attentionWindow),
      attention(config.attention), kernels(config.kernels) {
  int64_t kvWidth = config.planShape().kvWidth();
  // Grouped-query attention: q, k and v of unequal widths, each drawn as its own linear.
  qkvProj = register_module(
      "qkv_proj", numKvHeads == numHeads
                      ? Linear(config.dModel, 3 * config.dModel, options, 3)
                      : Linear(config.dModel, std::vector<int64_t>{config.dModel, kvWidth, kvWidth},
                               options));
  outputProj = register_module("output_proj", Linear(config.dModel, config.dModel, options));
  rope = register_module("rope", RotaryEmbedding(config.ropeTheta, config.dModel / numHeads,
                                                 config.contextLength, options));
}

torch::Tensor CausalSelfAttentionImpl::forward(const torch::Tensor &x) {
  int64_t batch = x.size(0), seq = x.size(1), dModel = x.size(2), dHead = dModel / numHeads;
  torch::Tensor qkv = qkvProj(x);
  torch::Tensor q, k, v;
  if (kernels == KernelImpl::Tessel) {
    requireTesselOp(bool(tesselOps().rope), "RoPE", "Tessel RoPE");
    std::tie(q, k, v) =
        tesselOps().rope(qkv, rope->cosTable, rope->sinTable, numHeads, numKvHeads);
  } else if (numKvHeads != numHeads) {
    // q's heads, then k's and v's fewer: [batch, seq, heads, dHead] -> [batch, heads, seq,
    // dHead] each.
    int64_t kvWidth = numKvHeads * dHead;
    auto heads = [&](int64_t start, int64_t count) {
      return qkv.narrow(-1, start, count * dHead).view({batch, seq, count, dHead}).transpose(1, 2);
    };
    q = rope(heads(0, numHeads));
    k = rope(heads(dModel, numKvHeads));
    v = heads(dModel + kvWidth, numKvHeads);
  } else {
    // RoPE rotates q and k together: [batch, seq, 2, heads, dHead] -> [2, batch, heads, seq,
    // dHead].
    torch::Tensor qk = rope(qkv.narrow(-1, 0, 2 * dModel)
                                .view({batch, seq, 2, numHeads, dHead})
                                .permute({2, 0, 3, 1, 4}));
    q = qk.select(0, 0), k = qk.select(0, 1);
    v = qkv.narrow(-1, 2 * dModel, dModel).view({batch, seq, numHeads, dHead}).transpose(1, 2);
  }
  torch::Tensor out;
  switch (attention) {
  case AttentionImpl::Naive:
    out = naiveAttention(q, k, v, /*causal=*/true, window);
    break;
  case AttentionImpl::Sdpa: {
    bool grouped = numKvHeads != numHeads;
    if (window >= 0) // a dense mask: SDPA has no window of its own
      out = at::scaled_dot_product_attention(
          q, k, v, attentionMask(seq, seq, /*causal=*/true, window, x.options()), 0.0,
          /*is_causal=*/false, std::nullopt, grouped);
    else
      out = at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true, std::nullopt,
                                             grouped);
    break;
  }
  case AttentionImpl::Tessel:
    requireTesselOp(bool(tesselOps().attention), "attention", "FlashAttention");
    out = tesselOps().attention(q, k, v, window);
    break;
  }
  return outputProj(out.transpose(1, 2).reshape({batch, seq, dModel}));
}

torch::Tensor attentionMask(int64_t seqQ, int64_t seqK, bool causal, int64_t window,
                            const torch::TensorOptions &options) {
  auto longs = options.dtype(torch::kLong);
  torch::Tensor i = torch::arange(seqQ, longs).unsqueeze(1) + (seqK - seqQ);
  torch::Tensor j = torch::arange(seqK, longs).unsqueeze(0);
  torch::Tensor keep = window >= 0 ? j >= i - window : torch::ones({1, 1}, options.dtype(torch::kBool));
  return causal ? keep & (j <= i) : keep.expand({seqQ, seqK});
}

torch::Tensor naiveAttention(const torch::Tensor &q, const torch::Tensor &k,
                             const torch::Tensor &v, bool causal, int64_t window) {
  auto perQueryHead = [&](const torch::Tensor &t) {
    return t.size(1) == q.size(1) ? t : t.repeat_interleave(q.size(1) / t.size(1), 1);
  };
  torch::Tensor scores = torch::matmul(q, perQueryHead(k).transpose(-2, -1)) /
                         std::sqrt(double(q.size(-1)));
  if (causal || window >= 0)
    scores = scores.masked_fill(
        attentionMask(q.size(-2), k.size(-2), causal, window, q.options()).logical_not(),
        -INFINITY);
  return torch::matmul(torch::softmax(scores, -1), perQueryHead(v));
}

SwiGLUImpl::SwiGLUImpl(int64_t dModel, int64_t dFF, KernelImpl kernels,
                       const torch::TensorOptions &options)
    : dFF(dFF), kernels(kernels) {
  w13 = register_module("w13", Linear(dModel, 2 * dFF, options, 2));
  w2 = register_module("w2", Linear(dFF, dModel, options));
}

torch::Tensor SwiGLUImpl::forward(const torch::Tensor &x) {
  torch::Tensor h = w13(x);
  if (kernels == KernelImpl::Tessel) {
    requireTesselOp(bool(tesselOps().swiglu), "SwiGLU", "Tessel SwiGLU");
    return w2(tesselOps().swiglu(h));
  }
  return w2(torch::silu(h.narrow(-1, 0, dFF)) * h.narrow(-1, dFF, dFF));
}

TransformerBlockImpl::TransformerBlockImpl(const ModelConfig &config,
                                           const torch::TensorOptions &options) {
  ln1 = register_module("ln1", RMSNorm(config.dModel, config.rmsNormEps, config.kernels, options));
  attn = register_module("attn", CausalSelfAttention(config, options));
  ln2 = register_module("ln2", RMSNorm(config.dModel, config.rmsNormEps, config.kernels, options));
  ffn = register_module("ffn", SwiGLU(config.dModel, config.dFF, config.kernels, options));
}

std::tuple<torch::Tensor, torch::Tensor>
TransformerBlockImpl::forward(const torch::Tensor &x, const torch::Tensor &pending) {
  torch::Tensor residual, normed, attended;
  {
    NvtxRange range("attention");
    std::tie(residual, normed) = ln1->addForward(x, pending);
    attended = attn(normed);
  }
  NvtxRange range("feed_forward");
  std::tie(residual, normed) = ln2->addForward(residual, attended);
  return {residual, ffn(normed)};
}

//===-- The model ----------------------------------------------------------===//

TransformerLMImpl::TransformerLMImpl(const ModelConfig &config, torch::Device device)
    : config_(config) {
  config.validate();
  auto options = torch::TensorOptions().device(device);
  tokenEmbeddings =
      register_module("token_embeddings", Embedding(config.vocabSize, config.dModel, options));
  torch::nn::ModuleList list;
  for (int64_t i = 0; i < config.numLayers; ++i) {
    layers.push_back(TransformerBlock(config, options));
    list->push_back(layers.back());
  }
  register_module("layers", list);
  lnFinal = register_module("ln_final",
                            RMSNorm(config.dModel, config.rmsNormEps, config.kernels, options));
  lmHead = register_module("lm_head", Linear(config.dModel, config.vocabSize, options));
  setMatmul(config.matmul);
}

torch::Tensor TransformerLMImpl::forward(const torch::Tensor &tokens) {
  TORCH_CHECK(tokens.dim() == 2, "TransformerLM: tokens must be [batch, seq], got ",
              tokens.sizes());
  TORCH_CHECK(tokens.size(1) <= config_.contextLength, "TransformerLM: sequence of ",
              tokens.size(1), " is longer than the context length ", config_.contextLength);
  beforeForward(*tokenEmbeddings);
  torch::Tensor x = tokenEmbeddings(tokens), pending, normed;
  afterForward(*tokenEmbeddings, {x});
  for (size_t i = 0; i < layers.size(); ++i) {
    beforeForward(*layers[i]);
    if (checkpointBlocks_ && torch::GradMode::is_enabled()) {
      TransformerBlock block = layers[i];
      std::vector<torch::Tensor> out = checkpointed(
          [block](const std::vector<torch::Tensor> &in) mutable {
            auto [h, p] = block->forward(in[0], in[1]);
            return std::vector<torch::Tensor>{h, p};
          },
          {x, pending});
      x = out[0];
      pending = out[1];
    } else {
      std::tie(x, pending) = layers[i]->forward(x, pending);
    }
    afterForward(*layers[i], {x, pending});
  }
  beforeForward(*lnFinal);
  std::tie(x, normed) = lnFinal->addForward(x, pending);
  afterForward(*lnFinal, {normed});
  beforeForward(*lmHead);
  torch::Tensor logits = lmHead(normed);
  afterForward(*lmHead, {logits});
  return logits;
}

void TransformerLMImpl::setAttention(AttentionImpl attention) {
  config_.attention = attention;
  for (TransformerBlock &block : layers)
    block->attn->attention = attention;
}

void TransformerLMImpl::setKernels(KernelImpl kernels) {
  config_.kernels = kernels;
  lnFinal->kernels = kernels;
  for (TransformerBlock &block : layers) {
    block->ln1->kernels = kernels;
    block->ln2->kernels = kernels;
    block->attn->kernels = kernels;
    block->ffn->kernels = kernels;
  }
}

void TransformerLMImpl::setMatmul(MatmulImpl matmul) {
  config_.matmul = matmul;
  lmHead->matmul = matmul;
  for (TransformerBlock &block : layers) {
    block->attn->qkvProj->matmul = matmul;
    block->attn->outputProj->matmul = matmul;
    block->ffn->w13->matmul = matmul;
    block->ffn->w2->matmul = matmul;
  }
}

std::vector<torch::Tensor> TransformerLMImpl::makeWorkingCopies(torch::ScalarType dtype) {
  if (dtype != torch::kBFloat16 && dtype != torch::kHalf)
    throw std::invalid_argument("TransformerLM: working copies are bf16 or f16");
  std::vector<Linear> linears = {lmHead};
  for (TransformerBlock &block : layers)
    for (Linear l : {block->attn->qkvProj, block->attn->outputProj, block->ffn->w13, block->ffn->w2})
      linears.push_back(l);
  torch::NoGradGuard noGrad;
  for (Linear &l : linears)
    l->workingWeight = l->weight.detach().to(dtype).contiguous().requires_grad_(true);
  std::vector<torch::Tensor> copies;
  for (const torch::Tensor &p : parameters()) {
    copies.emplace_back();
    for (Linear &l : linears)
      if (l->weight.is_same(p))
        copies.back() = l->workingWeight;
  }
  return copies;
}

void TransformerLMImpl::materialize(torch::nn::Module &part, torch::Device device) {
  torch::NoGradGuard noGrad;
  // modules() walks in registration order, the constructor's order of initialisation.
  for (const std::shared_ptr<torch::nn::Module> &m : part.modules()) {
    auto fresh = [&](torch::Tensor &member) {
      torch::Tensor t = torch::empty(member.sizes(), member.options().device(device));
      t.set_requires_grad(member.requires_grad());
      member = RegisteredEntries::parameter(*m, "weight") = t;
    };
    if (auto *linear = m->as<LinearImpl>()) {
      fresh(linear->weight);
      linear->resetParameters();
    } else if (auto *embedding = m->as<EmbeddingImpl>()) {
      fresh(embedding->weight);
      embedding->resetParameters();
    } else if (auto *norm = m->as<RMSNormImpl>()) {
      fresh(norm->weight);
      norm->weight.fill_(1);
    } else if (!m->parameters(/*recurse=*/false).empty()) {
      throw std::logic_error("TransformerLM::materialize: unexpected parameters in " + m->name());
    }
  }
}

int64_t TransformerLMImpl::numParameters() const {
  int64_t count = 0;
  for (const torch::Tensor &p : parameters())
    count += p.numel();
  return count;
}

torch::Tensor crossEntropy(const torch::Tensor &logits, const torch::Tensor &targets,
                           KernelImpl kernels) {
  if (kernels == KernelImpl::Tessel) {
    requireTesselOp(bool(tesselOps().crossEntropy), "cross-entropy", "Tessel cross-entropy");
    return tesselOps().crossEntropy(logits, targets);
  }
  return at::cross_entropy_loss(logits.reshape({-1, logits.size(-1)}).to(torch::kFloat32),
                                targets.reshape({-1}));
}

} // namespace tessel::model
