//===- test/harness/ModelTest.cpp - The Transformer LM, AdamW and autocast on the CPU ===//

#include "bench/model/AdamW.h"
#include "bench/model/Autocast.h"
#include "bench/model/TesselOps.h"
#include "bench/model/TransformerLM.h"

#include <gtest/gtest.h>
#include <torch/optim/adamw.h>
#include <torch/serialize.h>
#include <ATen/Parallel.h>
#include <torch/utils.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

using namespace tessel::model;

namespace {

// One intra-op thread: the models are tiny, and spinning OpenMP workers on a
// busy 2-core CI machine make them hundreds of times slower.
class SingleThreaded : public testing::Environment {
public:
  void SetUp() override { at::set_num_threads(1); }
};
[[maybe_unused]] testing::Environment *const singleThreaded =
    testing::AddGlobalTestEnvironment(new SingleThreaded);

ModelConfig tinyConfig() {
  ModelConfig c;
  c.name = "tiny";
  c.vocabSize = 97;
  c.contextLength = 16;
  c.dModel = 32;
  c.dFF = 64;
  c.numLayers = 2;
  c.numHeads = 4;
  return c;
}

TransformerLM tinyModel(AttentionImpl attention = AttentionImpl::Sdpa, uint64_t seed = 0) {
  torch::manual_seed(seed);
  ModelConfig c = tinyConfig();
  c.attention = attention;
  return TransformerLM(c);
}

torch::Tensor randomTokens(int64_t batch, int64_t seq, int64_t vocab, uint64_t seed) {
  torch::manual_seed(seed);
  return torch::randint(vocab, {batch, seq}, torch::kLong);
}

} // namespace

TEST(HarnessModel, PresetParameterCounts) {
  EXPECT_EQ(ModelConfig::preset("small").parameterCount(), 128625408);
  // The other presets, by the same formula written out once more.
  for (const std::string &name : ModelConfig::presetNames()) {
    ModelConfig c = ModelConfig::preset(name);
    int64_t d = c.dModel, f = c.dFF, v = c.vocabSize;
    EXPECT_EQ(c.parameterCount(), 2 * v * d + c.numLayers * (4 * d * d + 3 * d * f + 2 * d) + d)
        << name;
    EXPECT_NO_THROW(c.validate()) << name;
  }
  EXPECT_THROW(ModelConfig::preset("huge"), std::invalid_argument);
}

TEST(HarnessModel, SmallModelHoldsExactlyItsParameterCount) {
  // Built on the meta device: shapes without memory.
  TransformerLM small(ModelConfig::preset("small"), torch::kMeta);
  EXPECT_EQ(small->numParameters(), 128625408);
  for (const std::string &name : ModelConfig::presetNames()) {
    TransformerLM lm(ModelConfig::preset(name), torch::kMeta);
    EXPECT_EQ(lm->numParameters(), ModelConfig::preset(name).parameterCount()) << name;
  }
}

TEST(HarnessModel, ParameterNamesFollowCS336) {
  TransformerLM lm = tinyModel();
  auto named = lm->named_parameters();
  for (const char *name : {"token_embeddings.weight", "layers.0.attn.qkv_proj.weight",
                           "layers.1.attn.output_proj.weight", "layers.0.ln1.weight",
                           "layers.0.ffn.w13.weight", "layers.0.ffn.w2.weight",
                           "ln_final.weight", "lm_head.weight"})
    EXPECT_NE(named.find(name), nullptr) << name;
  // RoPE tables are buffers, not parameters.
  EXPECT_EQ(named.find("layers.0.attn.rope.cos"), nullptr);
}

TEST(HarnessModel, ForwardShapesAndDtypes) {
  TransformerLM lm = tinyModel();
  torch::Tensor logits = lm->forward(randomTokens(3, 11, 97, 1));
  EXPECT_EQ(logits.sizes(), (std::vector<int64_t>{3, 11, 97}));
  EXPECT_EQ(logits.scalar_type(), torch::kFloat32);
  EXPECT_TRUE(torch::isfinite(logits).all().item<bool>());
  EXPECT_THROW(lm->forward(randomTokens(1, 17, 97, 1)), c10::Error); // longer than the context
}

