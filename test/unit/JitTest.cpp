//===- JitTest.cpp - in-process compilation and its disk cache -----------===//
#include "package/Error.h"
#include "package/FileUtil.h"
#include "compiler/Jit.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <sys/wait.h>
#include <unistd.h>

using namespace tessel;

namespace {

const char *kVectorAdd = R"(@kernel
def vector_add(out: *T, a: *T, b: *T, n: i32, T: constexpr = f32, BLOCK: constexpr = 256):
    offsets = program_id(0) * BLOCK + arange(0, BLOCK)
    mask = offsets < n
    store(out + offsets, load(a + offsets, mask=mask) + load(b + offsets, mask=mask), mask=mask)
)";

class JitTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = std::filesystem::temp_directory_path() /
          ("tessel-jit-test-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir);
    options.cacheDir = dir.string();
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::filesystem::path dir;
  JitOptions options;
};

TEST_F(JitTest, CompilesOnceThenReadsTheCache) {
  JitStats before = jitStats();
  Package first = jitSource(kVectorAdd, "vector_add.tsl", options);
  ASSERT_NE(first.findKernel("vector_add"), nullptr);
  EXPECT_EQ(first.kernel("vector_add").configs[0].variants.size(), 2u); // generic + divisible by 16
  EXPECT_EQ(jitStats().compiles, before.compiles + 1);
  EXPECT_TRUE(std::filesystem::exists(jitCachePath(kVectorAdd, options)));

  Package second = jitSource(kVectorAdd, "vector_add.tsl", options);
  EXPECT_EQ(jitStats().compiles, before.compiles + 1) << "the second call compiled again";
  EXPECT_EQ(jitStats().cacheHits, before.cacheHits + 1);
  EXPECT_EQ(first.serialize(), second.serialize());
}

TEST_F(JitTest, ConstexprsAndArchAreInTheKey) {
  JitOptions bf16 = options;
  bf16.defines = {{"T", "bf16"}};
  JitOptions sm80 = options;
  sm80.arch = "sm_80";
  EXPECT_NE(jitCachePath(kVectorAdd, options), jitCachePath(kVectorAdd, bf16));
  EXPECT_NE(jitCachePath(kVectorAdd, options), jitCachePath(kVectorAdd, sm80));
  Package package = jitSource(kVectorAdd, "vector_add.tsl", bf16);
  EXPECT_EQ(package.kernel("vector_add").params[0].dtype, DType::BF16);
  EXPECT_EQ(package.kernel("vector_add").configs[0].variants[0].arch, "sm_90");
}

TEST_F(JitTest, AnUnreadableCacheEntryIsRebuilt) {
  std::string path = jitCachePath(kVectorAdd, options);
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  writeFileAtomic(path, "{ truncated");
  JitStats before = jitStats();
  Package package = jitSource(kVectorAdd, "vector_add.tsl", options);
  EXPECT_EQ(jitStats().compiles, before.compiles + 1);
  EXPECT_NO_THROW(Package::load(path));
}

TEST_F(JitTest, ABadSourceThrowsAndLeavesNoEntry) {
  std::string bad = "@kernel\ndef k(x: *f32):\n    y = undefined_name + 1\n";
  try {
    jitSource(bad, "bad.tsl", options);
    ADD_FAILURE() << "no error";
  } catch (const Error &e) {
    // The diagnostics travel in the error, with the file name, line and caret.
    EXPECT_NE(std::string(e.what()).find("bad.tsl:3:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("undefined_name"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(jitCachePath(bad, options)));
}

TEST_F(JitTest, ASecondProcessCompilesNothing) {
  jitSource(kVectorAdd, "vector_add.tsl", options);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    JitStats before = jitStats();
    jitSource(kVectorAdd, "vector_add.tsl", options);
    _exit(jitStats().compiles == before.compiles ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the second process compiled the kernel again";
}

} // namespace
