// train/experiments/scaling/scaling.cpp — `qkv scaling`: the tutorial's sqrt(d_k) section reproduced with
// qkv. Prints the variance, softmax-saturation and gradient tables and writes DIR/scaling.png (two
// panels). The sampling is scaling_experiment.cpp.
#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "train/experiments/scaling/scaling.h"
#include "tools/render/render.h"

namespace qkv::app {

namespace fs = std::filesystem;

namespace {

// "[1.0, 1.2, 0.9]": the values with `decimals` digits after the point.
std::string format_values(const std::vector<double>& v, int decimals) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += fmt::format("{}{:.{}f}", i ? ", " : "", v[i], decimals);
  return s + "]";
}

void print_tables(const models::ScalingResult& r, int64_t pairs, int64_t draws, int64_t queries, int64_t keys) {
  fmt::print("\nStep 1 — dot products of high-dimensional vectors have high variance\n");
  fmt::print("({} sampled unit-Gaussian (q, k) pairs per row; SE = standard error of Var/d)\n\n", pairs);
  fmt::print("{:>6}  {:>10}  {:>10}  {:>15}  {:>7}\n", "d", "Var(q·k)", "Var(q·k)/d", "Var(q·k/sqrt d)", "SE");
  for (const auto& v : r.variance)
    fmt::print("{:>6}  {:>10.3f}  {:>10.4f}  {:>15.4f}  {:>7.4f}\n", v.d, v.var_raw,
               v.var_raw / static_cast<double>(v.d), v.var_scaled, v.se_ratio);

  fmt::print("\nStep 2 — high variance saturates softmax\n\n");
  const std::string a = fmt::format("softmax({})", format_values(r.soft.input, 1));
  const std::string b = fmt::format("softmax({})", format_values(r.saturated.input, 1));
  const size_t w = std::max(a.size(), b.size());
  fmt::print("{:<{}} = {}    <- soft, informative\n", a, w, format_values(r.soft.output, 3));
  fmt::print("{:<{}} = {}   <- nearly one-hot\n", b, w, format_values(r.saturated.output, 3));

  fmt::print("\nStep 3 — saturated softmax kills gradients\n");
  fmt::print("(gradient norm reaching one query's scores, ||dL/d logits_i||, L = sum(softmax(logits) * G),\n");
  fmt::print(" logits = Q K^T (unscaled) or Q K^T / sqrt d (scaled), Q: {} x d, K: {} x d, G fixed;\n", queries, keys);
  fmt::print(" over {} random draws x {} queries: median = a typical query, mean = pulled up by near-ties;\n", draws,
             queries);
  fmt::print(" max w = mean largest attention weight, 1 = one-hot, {:.4f} = uniform)\n\n",
             1.0 / static_cast<double>(keys));
  fmt::print("{:>6}  {:>13}  {:>13}  {:>10}  {:>10}  {:>8}  {:>8}\n", "", "median grad", "median grad", "mean grad",
             "mean grad", "max w", "max w");
  fmt::print("{:>6}  {:>13}  {:>13}  {:>10}  {:>10}  {:>8}  {:>8}\n", "d", "unscaled", "scaled", "unscaled", "scaled",
             "unscaled", "scaled");
  for (const auto& g : r.gradient)
    fmt::print("{:>6}  {:>13.3e}  {:>13.4f}  {:>10.4f}  {:>10.4f}  {:>8.3f}  {:>8.3f}\n", g.d, g.grad_unscaled,
               g.grad_scaled, g.grad_mean_unscaled, g.grad_mean_scaled, g.max_weight_unscaled, g.max_weight_scaled);
  fmt::print("\n");
}

render::Image plot(const models::ScalingResult& r) {
  const auto panel = [](std::string title, std::string y_label) {  // log-log, 720 x 480, against d
    render::LinePlotSpec p;
    p.title = std::move(title), p.x_label = "head width d (log scale)", p.y_label = std::move(y_label);
    p.log_x = p.log_y = true;
    p.width = 720, p.height = 480;
    return p;
  };
  render::LinePlotSpec var =
      panel(fmt::format("Score variance vs head width d\n({} unit-Gaussian (q, k) pairs per d; dashed = theory)",
                        r.variance.empty() ? 0 : r.variance[0].n),
            "sample variance of the score (log scale)");
  const render::RGB grey = {40, 40, 40};
  render::Series raw{"Var(q·k), unscaled", {}, {}, render::tab10(3), false, true};
  render::Series scaled{"Var(q·k / √d), scaled", {}, {}, render::tab10(0), false, true};
  render::Series theory_raw{"theory: Var = d", {}, {}, grey, true, false};
  render::Series theory_scaled{"theory: Var = 1", {}, {}, grey, true, false};
  for (const auto& v : r.variance) {
    const double d = static_cast<double>(v.d);
    raw.x.push_back(d), raw.y.push_back(v.var_raw);
    scaled.x.push_back(d), scaled.y.push_back(v.var_scaled);
    theory_raw.x.push_back(d), theory_raw.y.push_back(d);
    theory_scaled.x.push_back(d), theory_scaled.y.push_back(1.0);
  }
  var.series = {raw, scaled, theory_raw, theory_scaled};  // theory drawn on top

  render::LinePlotSpec grad =
      panel("Gradient reaching one query's scores vs d\n(softmax over 16 keys; solid = median, dashed = mean)",
            "||dL/d scores|| per query (log scale)");
  render::Series g_raw{"unscaled, median", {}, {}, render::tab10(3), false, true};
  render::Series g_scaled{"scaled by 1/√d, median", {}, {}, render::tab10(0), false, true};
  render::Series m_raw{"unscaled, mean", {}, {}, render::tab10(3), true, false};
  render::Series m_scaled{"scaled by 1/√d, mean", {}, {}, render::tab10(0), true, false};
  for (const auto& g : r.gradient) {
    const double d = static_cast<double>(g.d);
    g_raw.x.push_back(d), g_raw.y.push_back(g.grad_unscaled);
    g_scaled.x.push_back(d), g_scaled.y.push_back(g.grad_scaled);
    m_raw.x.push_back(d), m_raw.y.push_back(g.grad_mean_unscaled);
    m_scaled.x.push_back(d), m_scaled.y.push_back(g.grad_mean_scaled);
  }
  grad.series = {g_raw, g_scaled, m_raw, m_scaled};

  return render::hstack({render::render_line_plot(var), render::render_line_plot(grad)}, 24);
}

}  // namespace

void run_scaling_command(const ScalingCommandOptions& o) {
  std::error_code ec;
  const models::ScalingOptions& so = o.run;
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const models::ScalingResult r = models::run_scaling(so, [&](const char* part, int64_t d) {
    fmt::print("  {:<8} d = {:>5} done  ({:.1f}s)\n", part, d, elapsed());
    std::fflush(stdout);
  });
  print_tables(r, so.pairs, so.grad_draws, so.queries, so.keys);
  const render::Image image = plot(r);

  // Only now, with every number computed and the image rendered, touch the file system.
  fs::create_directories(o.out, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create --out '{}': {}", o.out, ec.message()));
  const std::string path = (fs::path(o.out) / "scaling.png").string();
  render::write_png(image, path);
  fmt::print("wrote {}  ({:.1f}s total)\n", path, elapsed());
}

}  // namespace qkv::app
