// train/experiments/bench/bench.cpp — what `qkv bench` measures: speed as ratios against a reference run
// in the same process (qkv matmul against a raw cblas_sgemm call), training throughput of the
// translator at two sizes on every device, the fused attention, each positions scheme beside
// absolute, and data-parallel steps. Speed lives here, never in tests.
#include <cblas.h>
#include <unistd.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>
#include <vector>

#include "train/experiments/bench/bench.h"
#include "framework/autograd.h"
#include "framework/backend.h"
#include "framework/distributed.h"
#include "framework/ops.h"
#include "framework/optim.h"
#include "models/train_step.h"
#include "models/translator.h"
#include "train/run/training_run.h"
#ifdef QKV_WITH_CUDA
#include "framework/cuda/cuda_info.h"
#endif

namespace qkv::app {

// The median of the values (the upper one of an even count).
static double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Median seconds per call over `repeats` timed runs (after one warm-up call).
static double median_seconds(const std::function<void()>& fn, int repeats) {
  fn();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto start = Clock::now();
    fn();
    times.push_back(seconds_since(start));
  }
  return median(times);
}

// The raw cblas_sgemm references run on OpenBLAS's own threads, as many as qkv's loop threads
// (qkv itself keeps OpenBLAS on one thread and splits its gemms over the loop threads).
struct OpenBlasThreads {
  OpenBlasThreads() { openblas_set_num_threads(cpu_threads()); }
  ~OpenBlasThreads() { openblas_set_num_threads(1); }
};

// Median seconds of a raw cblas_sgemm c (M, N) = a (M, K) b (K, N), row-major, over `repeats` runs
// on OpenBLAS's threads.
static double raw_sgemm_seconds(int64_t M, int64_t N, int64_t K, const float* a, const float* b, float* c,
                                int repeats) {
  OpenBlasThreads raw_threads;
  return median_seconds(
      [&] { cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, a, K, b, N, 0.0f, c, N); }, repeats);
}

static void bench_matmul(int n, int repeats, BenchOutput& out) {
  Generator gen(0);
  Tensor a = randn({n, n}, gen), b = randn({n, n}, gen);
  std::vector<float> c(static_cast<size_t>(n) * n);
  const double raw = raw_sgemm_seconds(n, n, n, a.data<float>(), b.data<float>(), c.data(), repeats);
  const double ours = median_seconds([&] { Tensor y = matmul(a, b); }, repeats);
  const double flops = 2.0 * n * n * n;
  out.say("matmul {}x{} float32 (median of {}):\n", n, n, repeats);
  out.say("  raw cblas_sgemm {:8.3f} ms  {:6.1f} GFLOP/s\n", raw * 1e3, flops / raw / 1e9);
  out.say("  qkv matmul      {:8.3f} ms  {:6.1f} GFLOP/s   ratio qkv/raw {:.3f}\n", ours * 1e3, flops / ours / 1e9,
          ours / raw);
  const nlohmann::ordered_json shape = {{"n", n}, {"dtype", "float32"}};
  out.measure("matmul_raw_cblas_sgemm", shape, raw * 1e3, "ms");
  out.measure("matmul_qkv", shape, ours * 1e3, "ms");
  out.measure("matmul_qkv_over_raw", shape, ours / raw, "ratio");
}

#ifdef QKV_WITH_CUDA
// cuBLAS float32 gemm at n x n through qkv's matmul, against the card's float32 peak.
static void bench_cuda_gemm(int n, int repeats, BenchOutput& out) {
  const Device cuda = Device::cuda(0);
  Generator gen(0);
  Tensor a = randn({n, n}, gen).to(cuda), b = randn({n, n}, gen).to(cuda);
  Backend& be = backend_for(cuda);
  const double seconds = median_seconds(
      [&] {
        Tensor y = matmul(a, b);
        be.synchronize();
      },
      repeats);
  const double tflops = 2.0 * n * n * n / seconds / 1e12, peak = cuda_peak_fp32_tflops(0);
  out.say("{}\n", cuda_device_summary(0));
  out.say("cuBLAS sgemm {}x{} through qkv: {:.3f} ms, {:.1f} TFLOP/s = {:.0f}% of the {:.1f} TFLOP/s float32 peak\n", n,
          n, seconds * 1e3, tflops, 100 * tflops / peak, peak);
  const nlohmann::ordered_json where = {{"n", n}, {"device", "cuda"}};
  out.measure("cuda_gemm", where, seconds * 1e3, "ms");
  out.measure("cuda_gemm_throughput", where, tflops, "TFLOP/s");
  out.measure("cuda_gemm_fraction_of_peak", where, tflops / peak, "fraction");
}
#endif

