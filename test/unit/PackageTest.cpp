//===- test/unit/PackageTest.cpp - Package parsing, validation, saving ----===//
#include "TestPackages.h"

#include "package/FileUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <dirent.h>
#include <random>
#include <unistd.h>

using namespace tessel;
using tessel::test::samplePackage;

static std::string errorOf(std::string_view text) {
  try {
    Package::parse(text, "softmax.tslpkg");
  } catch (const Error &error) {
    return error.what();
  }
  return "(no error)";
}

/// The sample package as JSON, for editing in tests.
static Json sampleJson() { return Json::parse(samplePackage().serialize()); }

static Json &variantJson(Json &root, size_t kernel, size_t variant) {
  return root.find("kernels")->asArray()[kernel].find("variants")->asArray()
      [variant];
}

TEST(Package, RoundTrip) {
  Package original = samplePackage();
  std::string text = original.serialize();
  Package parsed = Package::parse(text, "softmax.tslpkg");
  EXPECT_EQ(parsed.serialize(), text);
  EXPECT_EQ(parsed.compiler, "tesselc 0.1.0");
  EXPECT_EQ(parsed.sourceHash, "abc123");
  ASSERT_EQ(parsed.kernels.size(), 2u);
  const KernelInfo &softmax = parsed.kernel("softmax");
  EXPECT_EQ(softmax.params, original.kernels[0].params);
  EXPECT_EQ(softmax.configCount(), 2);
  EXPECT_EQ(softmax.configs[1].variants.size(), 3u);
  EXPECT_EQ(softmax.configs[1].variants[2].config, 1);
  EXPECT_EQ(softmax.allVariants().size(), 5u);
  EXPECT_EQ(softmax.allVariants()[3], &softmax.configs[1].variants[1]);
  EXPECT_EQ(softmax.configs[0].variants[1].divisibleBy16,
            (std::vector<std::string>{"out", "inp", "stride", "n_cols"}));
  EXPECT_EQ(softmax.configs[0].variants[0].ptx, original.kernels[0].configs[0].variants[0].ptx);
  EXPECT_EQ(softmax.configs[1].text(), "BLOCK=2048 num_warps=8 num_stages=1");
  EXPECT_EQ(softmax.configs[1]["BLOCK"], 2048);
  EXPECT_EQ(softmax.configs[1].numWarps, 8);
  EXPECT_EQ(softmax.signature(),
            "softmax(out: *f32, inp: *f32, stride: i32, n_rows: i64, "
            "n_cols: i32)");
  EXPECT_EQ(parsed.contentHash(), original.contentHash());
  EXPECT_EQ(parsed.contentHash().size(), 16u);
}

TEST(Package, MachineCodeRoundTripsAndIsChecked) {
  Package original = samplePackage();
  std::string cubin("\x7f" "ELF\0\x01\xff binary", 14);
  original.kernels[0].configs[0].variants[1].cubin = cubin;
  std::string text = original.serialize();
  EXPECT_NE(text.find("\"cubin\": \"f0VMRgAB/yBiaW5hcnk=\""), std::string::npos) << text;
  Package parsed = Package::parse(text, "softmax.tslpkg");
  EXPECT_EQ(parsed.kernels[0].configs[0].variants[1].cubin, cubin);
  EXPECT_TRUE(parsed.kernels[0].configs[0].variants[0].cubin.empty());
  EXPECT_EQ(parsed.serialize(), text);

  Json root = sampleJson();
  variantJson(root, 0, 1).set("cubin", "not base64!");
  std::string message = errorOf(root.dump());
  EXPECT_NE(message.find("variant 1: field 'cubin' is not base64"), std::string::npos)
      << message;
}

