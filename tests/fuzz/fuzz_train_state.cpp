// tests/fuzz/fuzz_train_state.cpp — libFuzzer harness for the training-state reader, as qkv train
// --resume runs it: bytes → safetensors (checksum, bounded header) → the saved options → the run's
// config on a small fixed dataset → the config check → a built model → restore_state (every field,
// the history, metrics and steps CSV, the generators, the tensors). Any input must end in a restored
// state or a std::exception; a crash, a hang or a sanitizer report is a bug.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdlib.h>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <optional>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "framework/optim.h"
#include "framework/random.h"
#include "framework/safetensors.h"
#include "models/memory_budget.h"
#include "models/translator.h"
#include "train/run/run_config.h"
#include "train/run/run_state.h"

namespace {

// The dataset the seed states in tests/fuzz/corpus/train_state/ were trained on, with valid and
// test below (qkv train --epochs 2 --batch 2 --layers 1 --d-model 8 --d-k 4 --d-ff 16
// --stop-after-steps N, some with --dtype float64 --attention static or none; each *-nocrc file is
// the same state without its checksum, so that mutations reach the fields behind it).
const char* const kTrain =
    "money bank grows\tपैसा बढ़ता है\n"
    "river bank flows\tनदी बहती है\n"
    "she ate a piece of cake\tउसने केक का एक टुकड़ा खाया\n"
    "the exam was a piece of cake\tपरीक्षा बहुत आसान थी\n"
    "he sat on the bank\tवह किनारे पर बैठा\n";

std::vector<qkv::data::SentencePair> pairs(const char* text, const char* name) {
  std::istringstream in(text);
  return qkv::data::parse_pairs(in, name);
}

// A temp folder holding an empty model.safetensors (restore_state checks that a saved run's best
// model is there), removed at exit.
char g_out_dir[] = "/tmp/qkv-fuzz-train-state-XXXXXX";

struct Fixture {
  qkv::data::Dataset ds;
  qkv::data::Vocab english, hindi;
  std::string out_dir;
  Fixture() {
    if (!mkdtemp(g_out_dir)) throw std::runtime_error("fuzz_train_state: cannot make a temp folder");
    out_dir = g_out_dir;
    std::ofstream(out_dir + "/model.safetensors").flush();
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(g_out_dir, ec);
    });
    ds.dir = "fuzz-data";
    ds.train = pairs(kTrain, "fuzz-data/train.tsv");
    ds.valid = pairs("money bank flows\tपैसा बहता है\n", "fuzz-data/valid.tsv");
    ds.test = pairs("river bank grows\tनदी बढ़ती है\n", "fuzz-data/test.tsv");
    std::vector<std::vector<std::string>> en, hi;
    for (const auto& p : ds.train) en.push_back(p.english), hi.push_back(p.hindi);
    english = qkv::data::Vocab::build(en);
    hindi = qkv::data::Vocab::build(hi);
  }
};

const Fixture& fixture() {
  static const Fixture fx;
  return fx;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace qkv;
  const Fixture& fx = fixture();
  static const bool verbose = std::getenv("QKV_FUZZ_VERBOSE") != nullptr;  // say how each input ends
  const std::vector<uint8_t> bytes(data, data + size);
  app::TrainOptions requested;
  requested.out_dir = fx.out_dir;
  requested.data_dir = fx.ds.dir;
  requested.resume = true;
  requested.quiet = true;
  const std::string path = app::RunFolder(requested.out_dir).state_path();
  try {
    const SafeTensorsFile saved = safetensors_parse(bytes, path);
    app::TrainOptions o = app::saved_options(saved, path, requested);
    if (o.device != Device::cpu()) return 0;  // this build trains on the CPU only
    const models::TranslatorConfig config = app::translator_config(o, fx.ds, fx.english, fx.hindi);
    app::check_saved_config(saved, path, config, o.data_dir);
    models::check_training_fits(config, static_cast<int>(dtype_size(o.dtype)), path);
    // The harness's own bound (not qkv's): a state may ask for any model qkv accepts, up to
    // gigabytes; the fuzzer builds only small ones.
    if (config.layers > 4 || config.d_model > 64 || config.d_k > 64 || config.d_ff > 256) return 0;
    app::TrainingRun run(o, fx.ds, Device::cpu(), nullptr);
    app::restore_state(saved, path, run);
    if (verbose)
      std::fprintf(stderr, "restored: epoch %lld, step %lld\n", static_cast<long long>(run.st.epoch),
                   static_cast<long long>(run.st.step));
  } catch (const std::exception& e) {
    // a clear error is the expected outcome for almost every input
    if (verbose) std::fprintf(stderr, "refused: %s\n", e.what());
  }
  return 0;
}