// ---- attention at length T: the fused op against the composed softmax(q k^T) v ----

struct AttentionTiming {
  double forward_s = 0, backward_s = 0;
  int64_t peak_bytes = 0;  // tensor storage at its highest, above what was held before
};

// One forward and backward of causal single-head attention, q, k, v (1, T, H) float32, timed
// separately; the median of `repeats` runs.
static AttentionTiming time_attention(int64_t T, int64_t H, bool fused, int repeats, Device device) {
  Generator gen(1);
  const Tensor q0 = randn({1, T, H}, gen).to(device), k0 = randn({1, T, H}, gen).to(device);
  const Tensor v0 = randn({1, T, H}, gen).to(device), g = randn({1, T, H}, gen).to(device);
  Backend& backend = backend_for(device);
  const bool cpu = device == Device::cpu();
  const double scale = 1.0 / std::sqrt(static_cast<double>(H));
  std::vector<double> forward, backward;
  int64_t peak_bytes = 0;
  for (int r = 0; r < repeats; ++r) {
    Tensor q = q0.clone(), k = k0.clone(), v = v0.clone();
    for (Tensor* x : {&q, &k, &v}) x->set_requires_grad(true);
    backend.synchronize();
    const int64_t before = cpu_memory_use().current;
    reset_cpu_memory_peak();
    auto start = Clock::now();
    Tensor out;
    if (fused) {
      out = attention(q, k, v, AttentionMask::causal(), scale);
    } else {
      // the composed path, as the model ran before the fused op: the (T, T) scores, mask and weights
      Tensor keep = Tensor::empty({1, T, T});
      float* cell = keep.data<float>();
      for (int64_t i = 0; i < T; ++i)
        for (int64_t j = 0; j < T; ++j) cell[i * T + j] = j <= i ? 1.0f : 0.0f;
      keep = keep.to(device);
      Tensor scores = mul_scalar(matmul(q, k, false, true), scale);
      out = matmul(softmax(masked_fill(scores, keep, -INFINITY)), v);
    }
    backend.synchronize();
    forward.push_back(seconds_since(start));
    start = Clock::now();
    out.backward(g);
    backend.synchronize();
    backward.push_back(seconds_since(start));
    if (cpu) peak_bytes = std::max(peak_bytes, cpu_memory_use().peak - before);
  }
  return {median(forward), median(backward), peak_bytes};
}

// The rate of raw cblas_sgemm on the attention's own products at length T and width H: the scores
// (T, T) = (T, H) (H, T) and the weighted sum (T, H) = (T, T) (T, H), the median of 3 each, on as many
// OpenBLAS threads as qkv's loop threads. The fused op's GFLOP/s against it says how far its tiles
// are from the gemm a composed path would call.
static double sgemm_rate_for_attention(int64_t T, int64_t H) {
  // a holds (T, H) or (T, T), b (H, T) or (T, H), c (T, T) or (T, H)
  const size_t wide = static_cast<size_t>(T * std::max(T, H));
  std::vector<float> a(wide, 0.5f), b(static_cast<size_t>(T * H), 0.25f), c(wide);
  double seconds = 0;
  for (const auto& [M, N, K] : {std::array<int64_t, 3>{T, T, H}, std::array<int64_t, 3>{T, H, T}})
    seconds += raw_sgemm_seconds(M, N, K, a.data(), b.data(), c.data(), 3);
  return 2.0 * 2.0 * static_cast<double>(T) * T * H / seconds / 1e9;
}

