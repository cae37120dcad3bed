// tests/engine/test_safetensors.cpp — safetensors round trips, exact bytes, atomic writes, and every
// reader validation error. Raw bytes only; the Tensor class is not involved.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "framework/safetensors.h"

namespace {

using qkv::SafeTensor;
using qkv::SafeTensorsFile;

template <typename T>
std::vector<uint8_t> to_bytes(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  if (!bytes.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// A file image with the given header text (length prefix = its size) and data buffer.
std::vector<uint8_t> make_file(const std::string& header, const std::vector<uint8_t>& data = {}) {
  std::vector<uint8_t> bytes;
  const uint64_t size = header.size();
  for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<uint8_t>(size >> (8 * i)));
  bytes.insert(bytes.end(), header.begin(), header.end());
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

// The message safetensors_parse throws for bytes, or "<no error>".
std::string parse_error(const std::vector<uint8_t>& bytes) {
  try {
    qkv::safetensors_parse(bytes, "ckpt.safetensors");
  } catch (const std::runtime_error& e) { return e.what(); }
  return "<no error>";
}

std::string serialize_error(const SafeTensorsFile& file) {
  try {
    qkv::safetensors_serialize(file);
  } catch (const std::runtime_error& e) { return e.what(); }
  return "<no error>";
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A fresh empty directory under the system temp dir, removed on destruction.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "qkv_safetensors_XXXXXX").string();
    REQUIRE(mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(path)) names.push_back(entry.path().filename());
    return names;
  }
};

std::vector<uint8_t> read_all(const std::filesystem::path& path) {
  std::ifstream stream(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(stream), std::istreambuf_iterator<char>()};
}

SafeTensorsFile sample_file() {
  SafeTensorsFile file;
  file.metadata["format"] = "qkv";
  file.metadata["step"] = "1200";
  file.tensors["attn.W_q"] = {"F32", {2, 3}, to_bytes<float>({1.5f, -2.f, 3.25f, 0.f, 1e-3f, -7.f})};
  file.tensors["double"] = {"F64", {3}, to_bytes<double>({3.141592653589793, -1e300, 5e-324})};
  file.tensors["tokens"] = {"I64", {2, 2}, to_bytes<int64_t>({0, -1, INT64_MAX, INT64_MIN})};
  file.tensors["scalar"] = {"F32", {}, to_bytes<float>({42.f})};
  file.tensors["empty"] = {"F32", {0, 5}, {}};
  file.tensors["flag"] = {"U8", {1}, {7}};  // odd size, so later tensors are unaligned
  return file;
}

void check_same(const SafeTensorsFile& got, const SafeTensorsFile& want) {
  CHECK(got.metadata == want.metadata);
  REQUIRE(got.tensors.size() == want.tensors.size());
  for (const auto& [name, tensor] : want.tensors) {
    INFO("tensor " << name);
    REQUIRE(got.tensors.count(name) == 1);
    const SafeTensor& other = got.tensors.at(name);
    CHECK(other.dtype == tensor.dtype);
    CHECK(other.shape == tensor.shape);
    CHECK(other.data == tensor.data);
  }
}

}  // namespace

TEST_CASE("safetensors: dtype sizes") {
  CHECK(qkv::safetensors_dtype_size("F32") == 4);
  CHECK(qkv::safetensors_dtype_size("F64") == 8);
  CHECK(qkv::safetensors_dtype_size("I64") == 8);
  CHECK(qkv::safetensors_dtype_size("BF16") == 2);
  CHECK(qkv::safetensors_dtype_size("F16") == 2);
  CHECK(qkv::safetensors_dtype_size("I32") == 4);
  CHECK(qkv::safetensors_dtype_size("BOOL") == 1);
  CHECK(qkv::safetensors_dtype_size("U8") == 1);
  CHECK_THROWS_WITH_AS(qkv::safetensors_dtype_size("f32"), doctest::Contains("unknown safetensors dtype 'f32'"),
                       std::runtime_error);
  CHECK_THROWS_AS(qkv::safetensors_dtype_size(""), std::runtime_error);
}

TEST_CASE("safetensors: serialize/parse round trip of F32, F64, I64, scalar and empty tensors") {
  const SafeTensorsFile original = sample_file();
  const std::vector<uint8_t> bytes = qkv::safetensors_serialize(original);
  check_same(qkv::safetensors_parse(bytes, "mem"), original);
  CHECK(qkv::safetensors_serialize(original) == bytes);  // deterministic
}

