// tests/gpu/test_gpu.cpp — build/qkv_gpu_tests: CPU/GPU parity (forward and backward) of every case
// in the op table (tests/op_cases.h), the CUDA backend's error messages, and a 20-step translator training run on both
// devices. Without a usable GPU (or without CUDA in the build) it prints why it skipped and
// exits 0. Run from the repository root (the training test reads data/idioms/train.tsv).
#include <cstdio>
#include <string>

#ifdef QKV_WITH_CUDA

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <limits>
#include <stdexcept>
#include <vector>

#include "data/dataset.h"
#include "framework/autograd.h"
#include "framework/backend.h"
#include "framework/cuda/cuda_info.h"
#include "framework/ops.h"
#include "framework/optim.h"
#include "framework/random.h"
#include "models/train_step.h"
#include "models/translator.h"
#include "models/translator_io.h"
#include "tests/op_cases.h"
#include "tests/test_config.h"

using namespace qkv;

namespace {

const Device kGpu = Device::cuda(0);
const DType kFloatTypes[] = {DType::F64, DType::F32};

struct Failure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void require(bool ok, const std::string& what) {
  if (!ok) throw Failure(what);
}

std::string fmt_double(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.17g", v);
  return buf;
}

// gpu must match cpu elementwise: float64 to 1e-10 relative, float32 to 1e-5 relative (or a case's
// own tolerance), each with an absolute floor of a tenth of that times the tensor's largest
// magnitude (at least 1); int64 exactly; non-finite values must match exactly.
void expect_close(const Tensor& cpu, const Tensor& gpu, const std::string& what, double rtol = 0.0) {
  require(cpu.defined() == gpu.defined(), what + ": defined on one device only");
  if (!cpu.defined()) return;
  require(gpu.device() == kGpu, what + ": result is on " + gpu.device().str() + ", expected cuda:0");
  require(cpu.shape() == gpu.shape(),
          what + ": shape " + shape_str(gpu.shape()) + " on the GPU, " + shape_str(cpu.shape()) + " on the CPU");
  require(cpu.dtype() == gpu.dtype(), what + ": dtype differs");
  const std::vector<double> a = cpu.to_vector(), b = gpu.to_vector();
  if (rtol == 0.0) rtol = cpu.dtype() == DType::F32 ? 1e-5 : 1e-10;
  double scale = 1.0;
  for (double v : a)
    if (std::isfinite(v)) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < a.size(); ++i) {
    bool ok;
    if (cpu.dtype() == DType::I64)
      ok = a[i] == b[i];
    else if (std::isnan(a[i]))
      ok = std::isnan(b[i]);
    else if (std::isinf(a[i]))
      ok = a[i] == b[i];
    else
      ok = std::fabs(a[i] - b[i]) <= rtol * (std::fabs(a[i]) + 0.1 * scale);
    if (!ok)
      throw Failure(what + ": element " + std::to_string(i) + " of " + shape_str(cpu.shape()) + ": cpu " +
                    fmt_double(a[i]) + ", gpu " + fmt_double(b[i]));
  }
}

void expect_bitwise(const Tensor& x, const Tensor& y, const std::string& what) {
  const std::vector<double> a = x.to_vector(), b = y.to_vector();
  require(a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0,
          what + ": two GPU runs differ");
}

void expect_error(const std::function<void()>& fn, const std::string& needle, const std::string& what) {
  try {
    fn();
  } catch (const std::exception& e) {
    const std::string message = e.what();
    require(message.find(needle) != std::string::npos,
            what + ": error '" + message + "' does not mention '" + needle + "'");
    return;
  }
  throw Failure(what + ": no error thrown (expected one mentioning '" + needle + "')");
}

Tensor rnd(const Shape& shape, DType dtype, uint64_t seed) {
  Generator gen(seed);
  return randn(shape, gen, dtype);
}
Tensor ids(const std::vector<int64_t>& values, const Shape& shape) { return Tensor::from_ids(values, shape); }

using OpFn = std::function<Tensor(const std::vector<Tensor>&)>;