TEST(HarnessModel, InitialisationIsTruncatedNormal) {
  torch::manual_seed(0);
  Linear linear(200, 300);
  double std = std::sqrt(2.0 / 500.0);
  EXPECT_LE(linear->weight.abs().max().item<double>(), 3 * std + 1e-6);
  EXPECT_NEAR(linear->weight.std().item<double>(), std * 0.986, std * 0.02); // trunc. at 3σ
  Embedding embedding(1000, 64);
  EXPECT_LE(embedding->weight.abs().max().item<double>(), 3.0 + 1e-6);
  EXPECT_NEAR(embedding->weight.std().item<double>(), 0.986, 0.02);
  // A fused q/k/v weight is initialised like three dModel x dModel linears.
  Linear qkv(64, 192, torch::TensorOptions(), 3);
  EXPECT_NEAR(qkv->weight.std().item<double>(), std::sqrt(2.0 / 128.0) * 0.986, 0.01);
}

TEST(HarnessModel, CausalEarlierLogitsIgnoreLaterTokens) {
  for (AttentionImpl attention : {AttentionImpl::Naive, AttentionImpl::Sdpa}) {
    TransformerLM lm = tinyModel(attention);
    torch::NoGradGuard noGrad;
    torch::Tensor tokens = randomTokens(2, 12, 97, 2);
    torch::Tensor changed = tokens.clone();
    const int64_t t = 7;
    changed.index_put_({torch::indexing::Slice(), t},
                       (tokens.index({torch::indexing::Slice(), t}) + 1) % 97);
    torch::Tensor a = lm->forward(tokens), b = lm->forward(changed);
    auto before = torch::indexing::Slice(0, t), after = torch::indexing::Slice(t, 12);
    EXPECT_TRUE(torch::allclose(a.index({torch::indexing::Slice(), before}),
                                b.index({torch::indexing::Slice(), before}), 1e-6, 1e-6))
        << toString(attention);
    EXPECT_FALSE(torch::allclose(a.index({torch::indexing::Slice(), after}),
                                 b.index({torch::indexing::Slice(), after}), 1e-4, 1e-4))
        << toString(attention);
  }
}

TEST(HarnessModel, NaiveAndSdpaAttentionAgree) {
  TransformerLM lm = tinyModel(AttentionImpl::Naive);
  torch::NoGradGuard noGrad;
  torch::Tensor tokens = randomTokens(2, 16, 97, 3);
  torch::Tensor naive = lm->forward(tokens);
  lm->setAttention(AttentionImpl::Sdpa);
  EXPECT_TRUE(torch::allclose(naive, lm->forward(tokens), 1e-4, 1e-5));
}

TEST(HarnessModel, GroupedQueryAttentionShrinksTheProjection) {
  ModelConfig c = tinyConfig(); // d_model 32, 4 heads of 8
  c.numKvHeads = 2;
  int64_t d = c.dModel, kv = 2 * 8, f = c.dFF, v = c.vocabSize;
  EXPECT_EQ(c.parameterCount(),
            2 * v * d + c.numLayers * (2 * d * d + 2 * d * kv + 3 * d * f + 2 * d) + d);
  torch::manual_seed(5);
  TransformerLM lm(c);
  EXPECT_EQ(lm->numParameters(), c.parameterCount());
  EXPECT_EQ(lm->named_parameters()["layers.0.attn.qkv_proj.weight"].sizes(),
            (std::vector<int64_t>{d + 2 * kv, d}));
  EXPECT_NE(c.describe().find("2 kv heads"), std::string::npos) << c.describe();
}