static void bench_attention(const std::vector<int64_t>& lengths, int64_t H, Device device, BenchOutput& out) {
  const bool cpu = device == Device::cpu();
  // the composed path's (T, T) matrices must fit: half the host's memory, or a GPU's 16 GB at least
  const double memory =
      cpu ? static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE)) : 32e9;
  out.say("causal single-head attention on {}, H = {}, float32, forward + backward, one sequence{}:\n", device.str(), H,
          cpu ? "" : " (peak memory is measured on the CPU only)");
  out.say("  {:>7}  {:<9} {:>10} {:>10} {:>10} {:>12}  {:>9}\n", "T", "path", "forward", "backward", "total",
          "peak memory", "GFLOP/s");
  for (const int64_t T : lengths) {
    // about 2 T^2 H multiply-adds forward (scores, weights @ v) and 4 T^2 H backward, halved by causality
    const double flops = 6.0 * T * T * H * 2 / 2;
    const int repeats = T <= 2048 ? 5 : T <= 8192 ? 3 : 1;
    const nlohmann::ordered_json shape = {{"T", T}, {"H", H}, {"device", device.str()}};
    const auto say_row = [&](const char* path, const AttentionTiming& t) {
      const double total = t.forward_s + t.backward_s;
      out.say("  {:>7}  {:<9} {:>8.1f}ms {:>8.1f}ms {:>8.1f}ms {:>10.4f}GB  {:>9.1f}\n", T, path, t.forward_s * 1e3,
              t.backward_s * 1e3, total * 1e3, t.peak_bytes / 1e9, flops / total / 1e9);
    };
    const AttentionTiming fused = time_attention(T, H, true, repeats, device);
    const double fused_total = fused.forward_s + fused.backward_s;
    say_row("fused", fused);
    // the reference's two (T, T)-sized matrices and one (T, H), where they fit in half the memory
    const double reference_need = 4.0 * (2.0 * T * std::max(T, H) + static_cast<double>(T) * H);
    if (cpu && reference_need <= memory / 2) {
      const double sgemm = sgemm_rate_for_attention(T, H), fused_rate = flops / fused_total / 1e9;
      out.say("  {:>7}  raw cblas_sgemm on the same products: {:.1f} GFLOP/s; the fused op runs at {:.0f}% of it\n", T,
              sgemm, 100 * fused_rate / sgemm);
      out.measure("attention_sgemm_reference", shape, sgemm, "GFLOP/s");
      out.measure("attention_fused_share_of_sgemm", shape, fused_rate / sgemm, "fraction");
    }
    const auto record = [&](const char* path, const AttentionTiming& t) {
      const nlohmann::ordered_json where = {{"T", T}, {"H", H}, {"path", path}, {"device", device.str()}};
      out.measure("attention_forward", where, t.forward_s * 1e3, "ms");
      out.measure("attention_backward", where, t.backward_s * 1e3, "ms");
      out.measure("attention_throughput", where, flops / (t.forward_s + t.backward_s) / 1e9, "GFLOP/s");
      if (cpu) out.measure("attention_peak_memory", where, static_cast<double>(t.peak_bytes), "bytes");
    };
    record("fused", fused);
    // The composed path holds about four (T, T) float32 matrices at once (scores, mask, masked
    // scores, weights) plus their gradients; run it only where that fits in half the memory.
    const double composed_need = 6.0 * T * T * 4;
    if (composed_need > memory / 2) {
      out.say("  {:>7}  {:<9} skipped: needs about {:.1f} GB for its (T, T) matrices (this machine has {:.1f} GB)\n", T,
              "composed", composed_need / 1e9, memory / 1e9);
      continue;
    }
    const AttentionTiming composed = time_attention(T, H, false, repeats, device);
    const double composed_total = composed.forward_s + composed.backward_s;
    say_row("composed", composed);
    out.say("  {:>7}  fused is {:.2f}x faster and needs {:.1f}x less peak memory\n", T, composed_total / fused_total,
            static_cast<double>(composed.peak_bytes) / static_cast<double>(std::max<int64_t>(fused.peak_bytes, 1)));
    record("composed", composed);
    out.measure("attention_fused_speedup", shape, composed_total / fused_total, "ratio");
  }
}