struct SideResult {
  Tensor out;
  std::vector<Tensor> grads;
};

// `constants`: inputs (masks) that do not require grad; int64 inputs never do.
SideResult run_side(const std::vector<Tensor>& inputs, const OpFn& fn, Device device,
                    const std::vector<size_t>& constants) {
  std::vector<Tensor> leaves;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    if (!t.defined()) {
      leaves.push_back(Tensor());
      continue;
    }
    Tensor x = t.to(device);  // a fresh leaf on either device
    const bool constant = std::find(constants.begin(), constants.end(), i) != constants.end();
    if (x.dtype() != DType::I64 && !constant) x.set_requires_grad(true);
    leaves.push_back(x);
  }
  SideResult r;
  r.out = fn(leaves);
  if (r.out.requires_grad()) {
    Generator gen(12345);
    Tensor g = r.out.dtype() == DType::I64 ? Tensor() : randn(r.out.shape(), gen, r.out.dtype()).to(device);
    r.out.backward(g);
  }
  for (const Tensor& leaf : leaves) r.grads.push_back(leaf.defined() && leaf.requires_grad() ? leaf.grad() : Tensor());
  return r;
}

// Forward on both devices, backward with the same upstream gradient, compare everything.
void parity(const std::string& what, const std::vector<Tensor>& inputs, const OpFn& fn, double rtol = 0.0,
            const std::vector<size_t>& constants = {}) {
  const SideResult c = run_side(inputs, fn, Device::cpu(), constants);
  const SideResult g = run_side(inputs, fn, kGpu, constants);
  expect_close(c.out, g.out, what + " forward", rtol);
  for (size_t i = 0; i < inputs.size(); ++i)
    expect_close(c.grads[i], g.grads[i], what + " grad of input " + std::to_string(i), rtol);
}

std::string tag(const std::string& what, DType dt) { return what + " [" + dtype_name(dt) + "]"; }

// ---- op parity: every case of the op table, in float64 and float32 ----

// Every case runs even after one fails; the failures are listed together.
void test_op_table() {
  int cases = 0, failed = 0;
  std::string failures;
  for (const qkv::testing::OpCase& c : qkv::testing::op_cases())
    for (DType dt : kFloatTypes) {
      ++cases;
      try {
        parity(tag(c.name, dt), c.make_inputs(dt), c.fn, c.parity_rtol(dt), c.constants);
      } catch (const std::exception& e) {
        ++failed;
        failures += std::string("\n      ") + e.what();
      }
    }
  std::printf("  %d op-table cases (both dtypes), %d failed\n", cases, failed);
  require(failed == 0, std::to_string(failed) + " op-table case(s) differ between CPU and GPU:" + failures);
}

// The fused attention kernels' head-width limit (their parity cases, up to 256 wide, are in the
// op table).
void test_fused_attention_limit() {
  const Tensor wide = Tensor::zeros({1, 2, 257}, DType::F32, kGpu);
  expect_error([&] { attention(wide, wide, wide, AttentionMask::none(), 1.0); }, "head widths up to 256",
               "fused attention wider than 256");
}

// embedding's device-side range check (its parity cases are in the op table)
void test_embedding_errors() {
  for (DType dt : kFloatTypes) {
    const Tensor table = rnd({10, 6}, dt, 81);
    // The range check runs on the device without waiting; the error surfaces at the next read
    // back to the host, names the first bad index, and is then cleared.
    const Tensor bad = ids({1, 10, 12}, {3}).to(kGpu);
    const Tensor gtable = table.to(kGpu);
    expect_error([&] { embedding(gtable, bad).to_vector(); }, "index 10 out of range for a table of 10 rows",
                 tag("embedding out of range on the GPU", dt));
    expect_close(embedding(table, ids({1, 9}, {2})), embedding(gtable, ids({1, 9}, {2}).to(kGpu)),
                 tag("embedding after a reported range error", dt));
    const Tensor negative = ids({2, -3}, {2}).to(kGpu);
    expect_error([&] { embedding(gtable, negative).to_vector(); }, "index -3 out of range",
                 tag("embedding negative id", dt));
    expect_error([&] { embedding(gtable, ids({1}, {1})); }, "different devices", tag("embedding mixed devices", dt));
  }
}