// A warp-specialized variant runs its producer warps after the configuration's warps.
TEST(Package, ProducerWarpsRoundTripAndCountInTheBlock) {
  Package original = samplePackage();
  original.kernels[0].configs[0].variants[1].producerWarps = 4;
  std::string text = original.serialize();
  Package parsed = Package::parse(text, "softmax.tslpkg");
  const Config &config = parsed.kernels[0].configs[0];
  EXPECT_EQ(config.variants[1].producerWarps, 4);
  EXPECT_EQ(config.variants[0].producerWarps, 0);
  EXPECT_EQ(config.variants[1].threadsPerBlock(config.numWarps), (config.numWarps + 4) * 32);
  EXPECT_EQ(config.variants[0].threadsPerBlock(config.numWarps), config.numWarps * 32);
  EXPECT_EQ(parsed.serialize(), text);

  Json root = sampleJson();
  variantJson(root, 0, 1).set("producer_warps", 2);
  std::string message = errorOf(root.dump());
  EXPECT_NE(message.find("producer_warps"), std::string::npos) << message;
}

// config(..., warp_specialize=True) is the configuration's: every variant repeats it, and
// its text (the tuning records' name for it) differs from the same tiles without it.
TEST(Package, WarpSpecializeIsPartOfTheConfiguration) {
  Package original = samplePackage();
  Config &config = original.kernels[0].configs[0];
  std::string plain = config.text();
  config.warpSpecialize = true;
  EXPECT_EQ(config.text(), plain + " warp_specialize");
  std::string text = original.serialize();
  Package parsed = Package::parse(text, "softmax.tslpkg");
  EXPECT_TRUE(parsed.kernels[0].configs[0].warpSpecialize);
  EXPECT_EQ(parsed.serialize(), text);

  Json root = sampleJson();
  variantJson(root, 0, 1).set("warp_specialize", true);
  std::string message = errorOf(root.dump());
  EXPECT_NE(message.find("different num_warps/num_stages/warp_specialize"), std::string::npos)
      << message;
  variantJson(root, 0, 0).set("warp_specialize", 1);
  message = errorOf(root.dump());
  EXPECT_NE(message.find("'warp_specialize' must be true or false"), std::string::npos)
      << message;
}

TEST(Package, ParsesTheDocumentedExample) {
  const char *text = R"({ "format": "tessel-package", "version": 1,
    "compiler": "tesselc 0.1.0", "source": "kernels/softmax.tsl",
    "source_hash": "ff00",
    "kernels": [ { "name": "softmax",
      "params": [ {"name": "out", "kind": "pointer", "dtype": "f32"},
                  {"name": "stride", "kind": "scalar", "dtype": "i32"} ],
      "constexpr_params": ["BLOCK"], "autotune_key": ["stride"],
      "variants": [ { "config": 0, "constexprs": {"BLOCK": 1024},
        "num_warps": 4, "num_stages": 1, "shared_bytes": 64, "arch": "sm_90",
        "entry": "softmax", "divisible_by_16": ["out", "stride"],
        "ptx": "..." },
        { "config": 0, "constexprs": {"BLOCK": 1024},
        "num_warps": 4, "num_stages": 1, "shared_bytes": 64, "arch": "sm_90",
        "entry": "softmax", "divisible_by_16": [], "ptx": "..." } ] } ] })";
  Package package = Package::parse(text, "x.tslpkg");
  ASSERT_EQ(package.kernels[0].configs.size(), 1u);
  EXPECT_EQ(package.kernels[0].configs[0].variants.size(), 2u);
  EXPECT_TRUE(package.kernels[0].configs[0].variants[1].isGeneric());
  EXPECT_EQ(package.kernels[0].configs[0]["BLOCK"], 1024);
}

TEST(Package, MissingFieldNamesFileKernelVariantAndField) {
  Json root = sampleJson();
  Json::Object &members = variantJson(root, 0, 2).asObject();
  members.erase(std::remove_if(members.begin(), members.end(),
                               [](const Json::Member &m) {
                                 return m.first == "ptx";
                               }),
                members.end());
  EXPECT_EQ(errorOf(root.dump()),
            "softmax.tslpkg: kernel 'softmax' variant 2: missing field 'ptx'");
}