struct BenchSize {
  std::string name, label;  // label: as --size names it, toy or large
  int64_t batch, max_source, max_target, d_model, d_k, d_ff, vocab;
};

// One matrix product of a training step, (M, K) (K, N), `count` times.
struct GemmShape {
  int64_t M, N, K, count;
};
static std::vector<GemmShape> step_gemm_shapes(const BenchSize& s) {
  const int64_t B = s.batch, T = s.max_source + s.max_target, D = s.d_model, H = s.d_k, F = s.d_ff;
  const int64_t R = B * T, Rt = B * s.max_target, Tt = s.max_target;
  // One layer, which is also the last: keys and values over every position as one (R, 2H) product
  // (LearnedAttention::forward), and the rest (queries, W_o, feed-forward, head) over the target
  // positions only (Translator::forward skips the rest).
  std::vector<GemmShape> linear = {{R, 2 * H, D, 1}, {Rt, H, D, 1}, {Rt, D, H, 1},
                                   {Rt, F, D, 1},    {Rt, D, F, 1}, {Rt, s.vocab, D, 1}};
  std::vector<GemmShape> shapes;
  for (const GemmShape& g : linear) {
    shapes.push_back(g);                         // forward: y = x W^T
    shapes.push_back({g.M, g.K, g.N, g.count});  // d x = g W
    shapes.push_back({g.N, g.K, g.M, g.count});  // d W = g^T x
  }
  // attention per sequence, Tt queries over T keys: scores and weights @ v forward; dP, dS k,
  // dS^T q, P^T g backward
  shapes.push_back({Tt, T, H, 2 * B});  // q k^T, and dP = g v^T
  shapes.push_back({Tt, H, T, 2 * B});  // P v, dS k
  shapes.push_back({T, H, Tt, 2 * B});  // dS^T q, P^T g
  return shapes;
}

// The multiply-adds of one training step, counted twice (FLOPs), over step_gemm_shapes.
static double step_flops(const BenchSize& s) {
  double flops = 0;
  for (const GemmShape& g : step_gemm_shapes(s)) flops += 2.0 * g.M * g.N * g.K * g.count;
  return flops;
}

// The gemm floor of one training step: every matrix product of the step (forward and backward,
// attention's included, as if its (T, T) products were gemms) timed as a raw cblas_sgemm at its own
// shape in this process, summed. Returns the floor in seconds.
static double gemm_floor(const BenchSize& s) {
  double seconds = 0;
  for (const GemmShape& g : step_gemm_shapes(s)) {
    std::vector<float> a(static_cast<size_t>(g.M * g.K), 0.5f), b(static_cast<size_t>(g.K * g.N), 0.25f),
        c(static_cast<size_t>(g.M * g.N));
    seconds += raw_sgemm_seconds(g.M, g.N, g.K, a.data(), b.data(), c.data(), 7) * g.count;
  }
  return seconds;
}

// The translator a benchmark size describes: one block, one vocabulary size for both languages.
static models::TranslatorConfig config_for(const BenchSize& s, models::Positions positions) {
  models::TranslatorConfig c{.layers = 1, .d_model = s.d_model, .d_k = s.d_k, .d_ff = s.d_ff, .layout = {}};
  c.positions = positions;
  c.source_vocab = c.target_vocab = s.vocab;
  c.layout = {s.max_source, s.max_target};
  return c;
}