// cross_entropy's device-side target check (its parity cases are in the op table)
void test_cross_entropy_errors() {
  for (DType dt : kFloatTypes) {
    const Tensor logits = rnd({4, 5, 11}, dt, 94);
    std::vector<int64_t> targets(20, 0);
    const Tensor glogits = logits.to(kGpu);
    std::vector<int64_t> bad_targets(20, 1);
    bad_targets[7] = 11;
    bad_targets[12] = -1;  // later than the first bad one: not the one reported
    expect_error(
        [&] {
          cross_entropy(glogits, ids(bad_targets, {4, 5}).to(kGpu)).item();
        },
        "cross_entropy: target 11 out of range for 11 classes", tag("cross_entropy target out of range", dt));
    expect_error(
        [&] {
          cross_entropy(glogits, ids(targets, {4, 5}));
        },
        "different devices", tag("cross_entropy mixed devices", dt));
  }
}

// Adam (L2 weight decay) and AdamW (decoupled): three steps from the same start on both devices.
void test_adam_steps() {
  for (DType dt : kFloatTypes)
    for (bool decoupled : {false, true}) {
      Tensor cpu = rnd({37, 11}, dt, 131), gpu = cpu.to(kGpu);
      cpu.set_requires_grad(true);
      gpu.set_requires_grad(true);
      optim::AdamOptions options{.lr = 0.05, .beta1 = 0.8, .beta2 = 0.95, .eps = 1e-6, .weight_decay = 0.1};
      optim::Adam on_cpu({cpu}, options, decoupled), on_gpu({gpu}, options, decoupled);
      for (int step = 1; step <= 3; ++step) {
        const Tensor g = rnd({37, 11}, dt, 131 + step);
        cpu.set_grad(g);
        gpu.set_grad(g.to(kGpu));
        on_cpu.step();
        on_gpu.step();
        expect_close(cpu, gpu, tag(std::string(decoupled ? "AdamW" : "Adam") + " step " + std::to_string(step), dt));
      }
    }
}

// Backend primitive paths called directly on both devices: reduce_sum to every shape (per-thread
// and per-block kernels), sum_squares and a gemm into a shared output, which no op reaches today.
void test_unreached_primitives() {
  for (DType dt : kFloatTypes) {
    const std::vector<std::pair<Tensor, std::vector<Shape>>> cases = {
        {rnd({3, 4, 5}, dt, 121), {{1, 4, 1}, {3, 1, 5}, {1, 1, 1}, {3, 4, 1}, {3, 4, 5}}},
        {rnd({300, 517}, dt, 122), {{1, 517}, {300, 1}, {1, 1}}},
    };
    for (const auto& [x, out_shapes] : cases)
      for (const Shape& out_shape : out_shapes) {
        Tensor cpu = Tensor::empty(out_shape, dt);
        backend_for(Device::cpu()).reduce_sum(dt, x.data_ptr(), x.shape(), cpu.data_ptr(), out_shape);
        const Tensor gx = x.to(kGpu);
        Tensor gpu = Tensor::empty(out_shape, dt, kGpu);
        backend_for(kGpu).reduce_sum(dt, gx.data_ptr(), x.shape(), gpu.data_ptr(), out_shape);
        expect_close(cpu, gpu, tag("reduce_sum " + shape_str(x.shape()) + " -> " + shape_str(out_shape), dt));
      }
    // sum_squares (clip_grad_norm's): the composed add(out, sum(mul(x, x)))'s bits on the device,
    // and close to the CPU's
    for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{70000}}) {
      const Tensor x = rnd({n}, dt, 126), gx = x.to(kGpu);
      Tensor cpu = Tensor::full({}, 0.25, dt), gpu = Tensor::full({}, 0.25, dt, kGpu);
      backend_for(Device::cpu()).sum_squares(dt, x.data_ptr(), n, true, cpu.data_ptr());
      backend_for(kGpu).sum_squares(dt, gx.data_ptr(), n, true, gpu.data_ptr());
      const Tensor composed = add(Tensor::full({}, 0.25, dt, kGpu), sum(mul(gx, gx)));
      expect_bitwise(gpu, composed, tag("sum_squares against the composed ops, n " + std::to_string(n), dt));
      expect_close(cpu, gpu, tag("sum_squares, n " + std::to_string(n), dt));
    }
    // gemm of 3 batch entries into one shared output (stride_c 0): they accumulate in order,
    // with beta applied at every entry, as on the CPU
    const int64_t M = 5, N = 4, K = 3, batch = 3;
    for (int ta = 0; ta < 2; ++ta)
      for (int tb = 0; tb < 2; ++tb)
        for (double beta : {0.0, 0.5, 1.0}) {
          const Tensor a = rnd(ta ? Shape{batch, K, M} : Shape{batch, M, K}, dt, 123);
          const Tensor b = rnd(tb ? Shape{batch, N, K} : Shape{batch, K, N}, dt, 124);
          const Tensor c0 = rnd({M, N}, dt, 125);
          Tensor cpu = c0.clone();
          backend_for(Device::cpu())
              .gemm_batched(dt, ta, tb, batch, M, N, K, 1.5, a.data_ptr(), M * K, b.data_ptr(), K * N, beta,
                            cpu.data_ptr(), 0);
          const Tensor ga = a.to(kGpu), gb = b.to(kGpu);
          Tensor gpu = c0.to(kGpu);
          backend_for(kGpu).gemm_batched(dt, ta, tb, batch, M, N, K, 1.5, ga.data_ptr(), M * K, gb.data_ptr(), K * N,
                                         beta, gpu.data_ptr(), 0);
          expect_close(cpu, gpu,
                       tag("gemm into a shared output" + std::string(ta ? " A^T" : "") + (tb ? " B^T" : "") + " beta " +
                               fmt_double(beta),
                           dt));
        }
  }
}