TEST(Package, WrongFormatAndVersion) {
  Json root = sampleJson();
  root.set("version", 2);
  std::string message = errorOf(root.dump());
  EXPECT_NE(message.find("unsupported package version 2"), std::string::npos)
      << message;
  EXPECT_NE(message.find("expected version 1"), std::string::npos) << message;

  root = sampleJson();
  root.set("format", "tessel-cache");
  message = errorOf(root.dump());
  EXPECT_NE(message.find("expected format 'tessel-package', found "
                         "\"tessel-cache\""),
            std::string::npos)
      << message;

  EXPECT_NE(errorOf("[]").find("not a Tessel package"), std::string::npos);
  EXPECT_NE(errorOf("{}").find("missing field 'format'"), std::string::npos);
}

TEST(Package, WrongDtypeAndKind) {
  Json root = sampleJson();
  Json &param = root.find("kernels")->asArray()[0].find("params")->asArray()[2];
  param.set("dtype", "int32");
  std::string message = errorOf(root.dump());
  EXPECT_EQ(message.find("softmax.tslpkg: kernel 'softmax' param 2 'stride': "
                         "unknown dtype 'int32'"),
            0u)
      << message;
  EXPECT_NE(message.find("bf16"), std::string::npos);

  param.set("dtype", "i32");
  param.set("kind", "tensor");
  message = errorOf(root.dump());
  EXPECT_NE(message.find("expected 'pointer' or 'scalar'"), std::string::npos)
      << message;
}

TEST(Package, FieldTypeErrors) {
  Json root = sampleJson();
  variantJson(root, 0, 1).set("num_warps", "4");
  EXPECT_EQ(errorOf(root.dump()),
            "softmax.tslpkg: kernel 'softmax' variant 1: field 'num_warps' "
            "must be an integer, found a string");
  root = sampleJson();
  variantJson(root, 1, 0).set("num_warps", 3);
  EXPECT_NE(errorOf(root.dump()).find("kernel 'add' config 0: num_warps is 3, expected a power of two"),
            std::string::npos)
      << errorOf(root.dump());
  // The compiler's limits (package/ConfigLimits.h): 1 to 32 stages.
  for (int stages : {0, 33}) {
    root = sampleJson();
    variantJson(root, 0, 1).set("num_stages", stages);
    std::string message = errorOf(root.dump());
    EXPECT_NE(message.find("'num_stages' is " + std::to_string(stages)), std::string::npos)
        << message;
  }
  root = sampleJson();
  variantJson(root, 0, 1).set("shared_bytes", -1);
  EXPECT_NE(errorOf(root.dump()).find("'shared_bytes' is -1"),
            std::string::npos);
}