TEST_CASE("safetensors: file round trip through write and read") {
  TempDir dir;
  const std::string path = (dir.path / "model.safetensors").string();
  const SafeTensorsFile original = sample_file();
  qkv::safetensors_write(path, original);
  check_same(qkv::safetensors_read(path), original);
  CHECK(read_all(path) == qkv::safetensors_serialize(original));
}

TEST_CASE("safetensors: an empty file round trips") {
  const SafeTensorsFile empty;
  const std::vector<uint8_t> bytes = qkv::safetensors_serialize(empty, qkv::SafetensorsChecksum::omit);
  const std::vector<uint8_t> expected = {8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ', ' ', ' '};
  CHECK(bytes == expected);
  const SafeTensorsFile parsed = qkv::safetensors_parse(bytes, "mem");
  CHECK(parsed.tensors.empty());
  CHECK(parsed.metadata.empty());
}

TEST_CASE("safetensors: byte-exact encoding of a tiny file") {
  SafeTensorsFile file;
  file.tensors["a"] = {"F32", {2}, to_bytes<float>({1.f, 2.f})};
  // 54 bytes of JSON + 2 spaces of padding = 56 = 0x38, so the data starts at offset 64.
  const std::string header = "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}  ";
  std::vector<uint8_t> expected = {0x38, 0, 0, 0, 0, 0, 0, 0};
  expected.insert(expected.end(), header.begin(), header.end());
  const std::vector<uint8_t> data = {0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40};  // 1.0f, 2.0f LE
  expected.insert(expected.end(), data.begin(), data.end());
  CHECK(qkv::safetensors_serialize(file, qkv::SafetensorsChecksum::omit) == expected);
}

TEST_CASE("safetensors: byte-exact metadata, sorted tensors and contiguous offsets") {
  SafeTensorsFile file;
  file.metadata["format"] = "pt";
  file.tensors["b"] = {"I64", {1}, to_bytes<int64_t>({1})};
  file.tensors["a"] = {"U8", {3}, {9, 8, 7}};
  const std::string header =
      "{\"__metadata__\":{\"format\":\"pt\"},"
      "\"a\":{\"dtype\":\"U8\",\"shape\":[3],\"data_offsets\":[0,3]},"
      "\"b\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[3,11]}}"
      "      ";  // 32 + 52 + 54 = 138 bytes of JSON, padded to 144
  std::vector<uint8_t> expected = {144, 0, 0, 0, 0, 0, 0, 0};
  expected.insert(expected.end(), header.begin(), header.end());
  for (uint8_t b : {9, 8, 7, 1, 0, 0, 0, 0, 0, 0, 0}) expected.push_back(b);
  CHECK(qkv::safetensors_serialize(file, qkv::SafetensorsChecksum::omit) == expected);
}

TEST_CASE("safetensors: the data buffer starts 8-byte aligned whatever the names") {
  for (const std::string name : {"x", "xy", "xyz", "layer.0.weight", "a_rather_longer_name_with_17"}) {
    SafeTensorsFile file;
    file.tensors[name] = {"F32", {1}, to_bytes<float>({1.f})};
    const std::vector<uint8_t> bytes = qkv::safetensors_serialize(file);
    uint64_t header_size = 0;
    std::memcpy(&header_size, bytes.data(), 8);
    INFO("name " << name);
    CHECK((8 + header_size) % 8 == 0);
    CHECK(bytes.size() == 8 + header_size + 4);
    CHECK(bytes[8 + header_size - 1] != 0);  // padding is spaces or '}', never NUL
  }
}

TEST_CASE("safetensors: JSON escaping and UTF-8 names survive a round trip") {
  SafeTensorsFile file;
  file.metadata["note"] = "quote \" backslash \\ newline \n tab \t";
  file.tensors["caf\xc3\xa9.\xe2\x88\x91"] = {"F32", {1}, to_bytes<float>({2.f})};
  const SafeTensorsFile parsed = qkv::safetensors_parse(qkv::safetensors_serialize(file), "mem");
  check_same(parsed, file);
}

TEST_CASE("safetensors: the reader accepts spaces padding and extra fields like the reference") {
  const std::vector<uint8_t> data = to_bytes<float>({5.f});
  const SafeTensorsFile parsed = qkv::safetensors_parse(
      make_file("{\"t\":{\"dtype\":\"F32\",\"shape\":[],\"data_offsets\":[0,4]}}      ", data), "mem");
  REQUIRE(parsed.tensors.count("t") == 1);
  CHECK(parsed.tensors.at("t").shape.empty());
  CHECK(parsed.tensors.at("t").data == data);
}

TEST_CASE("safetensors: atomic write leaves no temp file and replaces an existing file") {
  TempDir dir;
  const std::filesystem::path path = dir.path / "ckpt.safetensors";
  qkv::safetensors_write(path.string(), sample_file());
  SafeTensorsFile second;
  second.tensors["only"] = {"I64", {1}, to_bytes<int64_t>({3})};
  qkv::safetensors_write(path.string(), second);
  CHECK(dir.entries() == std::vector<std::string>{"ckpt.safetensors"});
  check_same(qkv::safetensors_read(path.string()), second);
}

TEST_CASE("safetensors: a failed write leaves the existing file untouched and no temp file") {
  TempDir dir;
  const std::filesystem::path path = dir.path / "ckpt.safetensors";
  qkv::safetensors_write(path.string(), sample_file());
  const std::vector<uint8_t> before = read_all(path);

  SUBCASE("invalid tensor data") {
    SafeTensorsFile bad;
    bad.tensors["w"] = {"F32", {2}, {1, 2, 3}};
    const std::string expected = path.string() + ": tensor 'w': shape [2] x F32 needs 8 bytes but data holds 3";
    CHECK_THROWS_WITH_AS(qkv::safetensors_write(path.string(), bad), doctest::Contains(expected.c_str()),
                         std::runtime_error);
  }
  SUBCASE("a directory at the target is refused before anything is written") {
    const std::filesystem::path blocker = dir.path / "blocked.safetensors";
    std::filesystem::create_directory(blocker);
    std::ofstream(blocker / "keep") << "x";
    CHECK_THROWS_WITH_AS(qkv::safetensors_write(blocker.string(), sample_file()),
                         doctest::Contains("blocked.safetensors: a directory, not a regular file"), std::runtime_error);
    CHECK(std::filesystem::is_directory(blocker));
    std::filesystem::remove_all(blocker);
  }
  CHECK(read_all(path) == before);
  CHECK(dir.entries() == std::vector<std::string>{"ckpt.safetensors"});
}

TEST_CASE("safetensors: writing into a missing directory throws and creates nothing") {
  TempDir dir;
  const std::filesystem::path path = dir.path / "no_such_dir" / "ckpt.safetensors";
  CHECK_THROWS_WITH_AS(qkv::safetensors_write(path.string(), sample_file()),
                       doctest::Contains("cannot create temp file"), std::runtime_error);
  CHECK(dir.entries().empty());
}

TEST_CASE("safetensors: the temp file is named <path>.tmp.<pid> in the same directory") {
  // Occupy the temp name with a directory so fopen fails; the message must name that path.
  TempDir dir;
  const std::filesystem::path path = dir.path / "ckpt.safetensors";
  const std::string temp_name = path.string() + ".tmp." + std::to_string(getpid());
  std::filesystem::create_directory(temp_name);
  CHECK_THROWS_WITH_AS(qkv::safetensors_write(path.string(), sample_file()), doctest::Contains(temp_name.c_str()),
                       std::runtime_error);
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("safetensors: reading a missing file names the path") {
  CHECK_THROWS_WITH_AS(qkv::safetensors_read("/nonexistent/qkv/x.safetensors"),
                       doctest::Contains("/nonexistent/qkv/x.safetensors: cannot open"), std::runtime_error);
}

TEST_CASE("safetensors: read errors start with the file path") {
  TempDir dir;
  const std::filesystem::path path = dir.path / "short.safetensors";
  std::ofstream(path, std::ios::binary) << "abc";
  const std::string expected = path.string() + ": file is 3 bytes, shorter than the 8-byte";
  CHECK_THROWS_WITH_AS(qkv::safetensors_read(path.string()), doctest::Contains(expected.c_str()), std::runtime_error);
}

TEST_CASE("safetensors: reader rejects malformed length prefix and header") {
  const std::vector<uint8_t> one_float = to_bytes<float>({1.f});
  SUBCASE("shorter than 8 bytes") {
    CHECK(contains(parse_error({1, 0, 0}), "ckpt.safetensors: file is 3 bytes, shorter than the 8-byte"));
    CHECK(contains(parse_error({}), "shorter than the 8-byte"));
  }
  SUBCASE("header too large") {
    std::vector<uint8_t> bytes = make_file("{}");
    const uint64_t huge = 100'000'001;
    std::memcpy(bytes.data(), &huge, 8);
    CHECK(contains(parse_error(bytes), "header too large: 100000001 bytes"));
    const uint64_t max = UINT64_MAX;
    std::memcpy(bytes.data(), &max, 8);
    CHECK(contains(parse_error(bytes), "header too large"));
    CHECK(contains(parse_error(bytes),
                   "not a safetensors file: its first 8 bytes give a header length of "
                   "18446744073709551615 bytes"));
  }
  SUBCASE("a PNG read as a checkpoint is named as one") {
    const std::vector<uint8_t> png = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};
    CHECK(contains(parse_error(png),
                   "ckpt.safetensors: not a safetensors file (it is a PNG image): its first 8 bytes give "
                   "a header length of 727905341920923785 bytes"));
  }
  SUBCASE("header at the size limit is not rejected as too large") {
    std::vector<uint8_t> bytes = make_file("{}");
    const uint64_t limit = 100'000'000;
    std::memcpy(bytes.data(), &limit, 8);
    const std::string message = parse_error(bytes);
    CHECK_FALSE(contains(message, "too large"));
    CHECK(contains(message, "header length 100000000 is larger than the 2 bytes"));
  }
  SUBCASE("header longer than the file") {
    std::vector<uint8_t> bytes = make_file("{}");
    bytes[0] = 3;
    CHECK(contains(parse_error(bytes), "ckpt.safetensors: header length 3 is larger than the 2 bytes"));
  }
  SUBCASE("invalid UTF-8") {
    CHECK(contains(parse_error(make_file("{\"\xff\":1}")), "header is not valid UTF-8"));
    CHECK(contains(parse_error(make_file("{\"\xc0\xaf\":1}")), "not valid UTF-8"));      // overlong '/'
    CHECK(contains(parse_error(make_file("{\"\xed\xa0\x80\":1}")), "not valid UTF-8"));  // surrogate
    CHECK(contains(parse_error(make_file("{\"\xe2\x88\":1}")), "not valid UTF-8"));      // truncated sequence
  }
  SUBCASE("invalid JSON") {
    CHECK(contains(parse_error(make_file("{\"t\":")), "header is not valid JSON"));
    CHECK(contains(parse_error(make_file("{} x")), "header is not valid JSON"));
    CHECK(contains(parse_error(make_file("{\"a\":1,}")), "header is not valid JSON"));
  }
  SUBCASE("not an object") {
    CHECK(contains(parse_error(make_file("[1,2]")), "header is not a JSON object"));
    CHECK(contains(parse_error(make_file("\"str\"")), "header is not a JSON object"));
    CHECK(contains(parse_error(make_file("")), "header is not a JSON object"));
    CHECK(contains(parse_error(make_file(" {}")), "header is not a JSON object"));
  }
}

TEST_CASE("safetensors: reader rejects duplicate keys at any level") {
  const std::vector<uint8_t> one_float = to_bytes<float>({1.f});
  const std::string entry = "{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}";
  CHECK(contains(parse_error(make_file("{\"w\":" + entry + ",\"w\":" + entry + "}", one_float)),
                 "ckpt.safetensors: header has duplicate key 'w'"));
  CHECK(contains(parse_error(make_file(
                     "{\"w\":{\"dtype\":\"F32\",\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", one_float)),
                 "header has duplicate key 'dtype' inside entry 'w'"));
  CHECK(contains(parse_error(make_file("{\"__metadata__\":{\"k\":\"1\",\"k\":\"2\"}}")),
                 "duplicate key 'k' inside entry '__metadata__'"));
  CHECK(contains(parse_error(make_file("{\"__metadata__\":{},\"__metadata__\":{}}")), "duplicate key '__metadata__'"));
  // The same key in sibling objects is fine.
  CHECK(parse_error(make_file("{\"a\":" + entry + ",\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}",
                              to_bytes<float>({1.f, 2.f}))) == "<no error>");
}

TEST_CASE("safetensors: reader rejects bad tensor entries") {
  const std::vector<uint8_t> one_float = to_bytes<float>({1.f});
  auto with_entry = [&](const std::string& entry) {
    return parse_error(make_file("{\"w\":" + entry + "}", one_float));
  };
  SUBCASE("entry not an object") { CHECK(contains(with_entry("[1]"), "tensor 'w': entry must be an object")); }
  SUBCASE("unknown dtype") {
    CHECK(contains(with_entry("{\"dtype\":\"F31\",\"shape\":[1],\"data_offsets\":[0,4]}"),
                   "ckpt.safetensors: tensor 'w': unknown dtype 'F31'"));
  }
  SUBCASE("missing fields") {
    CHECK(contains(with_entry("{\"shape\":[1],\"data_offsets\":[0,4]}"), "tensor 'w': missing field 'dtype'"));
    CHECK(contains(with_entry("{\"dtype\":\"F32\",\"data_offsets\":[0,4]}"), "tensor 'w': missing field 'shape'"));
    CHECK(contains(with_entry("{\"dtype\":\"F32\",\"shape\":[1]}"), "tensor 'w': missing field 'data_offsets'"));
  }
  SUBCASE("ill-typed fields") {
    CHECK(contains(with_entry("{\"dtype\":4,\"shape\":[1],\"data_offsets\":[0,4]}"), "field 'dtype' must be a string"));
    CHECK(contains(with_entry("{\"dtype\":\"F32\",\"shape\":1,\"data_offsets\":[0,4]}"),
                   "field 'shape' must be an array"));
    CHECK(contains(with_entry("{\"dtype\":\"F32\",\"shape\":[\"1\"],\"data_offsets\":[0,4]}"),
                   "shape entry \"1\" is not a non-negative 64-bit integer"));
    CHECK(contains(with_entry("{\"dtype\":\"F32\",\"shape\":[1.0],\"data_offsets\":[0,4]}"),
                   "is not a non-negative 64-bit integer"));
    CHECK(contains(with_entry("{\"dtype\":\"F32\",\"shape\":[9223372036854775808],\"data_offsets\":[0,4]}"),
                   "is not a non-negative 64-bit integer"));
    CHECK(contains(with_entry("{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":{\"a\":0}}"),
                   "field 'data_offsets' must be [begin, end]"));
  }
  SUBCASE("negative shape dimension") {
    CHECK(contains(with_entry("{\"dtype\":\"F32\",\"shape\":[-1],\"data_offsets\":[0,4]}"),
                   "tensor 'w': negative dimension -1 in shape"));
  }
  SUBCASE("data_offsets not [begin, end]") {
    CHECK(contains(with_entry("{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0]}"),
                   "field 'data_offsets' must be [begin, end]"));
    CHECK(contains(with_entry("{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4,8]}"),
                   "field 'data_offsets' must be [begin, end]"));
    CHECK(contains(with_entry("{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[-4,0]}"),
                   "data_offsets must be non-negative integers"));
    CHECK(contains(with_entry("{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,\"4\"]}"),
                   "data_offsets must be non-negative integers"));
    CHECK(contains(with_entry("{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,0]}"),
                   "tensor 'w': data_offsets [4, 0] have begin > end"));
  }
  SUBCASE("shape x dtype size disagrees with the offsets") {
    std::vector<uint8_t> data(64, 0);
    CHECK(parse_error(make_file("{\"attn.W_q\":{\"dtype\":\"F32\",\"shape\":[4,8],\"data_offsets\":[0,64]}}", data)) ==
          "ckpt.safetensors: tensor 'attn.W_q': shape [4, 8] x F32 needs 128 bytes but data_offsets span 64");
  }
  SUBCASE("byte count overflows") {
    CHECK(contains(with_entry("{\"dtype\":\"F64\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,4]}"),
                   "tensor 'w': shape [4294967296, 4294967296] x F64 overflows the byte count"));
    // numel fits in 64 bits, numel * 8 does not.
    CHECK(contains(with_entry("{\"dtype\":\"F64\",\"shape\":[2305843009213693952],\"data_offsets\":[0,4]}"),
                   "overflows the byte count"));
  }
}

TEST_CASE("safetensors: reader rejects offsets that do not tile the data buffer") {
  const std::vector<uint8_t> eight = to_bytes<float>({1.f, 2.f});
  auto two = [](const std::string& a_offsets, const std::string& b_offsets) {
    return "{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":" + a_offsets +
           "},\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":" + b_offsets + "}}";
  };
  SUBCASE("valid in either listing order") {
    CHECK(parse_error(make_file(two("[0,4]", "[4,8]"), eight)) == "<no error>");
    const SafeTensorsFile swapped = qkv::safetensors_parse(make_file(two("[4,8]", "[0,4]"), eight), "mem");
    CHECK(swapped.tensors.at("a").data == to_bytes<float>({2.f}));
    CHECK(swapped.tensors.at("b").data == to_bytes<float>({1.f}));
  }
  SUBCASE("first tensor does not start at 0") {
    std::vector<uint8_t> twelve(12, 0);
    CHECK(contains(parse_error(make_file(two("[4,8]", "[8,12]"), twelve)),
                   "tensor 'a': data_offsets [4, 8] are not contiguous: gap of 4 bytes after the data starts"));
  }
  SUBCASE("gap between tensors") {
    std::vector<uint8_t> twelve(12, 0);
    CHECK(contains(parse_error(make_file(two("[0,4]", "[8,12]"), twelve)),
                   "tensor 'b': data_offsets [8, 12] are not contiguous: gap of 4 bytes after tensor 'a' ends at 4"));
  }
  SUBCASE("overlapping tensors") {
    CHECK(contains(parse_error(make_file(two("[0,4]", "[0,4]"), eight)),
                   "data_offsets [0, 4] overlap tensor 'a', which ends at 4"));
    CHECK(contains(parse_error(make_file(two("[0,4]", "[2,6]"), eight)), "overlap tensor 'a'"));
  }
  SUBCASE("empty tensors may share an offset") {
    const std::string header =
        "{\"e1\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[4,4]},"
        "\"e2\":{\"dtype\":\"I64\",\"shape\":[2,0],\"data_offsets\":[4,4]},"
        "\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},"
        "\"b\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[4,8]}}";
    CHECK(parse_error(make_file(header, eight)) == "<no error>");
  }
  SUBCASE("trailing bytes after the last tensor") {
    std::vector<uint8_t> ten(10, 0);
    CHECK(contains(parse_error(make_file(two("[0,4]", "[4,8]"), ten)),
                   "ckpt.safetensors: 2 trailing bytes after the last tensor's data"));
    CHECK(contains(parse_error(make_file("{}", {1})), "1 trailing bytes"));
  }
  SUBCASE("truncated data") {
    const std::vector<uint8_t> six(6, 0);
    CHECK(contains(parse_error(make_file(two("[0,4]", "[4,8]"), six)),
                   "ckpt.safetensors: file is truncated: tensors need 8 bytes of data but only 6 are present"));
  }
}

