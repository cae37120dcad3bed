// framework/random.cpp — Generator (mt19937_64 plus hand-written transforms, so results do
// not depend on the standard library's distributions) and random tensor creation.
#include "random.h"

#include <cstring>
#include <sstream>
#include <stdexcept>

#include <cmath>
#include <vector>

namespace qkv {

void Mt19937_64::seed(uint64_t seed) {
  words_[0] = seed;
  for (int i = 1; i < kWords; ++i)
    words_[i] = 6364136223846793005ULL * (words_[i - 1] ^ (words_[i - 1] >> 62)) + static_cast<uint64_t>(i);
  next_ = kWords;
}

// Word i becomes word i + 156 (mod 312) xor the turn of word i's upper 33 bits joined to word i + 1's
// (mod 312) lower 31; the turn is a shift right, xor the matrix's constant where the joined low bit
// is 1. The words are replaced in order, so words past the middle read words already replaced.
void Mt19937_64::twist() {
  constexpr uint64_t kUpper = ~uint64_t{0} << 31, kLower = ~kUpper, kMatrix = 0xB5026F5AA96619E9ULL;
  const auto turn = [&](int i, int next, int far) {
    const uint64_t joined = (words_[i] & kUpper) | (words_[next] & kLower);
    words_[i] = words_[far] ^ (joined >> 1) ^ ((0 - (joined & 1)) & kMatrix);
  };
  for (int i = 0; i < kWords - kMiddle; ++i) turn(i, i + 1, i + kMiddle);
  for (int i = kWords - kMiddle; i < kWords - 1; ++i) turn(i, i + 1, i + kMiddle - kWords);
  turn(kWords - 1, 0, kMiddle - 1);
  next_ = 0;
}

std::ostream& operator<<(std::ostream& out, const Mt19937_64& e) {
  for (uint64_t word : e.words_) out << word << ' ';
  return out << e.next_;
}

std::istream& operator>>(std::istream& in, Mt19937_64& e) {
  Mt19937_64 read;
  for (uint64_t& word : read.words_) in >> word;
  in >> read.next_;
  if (in && (read.next_ < 0 || read.next_ > Mt19937_64::kWords)) in.setstate(std::ios::failbit);
  if (in) e = read;
  return in;
}

double Generator::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u1 = uniform();
  while (u1 <= 0.0) u1 = uniform();
  const double u2 = uniform();
  const double radius = std::sqrt(-2.0 * std::log(u1));
  const double angle = 2.0 * M_PI * u2;
  spare_ = radius * std::sin(angle);
  has_spare_ = true;
  return radius * std::cos(angle);
}

uint64_t Generator::below(uint64_t n) {
  if (n == 0) return 0;
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;  // reject the biased tail
  uint64_t x = engine_();
  while (x >= limit) x = engine_();
  return x % n;
}

Tensor randn(const Shape& shape, Generator& gen, DType dtype, Device device, double mean, double std) {
  std::vector<double> values(static_cast<size_t>(shape_numel(shape)));
  for (double& v : values) v = mean + std * gen.normal();
  return Tensor::from_vector(values, shape, dtype, device);
}

Tensor rand_uniform(const Shape& shape, Generator& gen, double low, double high, DType dtype, Device device) {
  std::vector<double> values(static_cast<size_t>(shape_numel(shape)));
  for (double& v : values) v = low + (high - low) * gen.uniform();
  return Tensor::from_vector(values, shape, dtype, device);
}

std::string Generator::state() const {
  std::ostringstream out;
  uint64_t spare_bits = 0;
  std::memcpy(&spare_bits, &spare_, sizeof spare_bits);
  out << engine_ << ' ' << (has_spare_ ? 1 : 0) << ' ' << spare_bits;
  return out.str();
}

void Generator::set_state(const std::string& text) {
  std::istringstream in(text);
  Mt19937_64 engine;
  int has_spare = 0;
  uint64_t spare_bits = 0;
  in >> engine >> has_spare >> spare_bits;
  if (!in || (has_spare != 0 && has_spare != 1)) throw std::runtime_error("random generator state is malformed");
  engine_ = engine;
  has_spare_ = has_spare == 1;
  std::memcpy(&spare_, &spare_bits, sizeof spare_);
}

}  // namespace qkv