TEST(Package, SemanticErrors) {
  auto expectError = [](const Package &package, const std::string &expected) {
    try {
      package.validate();
      ADD_FAILURE() << "no error, expected: " << expected;
    } catch (const Error &error) {
      EXPECT_NE(std::string(error.what()).find(expected), std::string::npos)
          << error.what();
    }
  };
  Package package = samplePackage();
  package.kernels[0].configs[1].variants[1].divisibleBy16 = {"nope"};
  expectError(package, "variant 3: divisible_by_16 names 'nope'");

  package = samplePackage();
  package.kernels[0].params.push_back({"scale", ParamKind::Scalar, DType::F32});
  package.kernels[0].configs[1].variants[1].divisibleBy16 = {"scale"};
  expectError(package, "only pointers and integers qualify");

  package = samplePackage();
  package.kernels[0].configs[0].constexprs.clear();
  expectError(package, "config 0: missing value for constexpr 'BLOCK'");

  package = samplePackage();
  package.kernels[0].configs[0].variants[0].arch = "compute_80";
  expectError(package, "arch 'compute_80' is not of the form");

  package = samplePackage();
  package.kernels[0].configs[1].variants[2].config = 3;
  expectError(package, "config 1: its variant 2 says config 3");

  package = samplePackage();
  package.kernels[0].configs[1].index = 5;
  expectError(package, "config 1: is numbered 5");

  package = samplePackage();
  package.kernels[0].configs[1].numWarps = 3;
  expectError(package, "config 1: num_warps is 3");

  package = samplePackage();
  package.kernels[0].configs[1].variants.clear();
  expectError(package, "config 1: has no variant");

  package = samplePackage();
  package.kernels[0].configs[1].variants[2].arch = "sm_80";
  expectError(package, "config 1: variants 1 and 2 are duplicates");

  package = samplePackage();
  package.kernels[0].autotuneKey = {"BLOCK"};
  expectError(package, "autotune_key names 'BLOCK'");

  package = samplePackage();
  package.kernels[1].name = "softmax";
  expectError(package, "duplicate kernel 'softmax'");

  package = samplePackage();
  package.kernels[0].params[1].name = "out";
  expectError(package, "duplicate param 'out'");

  package = samplePackage();
  package.kernels[0].configs.clear();
  expectError(package, "kernel 'softmax': no variants");
}

// The file repeats a configuration's values on each of its variants (format version 1):
// the reader gathers them into one Config and refuses variants that disagree.
TEST(Package, VariantsOfOneConfigMustAgree) {
  Json root = sampleJson();
  Json constexprs = Json::object();
  constexprs.set("BLOCK", 4096);
  variantJson(root, 0, 3).set("constexprs", constexprs);
  EXPECT_NE(errorOf(root.dump()).find("variant 3: config 1 has different constexprs"),
            std::string::npos)
      << errorOf(root.dump());

  root = sampleJson();
  variantJson(root, 0, 4).set("num_stages", 2);
  EXPECT_NE(errorOf(root.dump()).find("variant 4: config 1 has different num_warps/num_stages"),
            std::string::npos)
      << errorOf(root.dump());

  root = sampleJson();
  variantJson(root, 0, 4).set("config", 3);
  EXPECT_NE(errorOf(root.dump()).find("config 2 has no variant (configs must be numbered 0..3)"),
            std::string::npos)
      << errorOf(root.dump());

  // Variants stored out of configuration order are gathered into their configurations.
  root = sampleJson();
  Json::Array &variants = root.find("kernels")->asArray()[0].find("variants")->asArray();
  std::swap(variants[0], variants[4]);
  Package gathered = Package::parse(root.dump(), "softmax.tslpkg");
  EXPECT_EQ(gathered.kernels[0].configs[0].variants.size(), 2u);
  EXPECT_EQ(gathered.kernels[0].configs[1].variants.size(), 3u);
  EXPECT_EQ(gathered.kernels[0].configs[1].variants[0].arch, "sm_90a");
  EXPECT_EQ(gathered.kernels[0].configs[1].variants[0].config, 1);
}

TEST(Package, KernelLookupListsNames) {
  Package package = samplePackage();
  EXPECT_EQ(package.findKernel("nope"), nullptr);
  try {
    package.kernel("nope");
    FAIL();
  } catch (const Error &error) {
    EXPECT_STREQ(error.what(), "softmax.tslpkg: no kernel named 'nope' "
                               "(available: softmax, add)");
  }
}

TEST(Package, ArchSupport) {
  EXPECT_TRUE(archSupported("sm_80", 80));
  EXPECT_TRUE(archSupported("sm_80", 90));
  EXPECT_FALSE(archSupported("sm_90", 80));
  EXPECT_TRUE(archSupported("sm_90a", 90));
  EXPECT_FALSE(archSupported("sm_90a", 100));
  EXPECT_TRUE(archSupported("sm_100f", 103));
  EXPECT_FALSE(archSupported("sm_100f", 120));
  EXPECT_FALSE(archSupported("sm_x0", 90));
  EXPECT_FALSE(archSupported("", 90));
}

