// train/experiments/tutorial/tutorial_example.h — the tutorial's running example ("money bank grows"): parameter-free
// self-attention Y = softmax(E E^T / sqrt d) E, computed with the framework's own ops.
#pragma once

#include <string>
#include <vector>

#include "framework/tensor.h"

namespace qkv::models {

struct TutorialExample {
  std::vector<std::string> tokens;  // money, bank, grows
  Tensor E;                         // (T, D) static embeddings
  Tensor S;                         // (T, T) = E E^T
  Tensor S_scaled;                  // (T, T) = S / sqrt(D)
  Tensor W;                         // (T, T) row softmax of S_scaled
  Tensor Y;                         // (T, D) = W E, the contextual embeddings
  double cos_before = 0;            // cos(e_bank, e_money)
  double cos_after = 0;             // cos(y_bank, y_money)
};

double cosine_similarity(const Tensor& a, const Tensor& b);  // two (D,) vectors
TutorialExample run_tutorial_example(DType dtype = DType::F64);

}  // namespace qkv::models
