//===- test/unit/JsonTest.cpp - JSON value, parser and writer -------------===//
#include "package/Json.h"

#include <gtest/gtest.h>

#include <random>

using namespace tessel;

TEST(Json, ScalarsRoundTrip) {
  Json doc = Json::parse(R"({"a": null, "b": true, "c": false, "i": -42,
                           "big": 9223372036854775807, "d": 1.5, "e": 1e300,
                           "s": "x"})");
  EXPECT_TRUE(doc.find("a")->isNull());
  EXPECT_TRUE(doc.find("b")->asBool());
  EXPECT_FALSE(doc.find("c")->asBool());
  EXPECT_EQ(doc.find("i")->asInt(), -42);
  EXPECT_EQ(doc.find("big")->asInt(), INT64_MAX);
  EXPECT_TRUE(doc.find("d")->isDouble());
  EXPECT_EQ(doc.find("d")->asDouble(), 1.5);
  EXPECT_EQ(doc.find("e")->asDouble(), 1e300);
  EXPECT_EQ(doc.find("s")->asString(), "x");
  EXPECT_EQ(Json::parse(doc.dump()), doc);
  EXPECT_EQ(Json::parse(doc.pretty()), doc);
}

TEST(Json, IntegersStayExactDoublesStayDouble) {
  EXPECT_TRUE(Json::parse("12345678901234567").isInt());
  EXPECT_EQ(Json::parse("-9223372036854775808").asInt(), INT64_MIN);
  // Beyond int64: kept approximately as a double.
  EXPECT_TRUE(Json::parse("9223372036854775808").isDouble());
  Json d(2.0);
  EXPECT_EQ(d.dump(), "2.0");
  EXPECT_TRUE(Json::parse(d.dump()).isDouble());
  EXPECT_EQ(Json(0.1).dump(), "0.1");
  EXPECT_EQ(Json(std::nan("")).dump(), "null");
}

TEST(Json, ObjectKeepsInsertionOrder) {
  Json object = Json::object();
  object.set("zeta", 1);
  object.set("alpha", 2);
  object["mid"] = "x";
  object.set("zeta", 3); // replaced in place
  EXPECT_EQ(object.dump(), R"({"zeta":3,"alpha":2,"mid":"x"})");
  Json parsed = Json::parse(R"({"b":1,"a":2})");
  EXPECT_EQ(parsed.asObject()[0].first, "b");
  EXPECT_EQ(parsed.dump(), R"({"b":1,"a":2})");
}

TEST(Json, StringEscaping) {
  std::string raw = "quote\" backslash\\ newline\n tab\t cr\r bell\x07 nul";
  raw += '\0';
  raw += "end \xc3\xa9";
  Json value(raw);
  std::string text = value.dump();
  EXPECT_NE(text.find("\\\""), std::string::npos);
  EXPECT_NE(text.find("\\\\"), std::string::npos);
  EXPECT_NE(text.find("\\n"), std::string::npos);
  EXPECT_NE(text.find("\\t"), std::string::npos);
  EXPECT_NE(text.find("\\u0007"), std::string::npos);
  EXPECT_NE(text.find("\\u0000"), std::string::npos);
  EXPECT_EQ(text.find('\n'), std::string::npos);
  EXPECT_EQ(Json::parse(text).asString(), raw);
}

TEST(Json, UnicodeEscapes) {
  EXPECT_EQ(Json::parse(R"("\u00e9\u4e2d\ud83d\ude00\/")").asString(),
            "\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80/");
  EXPECT_THROW(Json::parse(R"("\ud83d")"), JsonError);
  EXPECT_THROW(Json::parse(R"("\ude00")"), JsonError);
  EXPECT_THROW(Json::parse(R"("\u12")"), JsonError);
}

TEST(Json, PrettyLayout) {
  Json doc = Json::parse(R"({"k": [1, 2], "o": {"x": []}, "e": {}})");
  EXPECT_EQ(doc.pretty(), "{\n  \"k\": [1, 2],\n  \"o\": {\n    \"x\": []\n  "
                          "},\n  \"e\": {}\n}\n");
}