// Grouped-query attention with a sliding window: naive (scores materialised, k and v
// repeated per group) and SDPA (enable_gqa, the window as a mask) compute one function, and
// a token more than the window back does not reach a later position in the first layer.
TEST(HarnessModel, GroupedQueryAndWindowAttentionAgreeAndHideFarTokens) {
  ModelConfig c = tinyConfig();
  c.numKvHeads = 1, c.attentionWindow = 3, c.numLayers = 1;
  c.attention = AttentionImpl::Naive;
  torch::manual_seed(6);
  TransformerLM lm(c);
  torch::NoGradGuard noGrad;
  torch::Tensor tokens = randomTokens(2, 16, 97, 7);
  torch::Tensor naive = lm->forward(tokens);
  lm->setAttention(AttentionImpl::Sdpa);
  EXPECT_TRUE(torch::allclose(naive, lm->forward(tokens), 1e-4, 1e-5));
  // One layer: position p sees tokens p-3..p only; changing token 2 leaves p >= 6 alone.
  torch::Tensor changed = tokens.clone();
  changed.index_put_({torch::indexing::Slice(), 2},
                     (tokens.index({torch::indexing::Slice(), 2}) + 1) % 97);
  torch::Tensor a = lm->forward(tokens), b = lm->forward(changed);
  auto seen = torch::indexing::Slice(2, 6), hidden = torch::indexing::Slice(6, 16);
  EXPECT_TRUE(torch::allclose(a.index({torch::indexing::Slice(), hidden}),
                              b.index({torch::indexing::Slice(), hidden}), 1e-6, 1e-6));
  EXPECT_FALSE(torch::allclose(a.index({torch::indexing::Slice(), seen}),
                               b.index({torch::indexing::Slice(), seen}), 1e-4, 1e-4));
}

TEST(HarnessModel, RopeMatchesTheDirectFormula) {
  const int64_t seq = 9, dHead = 8;
  const double theta = 10000.0;
  RotaryEmbedding rope(theta, dHead, 32);
  torch::manual_seed(4);
  torch::Tensor x = torch::randn({2, 3, seq, dHead}, torch::kFloat64).to(torch::kFloat32);
  torch::Tensor out = rope->forward(x);
  auto xa = x.accessor<float, 4>();
  auto oa = out.accessor<float, 4>();
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 3; ++h)
      for (int64_t p = 0; p < seq; ++p)
        for (int64_t i = 0; i < dHead / 2; ++i) {
          double angle = p / std::pow(theta, 2.0 * i / dHead);
          double x0 = xa[b][h][p][2 * i], x1 = xa[b][h][p][2 * i + 1];
          EXPECT_NEAR(oa[b][h][p][2 * i], x0 * std::cos(angle) - x1 * std::sin(angle), 1e-5);
          EXPECT_NEAR(oa[b][h][p][2 * i + 1], x0 * std::sin(angle) + x1 * std::cos(angle), 1e-5);
        }
  // Explicit positions give the same as the implicit 0..seq-1, and shift with them.
  EXPECT_TRUE(torch::allclose(rope->forward(x, torch::arange(seq)), out));
  torch::Tensor shifted = rope->forward(x, torch::arange(seq) + 5);
  EXPECT_FALSE(torch::allclose(shifted, out, 1e-4, 1e-4));
}

TEST(HarnessModel, RmsNormMatchesTheDefinition) {
  RMSNorm norm(16, 1e-5, KernelImpl::Eager);
  torch::manual_seed(5);
  {
    torch::NoGradGuard noGrad;
    norm->weight.uniform_(0.5, 1.5);
  }
  torch::Tensor x = torch::randn({4, 16});
  torch::Tensor expected = x / torch::sqrt(x.pow(2).mean(-1, true) + 1e-5) * norm->weight;
  EXPECT_TRUE(torch::allclose(norm->forward(x), expected, 1e-5, 1e-6));
}

TEST(HarnessModel, LossDecreasesOverAdamWSteps) {
  for (AdamWImpl impl : {AdamWImpl::Fused, AdamWImpl::Foreach}) {
    TransformerLM lm = tinyModel();
    torch::Tensor tokens = randomTokens(4, 16, 97, 6), targets = randomTokens(4, 16, 97, 7);
    AdamWOptions options;
    options.lr = 3e-3;
    options.impl = impl;
    AdamW optimizer(lm->parameters(), options);
    double first = 0, last = 0;
    for (int step = 0; step < 15; ++step) {
      optimizer.zeroGrad();
      torch::Tensor loss = crossEntropy(lm->forward(tokens), targets);
      loss.backward();
      optimizer.step();
      (step == 0 ? first : last) = loss.item<double>();
    }
    EXPECT_NEAR(first, std::log(97.0), 1.0) << toString(impl); // about uniform at init
    EXPECT_LT(last, first - 0.5) << toString(impl);
  }
}