// `rows` full-length sentences of random ids (>= 4, past the specials), the target input the same
// ids as the output (a bench needs the work, not the sense).
static data::Batch synthetic_batch(const BenchSize& s, int64_t rows, Generator& gen, Device device) {
  std::vector<int64_t> src, tout;
  for (int64_t i = 0; i < rows * s.max_source; ++i) src.push_back(4 + static_cast<int64_t>(gen.below(s.vocab - 4)));
  for (int64_t i = 0; i < rows * s.max_target; ++i) tout.push_back(4 + static_cast<int64_t>(gen.below(s.vocab - 4)));
  data::Batch batch;
  batch.source = Tensor::from_ids(src, {rows, s.max_source}, device);
  batch.target_input = Tensor::from_ids(tout, {rows, s.max_target}, device);
  batch.target_output = Tensor::from_ids(tout, {rows, s.max_target}, device);
  batch.source_lengths.assign(rows, s.max_source);
  return batch;
}

// `steps` training steps on synthetic tokens after one warm-up: forward, backward, clip, AdamW. As
// in real training, the loss is read back only at the end (a GPU runs the steps without waiting).
struct StepRun {
  double seconds, last_loss;
  MadeCounts made_before, made_after;
  GraphCounts graph_before, graph_after;
};
static StepRun run_steps(const BenchSize& s, Device device, int steps, models::Positions positions) {
  Generator gen(0);
  models::Translator model(config_for(s, positions), gen);
  if (device != Device::cpu()) model.to(device);
  optim::AdamW opt(model.parameters(), {.lr = 1e-3, .weight_decay = 0.01});
  const data::Batch batch = synthetic_batch(s, s.batch, gen, device);
  const std::vector<Tensor> params = model.parameters();
  Tensor loss;
  auto step = [&] { loss = models::train_step(model, opt, params, batch).loss; };
  step();  // warm-up (allocations, caches)
  (void)loss.item();
  StepRun run{};
  run.made_before = made_counts();
  run.graph_before = graph_counts();
  const auto start = Clock::now();
  for (int i = 0; i < steps; ++i) step();
  run.last_loss = loss.item();  // waits for the device
  run.seconds = seconds_since(start);
  run.made_after = made_counts();
  run.graph_after = graph_counts();
  if (!std::isfinite(run.last_loss))
    throw std::runtime_error(fmt::format("bench: {} on {} gave a non-finite loss", s.name, device.str()));
  return run;
}

// Training steps per second on synthetic tokens (run_steps) with the shipped model's positions
// (train's --positions default; tools/bench_pytorch.py times the same), reported. Returns
// milliseconds per step.
static double bench_training(const BenchSize& s, Device device, int steps, BenchOutput& out) {
  const auto [seconds, last_loss, made_before, made_after, graph_before, graph_after] =
      run_steps(s, device, steps, TrainOptions{}.positions);
  const double tokens = static_cast<double>(steps) * s.batch * (s.max_source + s.max_target);
  out.say("  {:<34} {:<7} {:8.2f} ms/step  {:10.0f} tokens/s  ({} steps)\n", s.name, device.str(),
          seconds / steps * 1e3, tokens / seconds, steps);
  out.say("RESULT qkv {} {} {:.4f}\n", s.label, device.str(), seconds / steps * 1e3);
  const double flops = step_flops(s), rate = flops / (seconds / steps);  // the step's products' FLOPs per second
  out.say("  {:<34} {:.3f} GFLOP per step in products: {:.1f} GFLOP/s ({:.3f} TFLOP/s)\n", "", flops / 1e9, rate / 1e9,
          rate / 1e12);
  const nlohmann::ordered_json where = {{"size", s.label},
                                        {"device", device.str()},
                                        {"positions", models::positions_name(TrainOptions{}.positions)},
                                        {"steps", steps}};
  out.measure("training_step", where, seconds / steps * 1e3, "ms");
  out.measure("training_throughput", where, tokens / seconds, "tokens/s");
  out.measure("training_flop_rate", where, rate / 1e12, "TFLOP/s");
  // What a step makes beside its arithmetic (the counts are the same on every run of a size).
  const auto per_step = [&](int64_t after, int64_t before) { return static_cast<double>(after - before) / steps; };
  const double ops = per_step(graph_after.ops, graph_before.ops),
               nodes = per_step(graph_after.nodes, graph_before.nodes);
  const double tensors = per_step(made_after.tensors, made_before.tensors);
  const double storages = per_step(made_after.storages, made_before.storages);
  const double megabytes = per_step(made_after.storage_bytes, made_before.storage_bytes) / 1e6;
  out.say(
      "  {:<34} per step: {:.0f} op calls, {:.0f} graph nodes, {:.0f} tensor headers, {:.0f} allocations ({:.1f} MB)\n",
      "", ops, nodes, tensors, storages, megabytes);
  out.measure("training_op_calls_per_step", where, ops, "calls");
  out.measure("training_graph_nodes_per_step", where, nodes, "nodes");
  out.measure("training_tensor_headers_per_step", where, tensors, "headers");
  out.measure("training_allocations_per_step", where, storages, "allocations");
  out.measure("training_allocated_megabytes_per_step", where, megabytes, "MB");
  if (device == Device::cpu()) {
    const double floor = gemm_floor(s);
    out.say(
        "  {:<34} {:.2f} GFLOP per step; raw sgemm at the step's shapes: {:.2f} ms, so qkv runs at {:.0f}% of "
        "the gemm floor\n",
        "", flops / 1e9, floor * 1e3, 100 * floor / (seconds / steps));
    out.say("RESULT floor {} {:.4f} {:.4f}\n", s.label, flops / 1e9, floor * 1e3);
    out.measure("training_step_flops", where, flops / 1e9, "GFLOP");
    out.measure("training_gemm_floor", where, floor * 1e3, "ms");
    out.measure("training_fraction_of_gemm_floor", where, floor / (seconds / steps), "fraction");
  }
  return seconds / steps * 1e3;
}