void test_primitives_and_errors() {
  // casts and int64 fill/copy on the device
  const Tensor f = Tensor::from_vector({-2.75, -0.5, 0, 1.5, 3.25, 1e10}, {6}, DType::F64);
  for (DType from : {DType::F32, DType::F64})
    for (DType to : {DType::F32, DType::F64, DType::I64}) {
      const Tensor src = f.to(from);
      expect_close(src.to(to), src.to(kGpu).to(to), "cast " + dtype_name(from) + " -> " + dtype_name(to));
    }
  const Tensor i = Tensor::from_ids({-5, 0, 7, 1LL << 40}, {4});
  for (DType to : {DType::F32, DType::F64, DType::I64})
    expect_close(i.to(to), i.to(kGpu).to(to), "cast int64 -> " + dtype_name(to));
  expect_close(Tensor::full({3, 2}, 7.0, DType::I64), Tensor::full({3, 2}, 7.0, DType::I64, kGpu), "int64 fill");
  expect_close(Tensor::arange(10, DType::I64), Tensor::arange(10, DType::I64, kGpu), "int64 arange");
  {
    const Tensor g = rnd({4, 4}, DType::F32, 101).to(kGpu);
    Tensor copy = Tensor::zeros({4, 4}, DType::F32, kGpu);
    copy.copy_(g);
    expect_bitwise(copy, g, "device-to-device copy_");
    Tensor half = copy.narrow_rows(1, 3);
    half.copy_(g.narrow_rows(0, 2));
    expect_close(g.narrow_rows(0, 2).to(Device::cpu()), half, "copy_ into a row view");
    // overlapping source and destination in one storage (memmove semantics, as on the CPU)
    Tensor host = g.to(Device::cpu());
    host.narrow_rows(0, 3).copy_(host.narrow_rows(1, 4));
    copy.copy_(g);
    copy.narrow_rows(0, 3).copy_(copy.narrow_rows(1, 4));
    expect_close(host, copy, "overlapping copy_");
  }
  // errors
  expect_error([] { Tensor::empty({int64_t{1} << 48}, DType::F32, kGpu); }, "cuda:0: out of memory allocating",
               "out-of-memory message");
  expect_error([] { Tensor::empty({int64_t{1} << 48}, DType::F32, kGpu); }, "MiB)", "out-of-memory size in MiB");
  expect_error([] { backend_for(Device::cuda(97)); }, "cuda:97 does not exist:", "missing device index");
  expect_error([] { add(Tensor::ones({2}), Tensor::ones({2}, DType::F32, kGpu)); }, "different devices",
               "mixed-device add");
  // rank above 8 after merging dims: a clear error, not a wrong answer
  Shape sa, sb;
  for (int k = 0; k < 9; ++k) sa.push_back(2), sa.push_back(1), sb.push_back(1), sb.push_back(2);
  expect_error([&] { add(Tensor::ones(sa, DType::F32, kGpu), Tensor::ones(sb, DType::F32, kGpu)); }, "at most 8 dims",
               "rank > 8 broadcast");
  // the allocator still works after an out-of-memory failure
  expect_close(Tensor::ones({1000}), Tensor::ones({1000}, DType::F32, kGpu), "allocation after OOM");
}