TEST(HarnessModel, AdamWMatchesLibTorchAdamW) {
  torch::manual_seed(8);
  std::vector<torch::Tensor> ours = {torch::randn({5, 3}), torch::randn({7})};
  std::vector<torch::Tensor> reference;
  for (auto &t : ours) {
    t.requires_grad_(true);
    reference.push_back(t.detach().clone().requires_grad_(true));
  }
  for (AdamWImpl impl : {AdamWImpl::Fused, AdamWImpl::Foreach}) {
    std::vector<torch::Tensor> mine;
    for (auto &t : ours)
      mine.push_back(t.detach().clone().requires_grad_(true));
    std::vector<torch::Tensor> theirs;
    for (auto &t : reference)
      theirs.push_back(t.detach().clone().requires_grad_(true));
    AdamWOptions options;
    options.lr = 1e-2;
    options.weightDecay = 0.1;
    options.impl = impl;
    AdamW a(mine, options);
    torch::optim::AdamW b(theirs, torch::optim::AdamWOptions(1e-2).weight_decay(0.1));
    for (int step = 0; step < 5; ++step) {
      for (size_t i = 0; i < mine.size(); ++i) {
        if (step == 1 && i == 1) { // no gradient: skipped, its step count too
          mine[i].mutable_grad() = torch::Tensor();
          theirs[i].mutable_grad() = torch::Tensor();
          continue;
        }
        torch::Tensor g = torch::randn_like(mine[i]);
        mine[i].mutable_grad() = g.clone();
        theirs[i].mutable_grad() = g.clone();
      }
      a.step();
      b.step();
    }
    for (size_t i = 0; i < mine.size(); ++i)
      EXPECT_TRUE(torch::allclose(mine[i], theirs[i], 1e-5, 1e-6)) << toString(impl);
  }
}

/// bf16 working copies that AdamW writes (what --weight-cast optimizer runs) against
/// autocast casting the f32 weights: the same bf16 weights and weight gradients, so the
/// same losses and parameters; the copies stay the rounding of the masters. CPU autocast.
TEST(HarnessModel, WorkingCopiesMatchAutocastCasts) {
  for (AdamWImpl impl : {AdamWImpl::Fused, AdamWImpl::Foreach}) {
    SCOPED_TRACE(toString(impl));
    auto train = [&](bool copies) {
      TransformerLM lm = tinyModel();
      torch::Tensor tokens = randomTokens(4, 16, 97, 6), targets = randomTokens(4, 16, 97, 7);
      AdamWOptions options;
      options.lr = 3e-3, options.impl = impl;
      AdamW optimizer(lm->parameters(), options);
      if (copies)
        optimizer.setWorkingCopies(lm->makeWorkingCopies(torch::kBFloat16));
      std::vector<double> losses;
      for (int step = 0; step < 4; ++step) {
        optimizer.zeroGrad();
        torch::Tensor loss;
        {
          AutocastGuard autocast(torch::kCPU, torch::kBFloat16);
          loss = crossEntropy(lm->forward(tokens), targets);
        }
        loss.backward();
        optimizer.step();
        losses.push_back(loss.item<double>());
      }
      for (size_t i = 0; i < optimizer.workingCopies().size(); ++i) {
        if (const torch::Tensor &c = optimizer.workingCopies()[i]; c.defined()) {
          EXPECT_TRUE(torch::equal(c, optimizer.params()[i].detach().to(torch::kBFloat16)))
              << "copy " << i;
        }
      }
      std::vector<torch::Tensor> flat;
      for (auto &p : lm->parameters())
        flat.push_back(p.detach().flatten());
      return std::pair{losses, torch::cat(flat)};
    };
    auto [castLosses, castParams] = train(false);
    auto [copyLosses, copyParams] = train(true);
    for (size_t step = 0; step < castLosses.size(); ++step)
      EXPECT_NEAR(copyLosses[step], castLosses[step], 1e-6 * std::abs(castLosses[step]))
          << "step " << step;
    EXPECT_LE((copyParams - castParams).abs().max().item<double>(), 1e-6);
  }
  // A parameter whose gradient landed on its master as well as on its copy is an error.
  TransformerLM lm = tinyModel();
  AdamW optimizer(lm->parameters(), AdamWOptions{});
  std::vector<torch::Tensor> copies = lm->makeWorkingCopies(torch::kBFloat16);
  optimizer.setWorkingCopies(copies);
  for (size_t i = 0; i < copies.size(); ++i)
    if (copies[i].defined()) {
      copies[i].mutable_grad() = torch::zeros_like(copies[i]);
      optimizer.params()[i].mutable_grad() = torch::zeros_like(optimizer.params()[i]);
      break;
    }
  EXPECT_THROW(optimizer.step(), std::runtime_error);
  EXPECT_THROW(optimizer.setWorkingCopies({}), std::invalid_argument);
}