static std::string makeTempDir() {
  char pattern[] = "/tmp/tessel-package-test-XXXXXX";
  const char *dir = mkdtemp(pattern);
  EXPECT_NE(dir, nullptr);
  return dir ? dir : "/tmp";
}

static std::vector<std::string> listDir(const std::string &dir) {
  std::vector<std::string> names;
  DIR *handle = opendir(dir.c_str());
  while (dirent *entry = readdir(handle)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..")
      names.push_back(name);
  }
  closedir(handle);
  return names;
}

TEST(Package, SaveIsAtomicAndLoadRoundTrips) {
  std::string dir = makeTempDir();
  std::string path = dir + "/softmax.tslpkg";
  Package package = samplePackage();
  package.save(path);
  // Overwrite with a different package: the file is replaced whole.
  package.kernels.pop_back();
  package.save(path);
  EXPECT_EQ(listDir(dir), std::vector<std::string>{"softmax.tslpkg"});
  Package loaded = Package::load(path);
  EXPECT_EQ(loaded.origin, path);
  EXPECT_EQ(loaded.serialize(), package.serialize());
  EXPECT_EQ(readFile(path), package.serialize());

  // An invalid package is refused before anything is written.
  Package invalid = package;
  invalid.kernels[0].configs[0].variants[0].ptx.clear();
  EXPECT_THROW(invalid.save(path), Error);
  EXPECT_EQ(readFile(path), package.serialize());
  EXPECT_EQ(listDir(dir), std::vector<std::string>{"softmax.tslpkg"});

  unlink(path.c_str());
  rmdir(dir.c_str());
}

TEST(Package, LoadErrorsNameThePath) {
  try {
    Package::load("/nonexistent/dir/k.tslpkg");
    FAIL();
  } catch (const Error &error) {
    EXPECT_NE(std::string(error.what()).find("/nonexistent/dir/k.tslpkg"),
              std::string::npos);
  }
  std::string dir = makeTempDir();
  std::string path = dir + "/broken.tslpkg";
  std::string text = samplePackage().serialize();
  writeFileAtomic(path, text.substr(0, text.size() / 2));
  try {
    Package::load(path);
    FAIL();
  } catch (const Error &error) {
    EXPECT_EQ(std::string(error.what()).find(path + ":"), 0u) << error.what();
  }
  unlink(path.c_str());
  rmdir(dir.c_str());
}

TEST(Package, TruncatedPackagesNeverCrash) {
  std::string text = samplePackage().serialize();
  for (size_t n = 0; n < text.size(); n += 7)
    EXPECT_THROW(Package::parse(text.substr(0, n), "t.tslpkg"), Error);
}

// Random byte edits of a valid package: parse() throws tessel::Error or
// returns a package that validates and round-trips; it never crashes.
TEST(Package, MutatedPackagesNeverCrash) {
  std::string valid = samplePackage().serialize();
  std::mt19937 rng(42);
  const char alphabet[] = "{}[]\",:0123456789-abcdefinprstuvx \n";
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::string text = valid;
    for (int e = 0, edits = 1 + int(rng() % 4); e < edits; ++e) {
      size_t at = rng() % text.size();
      text[at] = alphabet[rng() % (sizeof(alphabet) - 1)];
    }
    try {
      Package package = Package::parse(text, "m.tslpkg");
      EXPECT_NO_THROW(Package::parse(package.serialize(), "m2.tslpkg"));
    } catch (const Error &) {
    }
  }
}

