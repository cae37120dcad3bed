// tests/program/test_nonfinite.cpp — NaN is never silent (softmax, log_softmax, max, cross-entropy and the
// fused attention return NaN as PyTorch does; a checkpoint with NaN weights is refused) and untrusted
// checkpoint files are bounded (nesting depth, NUL bytes, non-regular files, a config that claims
// more than the file holds). Each case failed before the change that made it pass.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>

#include "framework/checkpoint.h"
#include "framework/ops.h"
#include "framework/random.h"
#include "framework/safetensors.h"
#include "models/translator.h"
#include "models/translator_io.h"
#include "tests/test_config.h"
#include "tests/test_util.h"

using namespace qkv;
using qkv::testing::error_of;

namespace {

const double kNan = std::numeric_limits<double>::quiet_NaN();

bool all_nan(const Tensor& t) {
  for (double v : t.to_vector())
    if (!std::isnan(v)) return false;
  return t.numel() > 0;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / fmt::format("qkv_nonfinite_{}_{}", ::getpid(), name)).string();
}

// A safetensors file whose header is `header` (padded with spaces) and whose data is `data_bytes` zeros.
std::vector<uint8_t> with_header(std::string header, size_t data_bytes = 0) {
  while (header.size() % 8) header += ' ';
  std::vector<uint8_t> bytes(8 + header.size() + data_bytes, 0);
  for (int i = 0; i < 8; ++i) bytes[i] = static_cast<uint8_t>(static_cast<uint64_t>(header.size()) >> (8 * i));
  std::copy(header.begin(), header.end(), bytes.begin() + 8);
  return bytes;
}

}  // namespace

TEST_SUITE("nonfinite") {
TEST_CASE("NaN propagates through softmax, log_softmax, max and cross-entropy, as in PyTorch") {
  for (DType dt : {DType::F32, DType::F64}) {
    CAPTURE(dtype_name(dt));
    // row 0 all NaN (it used to look fully masked and give zeros), row 1 one NaN, row 2 finite
    const Tensor x = Tensor::from_vector({kNan, kNan, kNan, 1.0, kNan, 2.0, 1.0, 2.0, 3.0}, {3, 3}, dt);
    for (const Tensor& y : {softmax(x), log_softmax(x)}) {
      CHECK(all_nan(slice(y, 0, 0, 1)));
      CHECK(all_nan(slice(y, 0, 1, 2)));
      for (double v : slice(y, 0, 2, 3).to_vector()) CHECK(std::isfinite(v));
    }
    const std::vector<double> maxima = max(x, -1).to_vector();
    CHECK(std::isnan(maxima[0]));
    CHECK(std::isnan(maxima[1]));
    CHECK(maxima[2] == 3.0);
    const std::vector<double> column_max = max(x, 0).to_vector();  // the reduce primitive's path
    for (double v : column_max) CHECK(std::isnan(v));
    const Tensor targets = Tensor::from_ids({0, 2, 1}, {3});
    CHECK(std::isnan(cross_entropy(x, targets).item()));  // it used to report 0
  }
}

TEST_CASE("a NaN in q, k or v makes the fused attention's output NaN") {
  Generator gen(3);
  for (int which = 0; which < 3; ++which) {
    CAPTURE(which);
    Tensor t[3] = {randn({1, 4, 2}, gen), randn({1, 4, 2}, gen), randn({1, 4, 2}, gen)};
    std::vector<double> values = t[which].to_vector();
    values[0] = kNan;  // position 0: every query sees it under no mask
    t[which] = Tensor::from_vector(values, {1, 4, 2});
    const Tensor out = attention(t[0], t[1], t[2], AttentionMask::none(), 0.5);
    const std::vector<double> o = out.to_vector();
    // a NaN query spoils its own row; a NaN key every row; a NaN value that channel of every row
    CHECK(std::isnan(which == 0 ? o[0] : which == 1 ? o[o.size() - 1] : o[o.size() - 2]));
  }
}

TEST_CASE("a checkpoint with non-finite weights is refused, naming the tensor and the count") {
  const models::LoadedTranslator m = models::load_translator("tests/fixtures/twin_model.safetensors");
  SafeTensorsFile file = safetensors_read("tests/fixtures/twin_model.safetensors");
  SafeTensor& w = file.tensors.at("attn.W_k.weight");
  REQUIRE(w.dtype == "F32");
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::memcpy(w.data.data(), &nan, 4);
  std::memcpy(w.data.data() + 8, &inf, 4);
  const std::string path = temp_path("nan.safetensors");
  safetensors_write(path, file);
  CHECK(error_of([&] { models::load_translator(path); }) ==
        path + ": tensor 'attn.W_k.weight' holds 2 non-finite values (NaN or Inf) among " +
            std::to_string(m.model->config().d_k * m.model->config().d_model));
  std::remove(path.c_str());
}

TEST_CASE("untrusted headers are bounded: nesting depth, NUL bytes, no dump of deep values") {
  // 100,000 nested arrays in a shape used to overflow the stack (SIGSEGV)
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  for (const std::string& header : {"{\"w\":{\"dtype\":\"F32\",\"shape\":" + deep + ",\"data_offsets\":[0,0]}}",
                                    "{\"__metadata__\":{\"k\":" + deep + "}}",
                                    "{\"w\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":" + deep + "}}"}) {
    const std::string message = error_of([&] { safetensors_parse(with_header(header), "deep.safetensors"); });
    CHECK(message == "deep.safetensors: header nests deeper than 64 levels");
  }
  // a NUL after the JSON used to end the header silently
  const std::string nul = std::string("{}") + '\0' + "garbage";
  CHECK(error_of([&] { safetensors_parse(with_header(nul), "nul.safetensors"); }) ==
        "nul.safetensors: header has a NUL byte at offset 2 (only JSON and trailing spaces are allowed)");
  // a value that is not a string is described, not dumped
  CHECK(error_of([&] { safetensors_parse(with_header("{\"__metadata__\":{\"k\":[[1],[2]]}}"), "m"); }) ==
        "m: __metadata__ value for key 'k' is not a string: an array of 2 entries");
}

