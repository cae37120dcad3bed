// train/experiments/probe/sense_probe.cpp — the sense probe (see sense_probe.h): standardise, fit a logistic regression
// by Newton's method with a Cholesky solve, score the held-out half; then the same per layer and word.
#include "sense_probe.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace qkv::models {

namespace {

// Solves A x = b in place for a symmetric positive definite A (n x n, row-major): A becomes its
// Cholesky factor, b becomes x.
void cholesky_solve(std::vector<double>& A, std::vector<double>& b, size_t n) {
  for (size_t j = 0; j < n; ++j) {
    double d = A[j * n + j];
    for (size_t k = 0; k < j; ++k) d -= A[j * n + k] * A[j * n + k];
    if (d <= 0)
      throw std::runtime_error(fmt::format("sense probe: the Hessian is not positive definite (pivot {})", j));
    A[j * n + j] = std::sqrt(d);
    for (size_t i = j + 1; i < n; ++i) {
      double v = A[i * n + j];
      for (size_t k = 0; k < j; ++k) v -= A[i * n + k] * A[j * n + k];
      A[i * n + j] = v / A[j * n + j];
    }
  }
  for (size_t i = 0; i < n; ++i) {  // L y = b
    for (size_t k = 0; k < i; ++k) b[i] -= A[i * n + k] * b[k];
    b[i] /= A[i * n + i];
  }
  for (size_t i = n; i-- > 0;) {  // L^T x = y
    for (size_t k = i + 1; k < n; ++k) b[i] -= A[k * n + i] * b[k];
    b[i] /= A[i * n + i];
  }
}

double sigmoid(double z) { return z >= 0 ? 1 / (1 + std::exp(-z)) : std::exp(z) / (1 + std::exp(z)); }

}  // namespace

double probe_accuracy(const std::vector<std::vector<double>>& features, const std::vector<int>& labels,
                      const std::vector<bool>& fit, double l2) {
  const size_t N = features.size();
  if (N == 0 || labels.size() != N || fit.size() != N)
    throw std::runtime_error(
        fmt::format("sense probe: {} feature rows, {} labels and {} fit flags", N, labels.size(), fit.size()));
  const size_t D = features[0].size(), P = D + 1;  // weights, then the bias
  // Standardise with the fitted half's statistics; a constant feature becomes 0.
  std::vector<double> mean(D, 0.0), scale(D, 0.0);
  size_t fitted = 0;
  for (size_t i = 0; i < N; ++i) {
    if (features[i].size() != D) throw std::runtime_error("sense probe: feature rows of different lengths");
    if (!fit[i]) continue;
    ++fitted;
    for (size_t d = 0; d < D; ++d) mean[d] += features[i][d];
  }
  if (fitted == 0 || fitted == N) throw std::runtime_error("sense probe: needs rows to fit and rows to score");
  for (double& m : mean) m /= static_cast<double>(fitted);
  for (size_t i = 0; i < N; ++i)
    if (fit[i])
      for (size_t d = 0; d < D; ++d) scale[d] += (features[i][d] - mean[d]) * (features[i][d] - mean[d]);
  for (double& s : scale)
    s = std::sqrt(s / static_cast<double>(fitted)) > 1e-12 ? 1 / std::sqrt(s / static_cast<double>(fitted)) : 0.0;
  auto row = [&](size_t i) {
    std::vector<double> x(P, 1.0);
    for (size_t d = 0; d < D; ++d) x[d] = (features[i][d] - mean[d]) * scale[d];
    return x;
  };
  // Newton's method on the mean log loss + l2/2 |w|^2 (the bias is not penalised).
  std::vector<double> w(P, 0.0);
  auto probability = [&](const std::vector<double>& x) {
    double z = 0;
    for (size_t k = 0; k < P; ++k) z += w[k] * x[k];
    return sigmoid(z);
  };
  for (int iteration = 0; iteration < 50; ++iteration) {
    std::vector<double> grad(P, 0.0), hess(P * P, 0.0);
    for (size_t i = 0; i < N; ++i) {
      if (!fit[i]) continue;
      const std::vector<double> x = row(i);
      const double p = probability(x), r = p * (1 - p);
      for (size_t a = 0; a < P; ++a) {
        grad[a] += (p - labels[i]) * x[a];
        for (size_t b = 0; b <= a; ++b) hess[a * P + b] += r * x[a] * x[b];
      }
    }
    double step_size = 0;
    for (size_t a = 0; a < P; ++a) {
      grad[a] = grad[a] / static_cast<double>(fitted) + (a < D ? l2 * w[a] : 0.0);
      for (size_t b = 0; b <= a; ++b) hess[b * P + a] = hess[a * P + b] = hess[a * P + b] / static_cast<double>(fitted);
      hess[a * P + a] += a < D ? l2 : 1e-9;
    }
    std::vector<double> step = grad;
    cholesky_solve(hess, step, P);
    for (size_t k = 0; k < P; ++k) w[k] -= step[k], step_size = std::max(step_size, std::fabs(step[k]));
    if (step_size < 1e-10) break;
  }
  size_t right = 0, scored = 0;
  for (size_t i = 0; i < N; ++i) {
    if (fit[i]) continue;
    right += (probability(row(i)) > 0.5 ? 1 : 0) == labels[i];
    ++scored;
  }
  return static_cast<double>(right) / static_cast<double>(scored);
}

double SenseProbeReport::mean(size_t layer) const {
  const auto& a = accuracy.at(layer);
  return a.empty() ? 0.0 : std::accumulate(a.begin(), a.end(), 0.0) / static_cast<double>(a.size());
}

SenseProbeReport probe_senses(Translator& model, const std::vector<data::SenseWord>& words,
                              const data::Vocab& english_vocab) {
  SenseProbeReport report;
  report.accuracy.assign(model.layers() + 1, {});
  for (const data::SenseWord& w : words) {
    std::vector<std::vector<std::string>> sentences;
    std::vector<int64_t> positions;
    std::vector<int> labels;
    std::vector<bool> fit;
    for (const data::SenseExample& e : w.examples) {
      if (static_cast<int64_t>(e.english.size()) > model.config().layout.max_source) continue;
      sentences.push_back(e.english), positions.push_back(e.position), labels.push_back(e.sense);
      fit.push_back(e.probe_train);
    }
    if (std::count(fit.begin(), fit.end(), true) == 0 || std::count(fit.begin(), fit.end(), false) == 0) continue;
    const auto states = source_word_states(model, sentences, positions, english_vocab);
    report.words.push_back(w.word);
    report.examples.push_back(static_cast<int64_t>(sentences.size()));
    for (size_t l = 0; l < states.size(); ++l) report.accuracy[l].push_back(probe_accuracy(states[l], labels, fit));
  }
  return report;
}

}  // namespace qkv::models
