// tests/engine/test_integrity.cpp — what protects the files qkv reads: CRC32C against the published
// vectors, the checksum every written safetensors file carries (bit flips, files without one),
// the linear bounded JSON parser, and hostile 100 MB headers refused quickly.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "framework/bounded_json.h"
#include "framework/crc32c.h"
#include "framework/safetensors.h"
#include "tests/test_util.h"

namespace {

using qkv::SafeTensorsFile;

// The message safetensors_parse throws for bytes (the check fails if it throws nothing).
std::string parse_error(const std::vector<uint8_t>& bytes) {
  return qkv::testing::error_of([&] { qkv::safetensors_parse(bytes, "f.safetensors"); });
}

std::vector<uint8_t> with_header(const std::string& header) {
  std::vector<uint8_t> bytes;
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<uint8_t>(static_cast<uint64_t>(header.size()) >> (8 * i)));
  bytes.insert(bytes.end(), header.begin(), header.end());
  return bytes;
}

SafeTensorsFile small_file() {
  SafeTensorsFile file;
  file.metadata["format"] = "test";
  file.metadata["config"] = R"({"d_model":8,"layers":2})";
  std::mt19937 gen(7);
  for (const char* name : {"a.weight", "b.bias", "c"}) {
    std::vector<uint8_t> data(4 * 24);
    for (auto& b : data) b = static_cast<uint8_t>(gen());
    file.tensors[name] = {"F32", {4, 6}, data};
  }
  return file;
}