TEST(HarnessModel, ActivationCheckpointingGivesTheSameGradients) {
  // Blocks recomputed in the backward: the same loss and gradients as keeping their
  // activations, in f32 and under bf16 autocast (the recomputation runs under it too).
  torch::Tensor tokens = randomTokens(2, 12, 97, 11), targets = randomTokens(2, 12, 97, 12);
  for (bool bf16 : {false, true}) {
    std::vector<std::vector<torch::Tensor>> grads;
    std::vector<double> losses;
    for (bool checkpoint : {false, true}) {
      TransformerLM lm = tinyModel(AttentionImpl::Sdpa, 5);
      lm->setActivationCheckpointing(checkpoint);
      torch::Tensor loss;
      {
        AutocastGuard autocast(torch::kCPU, torch::kBFloat16, bf16);
        loss = crossEntropy(lm->forward(tokens), targets);
      }
      loss.backward();
      losses.push_back(loss.item<double>());
      grads.emplace_back();
      for (const torch::Tensor &p : lm->parameters()) {
        ASSERT_TRUE(p.grad().defined());
        grads.back().push_back(p.grad().clone());
      }
    }
    EXPECT_EQ(losses[0], losses[1]) << (bf16 ? "bf16" : "f32");
    for (size_t i = 0; i < grads[0].size(); ++i)
      EXPECT_TRUE(torch::equal(grads[0][i], grads[1][i]))
          << (bf16 ? "bf16" : "f32") << " parameter " << i << ": max diff "
          << (grads[0][i] - grads[1][i]).abs().max().item<double>();
  }
}

TEST(HarnessModel, AutocastKeepsParametersF32) {
  TransformerLM lm = tinyModel();
  torch::Tensor tokens = randomTokens(2, 8, 97, 9), targets = randomTokens(2, 8, 97, 10);
  torch::Tensor logits, loss;
  {
    AutocastGuard autocast(torch::kCPU, torch::kBFloat16);
    EXPECT_TRUE(at::autocast::is_autocast_enabled(torch::kCPU));
    logits = lm->forward(tokens);
    loss = crossEntropy(logits, targets);
  }
  EXPECT_FALSE(at::autocast::is_autocast_enabled(torch::kCPU));
  EXPECT_EQ(logits.scalar_type(), torch::kBFloat16); // the LM head ran in bf16
  EXPECT_EQ(loss.scalar_type(), torch::kFloat32);
  loss.backward();
  for (const auto &p : lm->named_parameters()) {
    EXPECT_EQ(p.value().scalar_type(), torch::kFloat32) << p.key();
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_EQ(p.value().grad().scalar_type(), torch::kFloat32) << p.key();
  }
  // A disabled guard changes nothing.
  {
    AutocastGuard off(torch::kCPU, torch::kBFloat16, /*enabled=*/false);
    EXPECT_EQ(lm->forward(tokens).scalar_type(), torch::kFloat32);
  }
}

