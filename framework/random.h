// framework/random.h — the seeded random generator behind init, dropout and sampling.
// The same seed always gives the same numbers on every machine (no std::*_distribution).
#pragma once

#include <cstdint>
#include <random>
#include <string>

#include "tensor.h"

namespace qkv {

class Generator {
 public:
  explicit Generator(uint64_t seed = 0) : engine_(seed) {}
  void seed(uint64_t seed) { engine_.seed(seed); }
  double uniform();  // [0, 1), 53 random bits
  double normal();   // standard normal, Box-Muller
  uint64_t next_u64() { return engine_(); }
  uint64_t below(uint64_t n);  // uniform integer in [0, n)
  // One seed from two numbers (splitmix64's finaliser over a and b): keys a generator by, say, a
  // step and a row, so that whoever draws for that row draws the same.
  static uint64_t mixed_seed(uint64_t a, uint64_t b) {
    uint64_t z = a * 0x9E3779B97F4A7C15ULL + b + 0x632BE59BD9B4E019ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // The whole state as text (engine, spare normal), and back: a run resumed from it draws exactly
  // the numbers the uninterrupted run would have. set_state throws on text it did not write.
  std::string state() const;
  void set_state(const std::string& text);

 private:
  std::mt19937_64 engine_;
  bool has_spare_ = false;
  double spare_ = 0.0;
};

Tensor randn(const Shape& shape, Generator& gen, DType dtype = DType::F32, Device device = Device::cpu(),
             double mean = 0.0, double std = 1.0);
Tensor rand_uniform(const Shape& shape, Generator& gen, double low, double high, DType dtype = DType::F32,
                    Device device = Device::cpu());

}  // namespace qkv