double seconds_of(const std::function<void()>& work) {
  const auto start = std::chrono::steady_clock::now();
  work();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

TEST_CASE("crc32c: the published check values") {
  CHECK(qkv::crc32c("123456789", 9) == 0xE3069283u);  // the catalogue's check value
  CHECK(qkv::crc32c("", 0) == 0u);
  // RFC 3720 (iSCSI), B.4: 32 bytes of zeros, of ones, ascending and descending
  std::vector<uint8_t> bytes(32, 0);
  CHECK(qkv::crc32c(bytes.data(), 32) == 0x8A9136AAu);
  std::fill(bytes.begin(), bytes.end(), 0xFF);
  CHECK(qkv::crc32c(bytes.data(), 32) == 0x62A8AB43u);
  for (int i = 0; i < 32; ++i) bytes[i] = static_cast<uint8_t>(i);
  CHECK(qkv::crc32c(bytes.data(), 32) == 0x46DD794Eu);
  for (int i = 0; i < 32; ++i) bytes[i] = static_cast<uint8_t>(31 - i);
  CHECK(qkv::crc32c(bytes.data(), 32) == 0x113FDB5Cu);
  // continued in pieces of every split (the 8-byte path and the byte path agree)
  const std::string text = "The quick brown fox jumps over the lazy dog, twice: the quick brown fox";
  const uint32_t whole = qkv::crc32c(text.data(), text.size());
  for (size_t split = 0; split <= text.size(); ++split)
    CHECK(qkv::crc32c(text.data() + split, text.size() - split, qkv::crc32c(text.data(), split)) == whole);
}

TEST_CASE("safetensors checksum: written, verified, removed from the metadata") {
  const SafeTensorsFile file = small_file();
  const std::vector<uint8_t> bytes = qkv::safetensors_serialize(file);
  const std::string header(bytes.begin() + 8, bytes.begin() + 8 + 200);
  CHECK(header.find("\"qkv_crc32c\":\"") != std::string::npos);
  const SafeTensorsFile parsed = qkv::safetensors_parse(bytes, "f");
  CHECK(parsed.checksum_verified);
  CHECK(parsed.metadata == file.metadata);  // the checksum is not handed on
  // the plain format (other tools' files) loads, unverified
  const SafeTensorsFile plain =
      qkv::safetensors_parse(qkv::safetensors_serialize(file, qkv::SafetensorsChecksum::omit), "f");
  CHECK_FALSE(plain.checksum_verified);
  CHECK(plain.metadata == file.metadata);
  // metadata may not claim the key itself
  SafeTensorsFile claims = file;
  claims.metadata["qkv_crc32c"] = "00000000";
  CHECK_THROWS_WITH_AS(qkv::safetensors_serialize(claims), doctest::Contains("is the writer's own"),
                       std::runtime_error);
}

TEST_CASE("safetensors checksum: a changed value anywhere is named corrupted") {
  const std::vector<uint8_t> bytes = qkv::safetensors_serialize(small_file());
  SUBCASE("a tensor byte") {
    std::vector<uint8_t> changed = bytes;
    changed[changed.size() - 5] ^= 0x10;
    CHECK(parse_error(changed).rfind("f.safetensors: corrupted: its content checksum (CRC32C) is ", 0) == 0);
  }
  SUBCASE("a digit of a metadata value") {
    std::string text(bytes.begin(), bytes.end());
    const size_t at = text.find("\"d_model\\\":8");
    REQUIRE(at != std::string::npos);
    std::vector<uint8_t> changed = bytes;
    changed[at + 11] = '9';
    CHECK(parse_error(changed).find("corrupted") != std::string::npos);
  }
  SUBCASE("the checksum itself") {
    std::string text(bytes.begin(), bytes.end());
    const size_t at = text.find("\"qkv_crc32c\":\"") + 14;
    std::vector<uint8_t> changed = bytes;
    changed[at] = changed[at] == '0' ? '1' : '0';
    CHECK(parse_error(changed).find("corrupted") != std::string::npos);
  }
}

// Every single-bit flip of a written file is refused: the checksum covers every value a reader
// uses, and a flip in the structure or the padding breaks the JSON, the offsets or the length.
// The one exception: a flip in the checksum's own key leaves a file without a checksum and with
// an unknown metadata key, which the qkv readers refuse (test_layers.cpp flips a checkpoint).
TEST_CASE("safetensors checksum: 1,000 random bit flips are refused or rename the checksum's key") {
  const SafeTensorsFile original = small_file();
  const std::vector<uint8_t> bytes = qkv::safetensors_serialize(original);
  std::mt19937_64 gen(2026);
  int refused = 0, corrupted = 0, key_renamed = 0;
  std::vector<std::string> accepted;
  for (int trial = 0; trial < 1000; ++trial) {
    std::vector<uint8_t> flipped = bytes;
    const size_t bit = gen() % (flipped.size() * 8);
    flipped[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    try {
      const SafeTensorsFile parsed = qkv::safetensors_parse(flipped, "f");
      SafeTensorsFile without_stray = parsed;
      for (const auto& [key, value] : parsed.metadata)
        if (!original.metadata.count(key) && value.size() == 8) without_stray.metadata.erase(key);
      if (!parsed.checksum_verified && without_stray.metadata == original.metadata &&
          parsed.metadata.size() == original.metadata.size() + 1)
        ++key_renamed;
      else
        accepted.push_back("bit " + std::to_string(bit));
    } catch (const std::runtime_error& e) {
      ++refused;
      corrupted += std::string(e.what()).find("corrupted") != std::string::npos;
    }
  }
  INFO("accepted silently: " << (accepted.empty() ? "" : accepted[0]) << " (" << accepted.size() << ")");
  CHECK(accepted.empty());
  CHECK(refused + key_renamed == 1000);
  CHECK(key_renamed < 50);
  CHECK(corrupted > 500);  // most flips land in tensor data or metadata values
  MESSAGE("bit flips of a " << bytes.size() << "-byte file: " << refused << " of 1000 refused (" << corrupted
                            << " as corrupted), " << key_renamed << " renamed the checksum's key");
}

TEST_CASE("bounded json: the same tree as nlohmann's parse, bounds and duplicate keys named") {
  const std::string text =
      R"({"a":[1,-2,3.5,"x\u00e9\n",true,false,null,{}],"b":{"c":[[]],"d":18446744073709551615},"e":""})";
  CHECK(qkv::parse_bounded_json(text, {}) == nlohmann::json::parse(text));
  const auto error = [](const std::string& t, qkv::JsonLimits limits) -> std::string {
    try {
      qkv::parse_bounded_json(t, limits);
    } catch (const std::runtime_error& e) { return e.what(); }
    return "<no error>";
  };
  CHECK(error(R"({"a":{"b":1}})", {.max_depth = 1}) == "nests deeper than 1 level");
  CHECK(error(R"({"a":{"b":1}})", {.max_depth = 2}) == "<no error>");
  CHECK(error("[1,2,3]", {.max_values = 3}) == "holds more than 3 values");
  CHECK(error("[1,2,3]", {.max_values = 4}) == "<no error>");
  CHECK(error(R"({"a":1,"a":2})", {}) == "has duplicate key 'a'");
  CHECK(error(R"({"x":{"a":1,"a":2}})", {}) == "has duplicate key 'a' inside entry 'x'");
  CHECK(error(R"({"a":1,})", {}).rfind("is not valid JSON: ", 0) == 0);
  CHECK(error("", {}).rfind("is not valid JSON: ", 0) == 0);
  CHECK(error("{} {}", {}).rfind("is not valid JSON: ", 0) == 0);
}

// issue 28: 20,000 empty entries took 4.5-21 s and 60,000 over a minute (the callback parser was
// quadratic). Each 100 MB header below is refused; the work is linear and stops at the bound, so
// the generous 10 s limit only catches a return of the quadratic parse.
TEST_CASE("safetensors: hostile 100 MB headers are refused at once") {
  constexpr size_t kSize = 99'000'000;
  struct Case {
    const char* what;
    std::string header;
    const char* error;
  };
  std::vector<Case> cases;
  {
    std::string h = "{";
    for (size_t i = 0; h.size() < kSize; ++i) h += "\"t" + std::to_string(i) + "\":{},";
    h.back() = '}';
    cases.push_back({"empty tensor entries", std::move(h), "header holds more than 250000 values"});
  }
  {
    std::string h = "{\"__metadata__\":{";
    for (size_t i = 0; h.size() < kSize; ++i) h += "\"k" + std::to_string(i) + "\":\"{}\",";
    h.back() = '}';
    cases.push_back({"metadata keys", h + "}", "header holds more than 250000 values"});
  }
  {
    std::string h = "{\"t\":{\"dtype\":\"F32\",\"shape\":[";
    while (h.size() < kSize) h += "1,";
    cases.push_back(
        {"a shape of millions of dims", h + "1],\"data_offsets\":[0,4]}}", "header holds more than 250000 values"});
  }
  {
    std::string h = "{\"t\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4],\"x\":[";
    while (h.size() < kSize) h += "{},";
    cases.push_back({"an extra field of {}", h + "{}]}}", "header holds more than 250000 values"});
  }
  cases.push_back({"deep nesting", "{\"a\":" + std::string(kSize, '['), "header nests deeper than 64 levels"});
  for (const Case& c : cases) {
    CAPTURE(c.what);
    const std::vector<uint8_t> bytes = with_header(c.header);
    std::string error;
    const double seconds = seconds_of([&] { error = parse_error(bytes); });
    CHECK(error == std::string("f.safetensors: ") + c.error);
    CHECK(seconds < 10);
    MESSAGE(std::string(c.what) << ": " << bytes.size() / 1000000 << " MB refused in " << seconds << " s");
  }
}