TEST_CASE("safetensors: reader validates __metadata__") {
  CHECK(contains(parse_error(make_file("{\"__metadata__\":{\"epoch\":3}}")),
                 "__metadata__ value for key 'epoch' is not a string: 3"));
  CHECK(contains(parse_error(make_file("{\"__metadata__\":{\"x\":{\"y\":\"z\"}}}")),
                 "__metadata__ value for key 'x' is not a string"));
  CHECK(contains(parse_error(make_file("{\"__metadata__\":[\"a\"]}")), "__metadata__ must be an object"));
  const SafeTensorsFile parsed = qkv::safetensors_parse(make_file("{\"__metadata__\":{\"k\":\"v\"}}"), "mem");
  CHECK(parsed.metadata == std::map<std::string, std::string>{{"k", "v"}});
}

TEST_CASE("safetensors: writer rejects inconsistent tensors") {
  SafeTensorsFile file;
  SUBCASE("data size mismatch") {
    file.tensors["w"] = {"F64", {2, 2}, std::vector<uint8_t>(16)};
    CHECK(contains(serialize_error(file), "tensor 'w': shape [2, 2] x F64 needs 32 bytes but data holds 16"));
  }
  SUBCASE("unknown dtype") {
    file.tensors["w"] = {"float32", {1}, std::vector<uint8_t>(4)};
    CHECK(contains(serialize_error(file), "tensor 'w': unknown dtype 'float32'"));
  }
  SUBCASE("negative dimension") {
    file.tensors["w"] = {"F32", {-2}, {}};
    CHECK(contains(serialize_error(file), "tensor 'w': negative dimension -2"));
  }
  SUBCASE("overflow") {
    file.tensors["w"] = {"F32", {INT64_MAX, INT64_MAX}, {}};
    CHECK(contains(serialize_error(file), "overflows the byte count"));
  }
  SUBCASE("reserved name") {
    file.tensors["__metadata__"] = {"F32", {}, std::vector<uint8_t>(4)};
    CHECK(contains(serialize_error(file), "may not be named '__metadata__'"));
  }
  SUBCASE("name not UTF-8") {
    file.tensors["bad\xff"] = {"F32", {}, std::vector<uint8_t>(4)};
    CHECK(contains(serialize_error(file), "tensor name is not valid UTF-8"));
  }
}