// --positions: each scheme's training step beside absolute's, in alternating rounds (absolute, the
// scheme, absolute, ...) so that both see the same machine; the figure is the median of the rounds'
// ratios (a round's pair shares the machine's state of the moment).
static void bench_positions(const std::vector<std::string>& schemes, const BenchSize& s, Device device, int steps,
                            BenchOutput& out) {
  constexpr int kRounds = 9;
  for (const std::string& name : schemes) {
    std::vector<double> absolute, scheme, ratios;
    for (int round = 0; round < kRounds; ++round) {
      absolute.push_back(run_steps(s, device, steps, models::Positions::Absolute).seconds / steps);
      scheme.push_back(run_steps(s, device, steps, models::parse_positions(name)).seconds / steps);
      ratios.push_back(scheme.back() / absolute.back());
    }
    const double ratio = median(ratios);
    out.say("  {:<34} {:<16} {:8.3f} ms/step against absolute's {:8.3f}: {:.3f}x ({} rounds of {} steps)\n", s.name,
            name, median(scheme) * 1e3, median(absolute) * 1e3, ratio, kRounds, steps);
    out.measure("positions_step_ratio", {{"size", s.label}, {"device", device.str()}, {"positions", name}}, ratio,
                "ratio");
  }
}

// Data-parallel training under mpirun: each rank runs its slice of the global batch, then one
// all-reduce of the flat gradient buffer; rank 0 reports the step, the all-reduce's share and the
// bytes per step.
static void bench_data_parallel(const BenchSize& s, int steps, BenchOutput& out) {
  dist::ProcessGroup& group = dist::ProcessGroup::world();
  const int N = group.size(), rank = group.rank();
  if (s.batch < N)
    throw std::runtime_error(fmt::format("bench --data-parallel: {} ranks for a batch of {}", N, s.batch));
  Generator gen(0);
  models::Translator model(config_for(s, TrainOptions{}.positions), gen);
  optim::AdamW opt(model.parameters(), {.lr = 1e-3, .weight_decay = 0.01});
  // this rank's rows of a synthetic global batch (equal tokens per row)
  const int64_t rows = s.batch * (rank + 1) / N - s.batch * rank / N;
  const data::Batch batch = synthetic_batch(s, rows, gen, Device::cpu());
  const std::vector<Tensor> params = model.parameters();
  models::StepOptions step_options;
  step_options.loss_scale = static_cast<double>(rows) / s.batch;
  step_options.after_backward = [&](Tensor& loss) { dist::all_reduce_gradients(group, params, {loss.detach()}); };
  auto step = [&] { models::train_step(model, opt, params, batch, step_options); };
  step();  // warm-up
  const double reduce_before = group.all_reduce_seconds();
  const auto start = Clock::now();
  for (int i = 0; i < steps; ++i) step();
  const double seconds = seconds_since(start) / steps, reduce = (group.all_reduce_seconds() - reduce_before) / steps;
  const double bytes = static_cast<double>(model.parameter_count() + 1) * sizeof(float);
  if (rank != 0) return;
  out.say("data-parallel {}: {} rank{}, global batch {} ({} per rank)\n", s.name, N, N == 1 ? "" : "s", s.batch, rows);
  out.say("  step {:.2f} ms, all-reduce {:.3f} ms ({:.1f}% of the step), {:.0f} bytes per rank per step\n",
          seconds * 1e3, reduce * 1e3, 100 * reduce / seconds, bytes);
  const nlohmann::ordered_json where = {{"size", s.label}, {"ranks", N}};
  out.measure("data_parallel_step", where, seconds * 1e3, "ms");
  out.measure("data_parallel_all_reduce", where, reduce * 1e3, "ms");
  out.measure("data_parallel_bytes_per_step", where, bytes, "bytes");
}