static JsonError parseError(std::string_view text) {
  try {
    Json::parse(text, "test.json");
  } catch (const JsonError &error) {
    return error;
  }
  ADD_FAILURE() << "no error for: " << text;
  return JsonError("", 0, 0);
}

TEST(Json, ErrorsGiveLineAndColumn) {
  JsonError e = parseError("{\n  \"a\": 1,\n  \"b\": tru\n}");
  EXPECT_EQ(e.line(), 3);
  EXPECT_EQ(e.column(), 8);
  EXPECT_NE(std::string(e.what()).find("test.json:3:8:"), std::string::npos)
      << e.what();

  e = parseError("[1, 2,]");
  EXPECT_EQ(e.line(), 1);
  EXPECT_EQ(e.column(), 7);
  EXPECT_NE(std::string(e.what()).find("expected a value"), std::string::npos);

  e = parseError("{\"a\": 1 \"b\": 2}");
  EXPECT_NE(std::string(e.what()).find("expected ',' or '}'"),
            std::string::npos);
  e = parseError("{\"a\": 1, \"a\": 2}");
  EXPECT_NE(std::string(e.what()).find("duplicate key \"a\""),
            std::string::npos);
  e = parseError("\"abc");
  EXPECT_NE(std::string(e.what()).find("unterminated string"),
            std::string::npos);
  e = parseError("01");
  EXPECT_NE(std::string(e.what()).find("leading zeros"), std::string::npos);
  e = parseError("1 2");
  EXPECT_NE(std::string(e.what()).find("after the JSON value"),
            std::string::npos);
  e = parseError("\"a\nb\"");
  EXPECT_NE(std::string(e.what()).find("control character"),
            std::string::npos);
  e = parseError("");
  EXPECT_NE(std::string(e.what()).find("unexpected end of input"),
            std::string::npos);
  EXPECT_EQ(Json::parse("1e-99999").asDouble(), 0.0);
  e = parseError("1e99999");
  EXPECT_NE(std::string(e.what()).find("out of range"), std::string::npos);
}

TEST(Json, DepthLimit) {
  std::string deep(Json::kMaxDepth, '[');
  deep += std::string(Json::kMaxDepth, ']');
  EXPECT_NO_THROW(Json::parse(deep));
  std::string tooDeep(100000, '[');
  JsonError e = parseError(tooDeep);
  EXPECT_NE(std::string(e.what()).find("nesting deeper"), std::string::npos);
}

TEST(Json, KindErrors) {
  Json value = Json::parse("[1]");
  EXPECT_THROW(value.asObject(), Error);
  EXPECT_THROW(value.asString(), Error);
  EXPECT_EQ(value.find("x"), nullptr);
  EXPECT_EQ(Json(3).asDouble(), 3.0);
  EXPECT_THROW(Json(3.5).asInt(), Error);
}

// Truncations and random mutations of a valid document must throw JsonError
// or parse, never crash or hang.
TEST(Json, GarbageNeverCrashes) {
  std::string valid = R"({"format": "tessel-package", "a": [1, -2.5e3, true,
      null, "s\n\u00e9"], "o": {"k": {"k": [[], {}]}}})";
  for (size_t n = 0; n < valid.size(); ++n) {
    try {
      Json::parse(valid.substr(0, n));
    } catch (const JsonError &) {
    }
  }
  std::mt19937 rng(1234);
  const char alphabet[] = "{}[]\",:\\u0123456789.eE+-truefalsn \n\x01\xff";
  for (int iteration = 0; iteration < 20000; ++iteration) {
    std::string text = valid;
    int edits = 1 + int(rng() % 8);
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % (text.size() + 1);
      char c = alphabet[rng() % (sizeof(alphabet) - 1)];
      switch (rng() % 3) {
      case 0:
        text.insert(text.begin() + long(at), c);
        break;
      case 1:
        if (at < text.size())
          text[at] = c;
        break;
      default:
        if (at < text.size())
          text.erase(at, 1);
      }
    }
    try {
      Json value = Json::parse(text);
      // Whatever parses must round-trip.
      EXPECT_EQ(Json::parse(value.dump()), value);
    } catch (const JsonError &) {
    }
  }
}