TEST(HarnessModel, TesselKernelsReportWhatIsMissingAndUseWhatIsRegistered) {
  TransformerLM lm = tinyModel(AttentionImpl::Tessel);
  torch::Tensor tokens = randomTokens(1, 8, 97, 11);
  try {
    lm->forward(tokens);
    FAIL() << "expected a 'not available yet' error";
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find("not available yet: needs the FlashAttention kernel"),
              std::string::npos)
        << e.what();
  }
  int calls = 0;
  tesselOps().attention = [&](const torch::Tensor &q, const torch::Tensor &k,
                              const torch::Tensor &v, int64_t) {
    ++calls;
    return at::scaled_dot_product_attention(q, k, v, {}, 0.0, true);
  };
  torch::NoGradGuard noGrad;
  torch::Tensor viaHook = lm->forward(tokens);
  lm->setAttention(AttentionImpl::Sdpa);
  EXPECT_EQ(calls, 2); // one per layer
  EXPECT_TRUE(torch::allclose(viaHook, lm->forward(tokens)));
  tesselOps().attention = nullptr;
  lm->setKernels(KernelImpl::Tessel);
  EXPECT_THROW(lm->forward(tokens), std::runtime_error);
}

TEST(HarnessModel, ConfigValidation) {
  ModelConfig c = tinyConfig();
  c.numHeads = 5;
  EXPECT_THROW(c.validate(), std::invalid_argument);
  c = tinyConfig();
  c.numKvHeads = 3; // 4 query heads cannot share 3 key/value heads
  EXPECT_THROW(c.validate(), std::invalid_argument);
  c = tinyConfig();
  c.attentionWindow = -2;
  EXPECT_THROW(c.validate(), std::invalid_argument);
  c = tinyConfig();
  c.dModel = 36;
  c.numHeads = 4; // head dimension 9 is odd: no RoPE pairs
  EXPECT_THROW(c.validate(), std::invalid_argument);
  EXPECT_THROW(parseAttentionImpl("flash"), std::invalid_argument);
  EXPECT_EQ(parseKernelImpl("tessel"), KernelImpl::Tessel);
}

// Writes a tiny model's weights, a batch and the C++ logits and loss in torch.save's
// format; bench/reference/check_same_model.py loads them into the Python reference
// model and checks it computes the same function (CTest HarnessReference.SameModel).
TEST(HarnessModel, ExportForPythonReference) {
  const char *env = std::getenv("TESSEL_REFERENCE_CASE");
  std::string path = env ? env : testing::TempDir() + "reference-case.pt";
  ModelConfig c = tinyConfig();
  torch::manual_seed(12);
  TransformerLM lm(c);
  torch::Tensor tokens = randomTokens(2, 16, c.vocabSize, 13);
  torch::Tensor targets = randomTokens(2, 16, c.vocabSize, 14);
  torch::NoGradGuard noGrad;
  torch::Tensor logits = lm->forward(tokens);
  torch::Tensor loss = crossEntropy(logits, targets);
  c10::Dict<std::string, torch::Tensor> weights;
  for (const auto &p : lm->named_parameters())
    weights.insert(p.key(), p.value());
  c10::Dict<std::string, int64_t> sizes;
  for (auto [key, value] : {std::pair<const char *, int64_t>{"vocab_size", c.vocabSize},
                            {"context_length", c.contextLength}, {"d_model", c.dModel},
                            {"d_ff", c.dFF}, {"num_layers", c.numLayers},
                            {"num_heads", c.numHeads}})
    sizes.insert(key, value);
  c10::impl::GenericDict bundle(c10::StringType::get(), c10::AnyType::get());
  bundle.insert("weights", weights);
  bundle.insert("config", sizes);
  bundle.insert("tokens", tokens);
  bundle.insert("targets", targets);
  bundle.insert("logits", logits);
  bundle.insert("loss", loss);
  std::vector<char> bytes = torch::pickle_save(c10::IValue(bundle));
  std::ofstream(path, std::ios::binary).write(bytes.data(), bytes.size());
  // Round trip in C++ as a sanity check of the file.
  c10::IValue back = torch::pickle_load(bytes);
  EXPECT_TRUE(torch::equal(back.toGenericDict().at("logits").toTensor(), logits));
}