void measure_all(BenchOutput& out, const BenchOptions& o) {
  if (!o.lengths.empty()) {
    const Device device = Device::parse(o.devices.front());
    (void)backend_for(device);  // a missing GPU fails before any work
    return bench_attention(o.lengths, o.width, device, out);
  }
  const std::vector<BenchSize> sizes = {
      {"toy defaults (B=64 T=21 D=64 F=256)", "toy", 64, 10, 11, 64, 64, 256, 300},
      {"B=16 T=128 D=256 F=1024 V=1024", "large", 16, 64, 64, 256, 256, 1024, 1024},
  };
  // Each size --size names, with its timed steps (five times as many for the toy size).
  const auto for_each_size = [&](const auto& run) {
    for (const auto& s : sizes)
      if (o.only == "all" || o.only == s.label) run(s, s.label == "toy" ? o.steps * 5 : o.steps);
  };
  if (o.data_parallel)
    return for_each_size([&](const BenchSize& s, int size_steps) { bench_data_parallel(s, size_steps, out); });
  for (const auto& d : o.devices) (void)backend_for(Device::parse(d));  // fail before measuring anything
  if (!o.positions.empty()) {
    out.say("training step by positions, beside absolute (synthetic tokens, one block):\n");
    return for_each_size([&](const BenchSize& s, int size_steps) {
      bench_positions(o.positions, s, Device::parse(o.devices.front()), size_steps, out);
    });
  }
  if (o.only == "all") bench_matmul(512, 20, out);
  out.say("training throughput (forward + backward + AdamW, synthetic tokens, {} positions):\n",
          models::positions_name(TrainOptions{}.positions));
  std::map<std::string, double> cpu_ms;  // size -> the CPU's ms per step, to give every other device's ratio
  for (const auto& d : o.devices)
    for_each_size([&](const BenchSize& s, int size_steps) {
      const Device device = Device::parse(d);
      const double ms = bench_training(s, device, size_steps, out);
      if (device == Device::cpu()) cpu_ms[s.label] = ms;
      if (device == Device::cpu() || !cpu_ms.contains(s.label)) return;
      out.say("  {:<34} {} is {:.2f}x the CPU's speed\n", s.name, device.str(), cpu_ms[s.label] / ms);
      out.measure("training_speedup_over_cpu", {{"size", s.label}, {"device", device.str()}}, cpu_ms[s.label] / ms,
                  "ratio");
    });
#ifdef QKV_WITH_CUDA
  if (std::any_of(o.devices.begin(), o.devices.end(),
                  [](const auto& d) { return Device::parse(d).type == DeviceType::CUDA; }))
    bench_cuda_gemm(4096, 10, out);
#endif
}

}  // namespace qkv::app