void test_determinism() {
  // the same graph twice on the GPU gives bit-identical values and gradients
  auto run = [] {
    std::vector<Tensor> leaves = {rnd({16, 40, 64}, DType::F32, 111).to(kGpu), rnd({64, 64}, DType::F32, 112).to(kGpu),
                                  rnd({500, 64}, DType::F32, 113).to(kGpu)};
    for (Tensor& t : leaves) t.set_requires_grad(true);
    Generator gen(114);
    std::vector<int64_t> tok(16 * 40);
    for (auto& t : tok) t = static_cast<int64_t>(gen.below(500));
    const Tensor id = Tensor::from_ids(tok, {16, 40}, kGpu);
    Tensor h = add(leaves[0], embedding(leaves[2], id));
    Tensor s = softmax(matmul(matmul(h, leaves[1]), h, false, true));
    Tensor loss = add(sum(layer_norm(matmul(s, h), Tensor(), Tensor())), mean(mul(h, h)));
    loss.backward();
    return std::vector<Tensor>{loss, leaves[0].grad(), leaves[1].grad(), leaves[2].grad()};
  };
  const auto a = run(), b = run();
  for (size_t k = 0; k < a.size(); ++k) expect_bitwise(a[k], b[k], "determinism, tensor " + std::to_string(k));
}

// ---- the translator: 20 AdamW steps on the first 64 training pairs ----

// Saves `model` (on the GPU), loads the file on the CPU and on the GPU, and requires every
// parameter to come back bit for bit on both: checkpoints do not depend on the device.
void check_checkpoint_round_trip(const models::Translator& model, const data::Vocab& english,
                                 const data::Vocab& hindi) {
  const std::string path = "/tmp/qkv_gpu_test_" + std::to_string(::getpid()) + ".safetensors";
  models::save_translator(path, model, english, hindi);
  for (Device device : {Device::cpu(), kGpu}) {
    const models::LoadedTranslator loaded = models::load_translator(path, device);
    const auto want = model.named_parameters(), got = loaded.model->named_parameters();
    require(want.size() == got.size(), "checkpoint round trip: parameter count differs");
    for (size_t k = 0; k < want.size(); ++k) {
      require(got[k].second.device() == device, "checkpoint loaded onto " + got[k].second.device().str());
      expect_bitwise(want[k].second, got[k].second,
                     "checkpoint from the GPU loaded on " + device.str() + ": " + want[k].first);
    }
  }
  std::remove(path.c_str());
}

