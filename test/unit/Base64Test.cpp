//===- test/unit/Base64Test.cpp - The package's binary encoding ----------===//
#include "package/Base64.h"

#include <gtest/gtest.h>

#include <random>

using namespace tessel;

TEST(Base64, KnownVectors) {
  // RFC 4648, section 10.
  const std::pair<const char *, const char *> vectors[] = {
      {"", ""},         {"f", "Zg=="},         {"fo", "Zm8="},        {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="}, {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}};
  for (auto [plain, encoded] : vectors) {
    EXPECT_EQ(encodeBase64(plain), encoded);
    EXPECT_EQ(decodeBase64(encoded), std::string(plain));
  }
}

TEST(Base64, RandomBytesRoundTrip) {
  std::mt19937 rng(7);
  for (size_t size = 0; size < 300; ++size) {
    std::string bytes(size, '\0');
    for (char &c : bytes)
      c = char(rng() & 0xff);
    std::string text = encodeBase64(bytes);
    EXPECT_EQ(text.size(), (size + 2) / 3 * 4);
    EXPECT_EQ(decodeBase64(text), bytes) << size;
  }
}

TEST(Base64, RejectsWhatIsNotBase64) {
  for (const char *bad : {"Zg=", "Zg", "Z===", "=Zg=", "Zg==Zg==", "Zm9v!A==", "Zm=v",
                          "Zg=A", "Zm9v\n"})
    EXPECT_EQ(decodeBase64(bad), std::nullopt) << bad;
}
