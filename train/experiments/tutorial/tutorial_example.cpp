// train/experiments/tutorial/tutorial_example.cpp — computes the tutorial's worked example step by step with qkv ops.
#include "tutorial_example.h"

#include <cmath>

#include "framework/ops.h"

namespace qkv::models {

double cosine_similarity(const Tensor& a, const Tensor& b) {
  const double dot = sum(mul(a, b)).item();
  return dot / (std::sqrt(sum(mul(a, a)).item()) * std::sqrt(sum(mul(b, b)).item()));
}

TutorialExample run_tutorial_example(DType dtype) {
  TutorialExample ex;
  ex.tokens = {"money", "bank", "grows"};
  ex.E = Tensor::from_vector({1, 0, 1, 0,   // e_money
                              1, 1, 0, 0,   // e_bank
                              0, 1, 1, 1},  // e_grows
                             {3, 4}, dtype);
  const double d = static_cast<double>(ex.E.size(1));
  ex.S = matmul(ex.E, ex.E, false, true);  // (T, D) @ (T, D)^T -> (T, T)
  ex.S_scaled = mul_scalar(ex.S, 1.0 / std::sqrt(d));
  ex.W = softmax(ex.S_scaled);  // rows sum to 1
  ex.Y = matmul(ex.W, ex.E);    // (T, T) @ (T, D) -> (T, D)
  ex.cos_before = cosine_similarity(slice(ex.E, 0, 1, 2), slice(ex.E, 0, 0, 1));
  ex.cos_after = cosine_similarity(slice(ex.Y, 0, 1, 2), slice(ex.Y, 0, 0, 1));
  return ex;
}

}  // namespace qkv::models