/// The sample softmax kernel's first variant with a tensor map over `out` (rows from
/// n_rows, columns n_cols, row stride `stride`).
static Json withTensorMap(int param, int pointer) {
  Json root = sampleJson();
  Json map = Json::parse(R"({"param": 0, "pointer": 0, "rows": {"param": 3},
      "cols": {"param": 4}, "row_stride": {"param": 2}, "box": [64, 64], "dtype": "bf16"})");
  map.set("param", int64_t(param));
  map.set("pointer", int64_t(pointer));
  Json maps = Json::array();
  maps.push(std::move(map));
  variantJson(root, 0, 0).set("tensor_maps", std::move(maps));
  return root;
}

TEST(Package, TensorMapsRoundTrip) {
  // softmax(out, inp, stride, n_rows, n_cols): the map is parameter 5.
  Package package = Package::parse(withTensorMap(5, 0).pretty(), "t.tslpkg");
  const Variant &variant = package.kernel("softmax").configs[0].variants[0];
  ASSERT_EQ(variant.tensorMaps.size(), 1u);
  const TensorMapSpec &map = variant.tensorMaps[0];
  EXPECT_EQ(map.param, 5);
  EXPECT_EQ(map.rows.param, 3);
  EXPECT_EQ(map.cols.param, 4);
  EXPECT_EQ(map.rowStride.param, 2);
  EXPECT_EQ(map.boxRows, 64);
  EXPECT_EQ(map.dtype, DType::BF16);
  std::string text = package.serialize();
  EXPECT_EQ(Package::parse(text, "t.tslpkg").serialize(), text);
  EXPECT_TRUE(package.kernel("softmax").configs[0].variants[1].tensorMaps.empty());
}

/// withTensorMap(5, 0) with field `name` of its map set to `value`.
static Json withMapField(const std::string &name, Json value) {
  Json root = withTensorMap(5, 0);
  variantJson(root, 0, 0)["tensor_maps"].asArray()[0].set(name, std::move(value));
  return root;
}

/// The first variant's tensor map after parsing `root`.
static TensorMapSpec firstMap(const Json &root) {
  return Package::parse(root.pretty(), "t.tslpkg").kernel("softmax").configs[0].variants[0].tensorMaps[0];
}

