// framework/random.cpp — Generator (mt19937_64 plus hand-written transforms, so results do
// not depend on the standard library's distributions) and random tensor creation.
#include "random.h"

#include <cstring>
#include <sstream>
#include <stdexcept>

#include <cmath>
#include <vector>

namespace qkv {

double Generator::uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

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
  std::mt19937_64 engine;
  int has_spare = 0;
  uint64_t spare_bits = 0;
  in >> engine >> has_spare >> spare_bits;
  if (!in || (has_spare != 0 && has_spare != 1)) throw std::runtime_error("random generator state is malformed");
  engine_ = engine;
  has_spare_ = has_spare == 1;
  std::memcpy(&spare_, &spare_bits, sizeof spare_);
}

}  // namespace qkv
