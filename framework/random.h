// framework/random.h — the seeded random generator behind init, dropout and sampling.
// The same seed always gives the same numbers on every machine (no std::*_distribution).
#pragma once

#include <array>
#include <cstdint>
#include <iosfwd>
#include <string>

#include "tensor.h"

namespace qkv {

// MT19937-64 (Matsumoto and Nishimura): the numbers, the seeding and the state text of
// std::mt19937_64, with the twist written without a branch on each word's low bit (the standard
// library's twist, which branches there, was 8.7% of a training run's samples: dropout draws about
// two million numbers a step).
class Mt19937_64 {
 public:
  static constexpr int kWords = 312, kMiddle = 156;
  explicit Mt19937_64(uint64_t seed = 5489) { this->seed(seed); }
  void seed(uint64_t seed);
  uint64_t operator()() {
    if (next_ >= kWords) twist();
    uint64_t z = words_[next_++];
    z ^= (z >> 29) & 0x5555555555555555ULL;
    z ^= (z << 17) & 0x71D67FFFEDA60000ULL;
    z ^= (z << 37) & 0xFFF7EEE000000000ULL;
    return z ^ (z >> 43);
  }
  // As std::mt19937_64 writes and reads itself: the 312 words and the position, spaces between.
  friend std::ostream& operator<<(std::ostream& out, const Mt19937_64& e);
  friend std::istream& operator>>(std::istream& in, Mt19937_64& e);

 private:
  void twist();
  std::array<uint64_t, kWords> words_{};
  int next_ = kWords;
};

class Generator {
 public:
  explicit Generator(uint64_t seed = 0) : engine_(seed) {}
  void seed(uint64_t seed) { engine_.seed(seed); }
  // [0, 1), 53 random bits; inline, so that a loop of draws (dropout's mask) inlines the engine too
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double normal();  // standard normal, Box-Muller
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
  Mt19937_64 engine_;
  bool has_spare_ = false;
  double spare_ = 0.0;
};

Tensor randn(const Shape& shape, Generator& gen, DType dtype = DType::F32, Device device = Device::cpu(),
             double mean = 0.0, double std = 1.0);
Tensor rand_uniform(const Shape& shape, Generator& gen, double low, double high, DType dtype = DType::F32,
                    Device device = Device::cpu());

}  // namespace qkv