TEST(Package, TensorMapsAreChecked) {
  EXPECT_NE(errorOf(withTensorMap(4, 0).pretty()).find(
                "tensor map 0 is parameter 4, expected 5 (after the kernel's params)"),
            std::string::npos)
      << errorOf(withTensorMap(4, 0).pretty());
  // `stride` (param 2) is not a pointer.
  EXPECT_NE(errorOf(withTensorMap(5, 2).pretty()).find("'pointer' is not a pointer param"),
            std::string::npos);
  // f32 maps (tf32 operands) are accepted; integer element types are not.
  EXPECT_EQ(firstMap(withMapField("dtype", Json("f32"))).dtype, DType::F32);
  Json i32 = withMapField("dtype", Json("i32"));
  EXPECT_NE(errorOf(i32.pretty()).find("tensor map dtype 'i32' is not bf16, f16 or f32"),
            std::string::npos)
      << errorOf(i32.pretty());
  // Interleaved rows (tf32 mma.sync's B) survive a round trip; other orders, and boxes
  // that are not groups of 8 rows, are refused.
  Json interleaved = withMapField("row_order", Json("interleave8"));
  Package withOrder = Package::parse(interleaved.pretty(), "t.tslpkg");
  EXPECT_TRUE(withOrder.kernel("softmax").configs[0].variants[0].tensorMaps[0].interleave8);
  EXPECT_TRUE(Package::parse(withOrder.serialize(), "t.tslpkg")
                  .kernel("softmax").configs[0].variants[0].tensorMaps[0].interleave8);
  EXPECT_FALSE(firstMap(withTensorMap(5, 0)).interleave8);
  // Column blocks per box: 1 unless said, kept through a round trip, at most 256.
  EXPECT_EQ(firstMap(withTensorMap(5, 0)).colBlocks, 1);
  Json blocks = withMapField("col_blocks", Json(int64_t(4)));
  Package withBlocks = Package::parse(blocks.pretty(), "t.tslpkg");
  EXPECT_EQ(withBlocks.kernel("softmax").configs[0].variants[0].tensorMaps[0].colBlocks, 4);
  EXPECT_EQ(Package::parse(withBlocks.serialize(), "t.tslpkg")
                .kernel("softmax").configs[0].variants[0].tensorMaps[0].colBlocks, 4);
  Json tooMany = withMapField("col_blocks", Json(int64_t(0)));
  EXPECT_NE(errorOf(tooMany.pretty()).find("col_blocks"), std::string::npos)
      << errorOf(tooMany.pretty());
  // Multicast: 1 unless said, kept through a round trip; it must divide col_blocks.
  EXPECT_EQ(firstMap(withTensorMap(5, 0)).multicast, 1);
  Json shared = withMapField("col_blocks", Json(int64_t(4)));
  variantJson(shared, 0, 0)["tensor_maps"].asArray()[0].set("multicast", Json(int64_t(2)));
  Package withShared = Package::parse(shared.pretty(), "t.tslpkg");
  EXPECT_EQ(withShared.kernel("softmax").configs[0].variants[0].tensorMaps[0].multicast, 2);
  EXPECT_EQ(withShared.kernel("softmax").configs[0].variants[0].clusterSize(), 2);
  EXPECT_EQ(Package::parse(withShared.serialize(), "t.tslpkg")
                .kernel("softmax").configs[0].variants[0].tensorMaps[0].multicast, 2);
  Json uneven = withMapField("multicast", Json(int64_t(2)));
  EXPECT_NE(errorOf(uneven.pretty()).find("multicast 2 must be 1, 2, 4 or 8 and divide col_blocks (1)"),
            std::string::npos)
      << errorOf(uneven.pretty());
  // Batch strides: none unless said, one or two kept through a round trip, each a
  // constant or an integer param.
  EXPECT_TRUE(firstMap(withTensorMap(5, 0)).batchStrides.empty());
  Json batched = withMapField("batch_strides", Json::parse(R"([{"param": 3}, {"value": 4096}])"));
  Package withBatch = Package::parse(batched.pretty(), "t.tslpkg");
  const TensorMapSpec &batchMap = withBatch.kernel("softmax").configs[0].variants[0].tensorMaps[0];
  ASSERT_EQ(batchMap.batchStrides.size(), 2u);
  EXPECT_EQ(batchMap.batchStrides[0].param, 3);
  EXPECT_EQ(batchMap.batchStrides[1].value, 4096);
  EXPECT_EQ(Package::parse(withBatch.serialize(), "t.tslpkg").serialize(), withBatch.serialize());
  Json three = withMapField("batch_strides",
                            Json::parse(R"([{"value": 16}, {"value": 16}, {"value": 16}])"));
  EXPECT_NE(errorOf(three.pretty()).find("'batch_strides' must hold 1 or 2 strides"),
            std::string::npos)
      << errorOf(three.pretty());
  Json pointerStride = withMapField("batch_strides", Json::parse(R"([{"param": 1}])"));
  EXPECT_NE(errorOf(pointerStride.pretty()).find("names param 1, which is not an integer param"),
            std::string::npos)
      << errorOf(pointerStride.pretty());
  Json badOrder = withMapField("row_order", Json("reversed"));
  EXPECT_NE(errorOf(badOrder.pretty()).find("tensor map row_order 'reversed' is not interleave8"),
            std::string::npos)
      << errorOf(badOrder.pretty());
  Json badBox = withMapField("row_order", Json("interleave8"));
  Json box = Json::array();
  box.push(int64_t(12));
  box.push(int64_t(64));
  variantJson(badBox, 0, 0)["tensor_maps"].asArray()[0].set("box", std::move(box));
  EXPECT_NE(errorOf(badBox.pretty()).find("needs a box of a multiple of 8 rows"),
            std::string::npos)
      << errorOf(badBox.pretty());
}