TEST_CASE("only regular files are read: a FIFO does not hang, /dev/zero does not exhaust memory") {
  CHECK(error_of([] { safetensors_read("/dev/zero"); }) ==
        "/dev/zero: not a regular file (a checkpoint must be a file, not a device, pipe or directory)");
  const std::string fifo = temp_path("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(error_of([&] { models::load_translator(fifo); }).find("not a regular file") != std::string::npos);
  std::remove(fifo.c_str());
}

TEST_CASE("a config is checked against the file before a model is allocated from it") {
  // The fixture's metadata with the largest d_model (4096): that model would take hundreds of megabytes.
  SafeTensorsFile file = safetensors_read("tests/fixtures/twin_model.safetensors");
  std::string& config = file.metadata.at("config");
  const std::string from = "\"d_model\":", to = "\"d_model\":4096,\"_was\":";
  const size_t at = config.find(from);
  REQUIRE(at != std::string::npos);
  config.replace(at, from.size(), to);
  const std::string path = temp_path("huge.safetensors");
  safetensors_write(path, file);
  const std::string message = error_of([&] { models::load_translator(path); });
  CHECK(message.find("the config describes a model of") != std::string::npos);
  CHECK(message.find("but the file holds") != std::string::npos);
  std::remove(path.c_str());
}

TEST_CASE("TranslatorConfig::parameter_count matches the built model") {
  for (const auto mode : {models::AttentionMode::Learned, models::AttentionMode::Static, models::AttentionMode::None})
    for (const int64_t layers : {1, 3}) {
      const models::TranslatorConfig c = qkv::testing::test_config({8, 5, 12}, 11, 13, {4, 6}, mode, layers);
      Generator gen(1);
      const models::Translator model(c, gen);
      CHECK(c.parameter_count() == model.parameter_count());
    }
}
}