std::vector<double> train_losses(Device device, bool check_checkpoint = false) {
  std::vector<data::SentencePair> pairs = data::load_pairs("data/idioms/train.tsv");
  require(pairs.size() >= 64, "data/idioms/train.tsv has fewer than 64 pairs");
  pairs.resize(64);
  std::vector<std::vector<std::string>> en, hi;
  data::Layout layout;
  for (const auto& p : pairs) {
    en.push_back(p.english);
    hi.push_back(p.hindi);
    layout.max_source = std::max<int64_t>(layout.max_source, static_cast<int64_t>(p.english.size()));
    layout.max_target = std::max<int64_t>(layout.max_target, static_cast<int64_t>(p.hindi.size()) + 1);
  }
  const data::Vocab english = data::Vocab::build(en), hindi = data::Vocab::build(hi);
  const models::TranslatorConfig config = qkv::testing::test_config({32, 16, 64}, english.size(), hindi.size(), layout);
  Generator gen(1);
  models::Translator model(config, gen);
  if (device != Device::cpu()) model.to(device);
  optim::AdamW optimizer(model.parameters(), {.lr = 3e-3, .weight_decay = 0.01});
  const std::vector<Tensor> params = model.parameters();
  std::vector<double> losses;
  for (int step = 0; step < 20; ++step) {
    std::vector<size_t> idx;
    for (size_t k = 0; k < 16; ++k) idx.push_back((step * 16 + k) % pairs.size());
    const data::Batch batch = data::make_batch(pairs, idx, english, hindi, layout, device);
    const int64_t reads_before = host_reads();
    const Tensor loss = models::train_step(model, optimizer, params, batch).loss;
    require(host_reads() == reads_before, "a training step on " + device.str() + " read " +
                                              std::to_string(host_reads() - reads_before) +
                                              " tensor(s) back to the host");
    losses.push_back(loss.item());
  }
  if (check_checkpoint) check_checkpoint_round_trip(model, english, hindi);
  return losses;
}

void test_training_parity() {
  const std::vector<double> cpu = train_losses(Device::cpu());
  const std::vector<double> gpu = train_losses(kGpu, true);
  const std::vector<double> again = train_losses(kGpu);
  for (size_t k = 0; k < cpu.size(); ++k) {
    require(std::isfinite(cpu[k]), "CPU loss at step " + std::to_string(k + 1) + " is not finite");
    require(std::fabs(cpu[k] - gpu[k]) <= 1e-4, "step " + std::to_string(k + 1) + ": cpu loss " + fmt_double(cpu[k]) +
                                                    ", gpu loss " + fmt_double(gpu[k]) + " (tolerance 1e-4)");
    require(std::memcmp(&gpu[k], &again[k], sizeof(double)) == 0, "step " + std::to_string(k + 1) +
                                                                      ": two GPU runs differ: " + fmt_double(gpu[k]) +
                                                                      " vs " + fmt_double(again[k]));
  }
  require(gpu.back() < gpu.front(), "GPU training did not reduce the loss");
  std::printf("  translator losses: cpu %.6f -> %.6f, gpu %.6f -> %.6f\n", cpu.front(), cpu.back(), gpu.front(),
              gpu.back());
}

}  // namespace

int main() {
  std::string why;
  if (!cuda_available(&why)) {
    std::printf("GPU tests skipped: %s\n", why.c_str());
    return 0;
  }
  std::printf("%s\n", cuda_device_summary(0).c_str());
  const std::vector<std::pair<const char*, void (*)()>> tests = {
      {"every case of the op table (tests/op_cases.h)", test_op_table},
      {"fused attention head-width limit", test_fused_attention_limit},
      {"embedding range errors", test_embedding_errors},
      {"cross_entropy target errors", test_cross_entropy_errors},
      {"Adam and AdamW steps", test_adam_steps},
      {"primitives called directly (reduce_sum to every shape, sum_squares, shared-output gemm)",
       test_unreached_primitives},
      {"primitives and error messages", test_primitives_and_errors},
      {"determinism", test_determinism},
      {"translator training parity (20 AdamW steps), checkpoint round trip", test_training_parity},
  };
  int passed = 0, failed = 0;
  for (const auto& [name, fn] : tests) {
    try {
      fn();
      ++passed;
      std::printf("ok    %s\n", name);
    } catch (const std::exception& e) {
      ++failed;
      std::printf("FAIL  %s: %s\n", name, e.what());
    }
    std::fflush(stdout);
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

#else  // built without CUDA

int main() {
  std::printf("GPU tests skipped: built without CUDA\n");
  return 0;
}

#endif
