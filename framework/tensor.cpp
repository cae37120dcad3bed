// framework/tensor.cpp — Tensor creation, metadata, host copies and device/dtype moves.
// Differentiable maths lives in ops_*.cpp; the backward engine in autograd.cpp.
#include "tensor.h"

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cstring>
#include <stdexcept>

#include "autograd.h"
#include "backend.h"
#include "text_util.h"

namespace qkv {

namespace {
std::atomic<int64_t> host_read_count{0};
std::atomic<int64_t> made_tensors{0}, made_storages{0}, made_storage_bytes{0};
}  // namespace

int64_t host_reads() { return host_read_count.load(); }

MadeCounts made_counts() {
  return {made_tensors.load(std::memory_order_relaxed), made_storages.load(std::memory_order_relaxed),
          made_storage_bytes.load(std::memory_order_relaxed)};
}

size_t dtype_size(DType dtype) { return dtype == DType::F32 ? 4 : 8; }  // F64 and I64: 8

std::string dtype_name(DType dtype) { return std::array{"float32", "float64", "int64"}[static_cast<size_t>(dtype)]; }

std::string Device::str() const { return type == DeviceType::CPU ? "cpu" : fmt::format("cuda:{}", index); }

Device Device::parse(const std::string& text) {
  if (text == "cpu") return cpu();
  if (text == "cuda") return cuda(0);
  if (text.rfind("cuda:", 0) == 0 && text.size() > 5) {
    const std::string digits = text.substr(5);
    if (digits.find_first_not_of("0123456789") == std::string::npos && digits.size() < 6)
      return cuda(std::stoi(digits));
  }
  throw std::runtime_error(fmt::format("unknown device '{}' (expected cpu, cuda or cuda:N)", text));
}

std::string shape_str(const Shape& shape) { return "(" + dims_for_message(shape) + (shape.size() == 1 ? ",)" : ")"); }

int64_t shape_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) throw std::runtime_error("negative dimension in shape " + shape_str(shape));
    n *= d;
  }
  return n;
}

Storage::Storage(size_t nbytes_, Device device_) : nbytes(nbytes_), device(device_) {
  data = backend_for(device).allocate(nbytes == 0 ? 1 : nbytes);
  made_storages.fetch_add(1, std::memory_order_relaxed);
  made_storage_bytes.fetch_add(static_cast<int64_t>(nbytes), std::memory_order_relaxed);
}

Storage::~Storage() {
  if (data) backend_for(device).release(data);
}

Tensor make_tensor(std::shared_ptr<Storage> storage, int64_t offset, Shape shape, DType dtype) {
  auto impl = std::make_shared<TensorImpl>();
  made_tensors.fetch_add(1, std::memory_order_relaxed);
  impl->storage = std::move(storage);
  impl->offset = offset;
  impl->shape = std::move(shape);
  impl->dtype = dtype;
  return Tensor(std::move(impl));
}

static const TensorImpl& need(const std::shared_ptr<TensorImpl>& impl) {
  if (!impl) throw std::runtime_error("use of an undefined tensor");
  return *impl;
}

Tensor Tensor::empty(const Shape& shape, DType dtype, Device device) {
  const int64_t n = shape_numel(shape);
  auto storage = std::make_shared<Storage>(static_cast<size_t>(n) * dtype_size(dtype), device);
  return make_tensor(std::move(storage), 0, shape, dtype);
}

Tensor Tensor::full(const Shape& shape, double value, DType dtype, Device device) {
  Tensor t = empty(shape, dtype, device);
  backend_for(device).fill(dtype, t.data_ptr(), t.numel(), value);
  return t;
}

Tensor Tensor::zeros(const Shape& shape, DType dtype, Device device) { return full(shape, 0.0, dtype, device); }
Tensor Tensor::ones(const Shape& shape, DType dtype, Device device) { return full(shape, 1.0, dtype, device); }
Tensor Tensor::scalar(double value, DType dtype, Device device) { return full({}, value, dtype, device); }

Tensor Tensor::arange(int64_t n, DType dtype, Device device) {
  if (n < 0) throw std::runtime_error(fmt::format("arange: n must be >= 0, got {}", n));
  if (dtype == DType::I64) {
    std::vector<int64_t> ids(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) ids[i] = i;
    return from_ids(ids, {n}, device);
  }
  std::vector<double> values(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) values[i] = static_cast<double>(i);
  return from_vector(values, {n}, dtype, device);
}

Tensor Tensor::from_vector(const std::vector<double>& values, const Shape& shape, DType dtype, Device device) {
  if (static_cast<int64_t>(values.size()) != shape_numel(shape))
    throw std::runtime_error(
        fmt::format("from_vector: {} values do not fill shape {}", values.size(), shape_str(shape)));
  if (dtype == DType::I64) throw std::runtime_error("from_vector: use from_ids for int64");
  Tensor host = empty(shape, dtype, Device::cpu());
  if (dtype == DType::F64) {
    if (!values.empty())  // an empty vector's data() may be null, which memcpy must not get
      std::memcpy(host.data_ptr(), values.data(), values.size() * sizeof(double));
  } else {
    float* out = host.data<float>();
    for (size_t i = 0; i < values.size(); ++i) out[i] = static_cast<float>(values[i]);
  }
  return device == Device::cpu() ? host : host.to(device);
}

Tensor Tensor::from_ids(const std::vector<int64_t>& ids, const Shape& shape, Device device) {
  if (static_cast<int64_t>(ids.size()) != shape_numel(shape))
    throw std::runtime_error(fmt::format("from_ids: {} ids do not fill shape {}", ids.size(), shape_str(shape)));
  Tensor host = empty(shape, DType::I64, Device::cpu());
  if (!ids.empty()) std::memcpy(host.data_ptr(), ids.data(), ids.size() * sizeof(int64_t));
  return device == Device::cpu() ? host : host.to(device);
}

const Shape& Tensor::shape() const { return need(impl_).shape; }

int64_t Tensor::size(int64_t axis) const {
  const int64_t rank = dim();
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw std::runtime_error(fmt::format("axis {} out of range for shape {}", axis, shape_str(shape())));
  return shape()[a];
}

int64_t Tensor::numel() const { return shape_numel(shape()); }
DType Tensor::dtype() const { return need(impl_).dtype; }
Device Tensor::device() const { return need(impl_).storage->device; }

std::string Tensor::describe() const {
  if (!impl_) return "undefined tensor";
  return fmt::format("{} {} on {}", dtype_name(dtype()), shape_str(shape()), device().str());
}

void* Tensor::data_ptr() const {
  const TensorImpl& t = need(impl_);
  return static_cast<char*>(t.storage->data) + t.offset * static_cast<int64_t>(dtype_size(t.dtype));
}

const std::shared_ptr<Storage>& Tensor::storage() const { return need(impl_).storage; }
int64_t Tensor::offset() const { return need(impl_).offset; }

std::vector<double> Tensor::to_vector() const {
  const int64_t n = numel();
  std::vector<double> out(static_cast<size_t>(n));
  if (n == 0) return out;
  if (device() == Device::cpu()) ++host_read_count;  // to() counts reads from a device
  Tensor host = device() == Device::cpu() ? *this : to(Device::cpu());
  backend_for(Device::cpu()).cast(dtype(), host.data_ptr(), DType::F64, out.data(), n);
  return out;
}

std::vector<int64_t> Tensor::to_ids() const {
  if (dtype() != DType::I64) throw std::runtime_error("to_ids: tensor is " + dtype_name(dtype()) + ", expected int64");
  std::vector<int64_t> out(static_cast<size_t>(numel()));
  if (out.empty()) return out;
  if (device() == Device::cpu()) ++host_read_count;  // to() counts reads from a device
  Tensor host = device() == Device::cpu() ? *this : to(Device::cpu());
  std::memcpy(out.data(), host.data_ptr(), out.size() * sizeof(int64_t));
  return out;
}

double Tensor::item() const {
  if (numel() != 1)
    throw std::runtime_error("item: tensor has shape " + shape_str(shape()) + ", expected exactly one element");
  return to_vector()[0];
}

Tensor Tensor::to(Device target) const {
  const size_t nbytes = static_cast<size_t>(numel()) * dtype_size(dtype());
  Tensor out = empty(shape(), dtype(), target);
  if (nbytes == 0) return out;
  const Device from = device();
  if (from == target) {
    backend_for(from).copy(out.data_ptr(), data_ptr(), nbytes);
  } else if (from == Device::cpu()) {
    backend_for(target).copy_from_host(out.data_ptr(), data_ptr(), nbytes);
  } else if (target == Device::cpu()) {
    ++host_read_count;
    backend_for(from).copy_to_host(out.data_ptr(), data_ptr(), nbytes);
  } else {
    return to(Device::cpu()).to(target);
  }
  return out;
}

Tensor Tensor::to(DType target) const {
  Tensor out = empty(shape(), target, device());
  backend_for(device()).cast(dtype(), data_ptr(), target, out.data_ptr(), numel());
  return out;
}

Tensor Tensor::clone() const { return to(device()); }

Tensor Tensor::detach() const {
  const TensorImpl& t = need(impl_);
  return make_tensor(t.storage, t.offset, t.shape, t.dtype);
}

bool Tensor::requires_grad() const { return need(impl_).requires_grad; }

Tensor& Tensor::set_requires_grad(bool flag) {
  need(impl_);
  if (impl_->grad_fn) throw std::runtime_error("set_requires_grad: only leaf tensors can change requires_grad");
  if (flag && dtype() == DType::I64)
    throw std::runtime_error("set_requires_grad: int64 tensors cannot require gradients");
  impl_->requires_grad = flag;
  return *this;
}

bool Tensor::is_leaf() const { return need(impl_).grad_fn == nullptr; }

const Tensor& Tensor::grad() const { return need(impl_).grad; }
void Tensor::set_grad(const Tensor& grad) { need(impl_), impl_->grad = grad; }
void Tensor::zero_grad() { need(impl_), impl_->grad = Tensor(); }
std::shared_ptr<Node> Tensor::grad_fn() const { return need(impl_).grad_fn; }
void Tensor::set_grad_fn(std::shared_ptr<Node> node) {
  need(impl_);
  impl_->grad_fn = std::move(node);
  impl_->requires_grad = impl_->grad_fn != nullptr || impl_->requires_grad;
}

void Tensor::backward(const Tensor& grad_output) const { run_backward(*this, grad_output); }

Tensor Tensor::view_as_shape(const Shape& new_shape) const {
  const TensorImpl& t = need(impl_);
  if (shape_numel(new_shape) != shape_numel(t.shape))
    throw std::runtime_error(fmt::format("view: cannot view shape {} ({} elements) as {} ({} elements)",
                                         shape_str(t.shape), shape_numel(t.shape), shape_str(new_shape),
                                         shape_numel(new_shape)));
  return make_tensor(t.storage, t.offset, new_shape, t.dtype);
}

Tensor Tensor::narrow_rows(int64_t begin, int64_t end) const {
  const TensorImpl& t = need(impl_);
  if (t.shape.empty() || begin < 0 || end < begin || end > t.shape[0])
    throw std::runtime_error(
        fmt::format("narrow_rows: rows [{}, {}) out of range for shape {}", begin, end, shape_str(t.shape)));
  Shape s = t.shape;
  s[0] = end - begin;
  const int64_t row = s.size() > 1 ? shape_numel(Shape(s.begin() + 1, s.end())) : 1;
  return make_tensor(t.storage, t.offset + begin * row, s, t.dtype);
}

void Tensor::copy_(const Tensor& source) {
  if (source.shape() != shape() || source.dtype() != dtype())
    throw std::runtime_error("copy_: source " + source.describe() + " does not match " + describe());
  const size_t nbytes = static_cast<size_t>(numel()) * dtype_size(dtype());
  if (nbytes == 0) return;
  const Tensor moved = source.device() == device() ? source : source.to(device());
  backend_for(device()).copy(data_ptr(), moved.data_ptr(), nbytes);
}

void Tensor::fill_(double value) { backend_for(device()).fill(dtype(), data_ptr(), numel(), value); }

// this = this op other in place, other broadcast to this shape (checked by the caller).
// Elementwise, each entry read before its own write: the backend's `out` may be its `a`.
static void binary_in_place(BinaryOp op, Tensor& self, const Tensor& other) {
  if (self.numel() == 0) return;
  backend_for(self.device())
      .binary(op, self.dtype(), self.data_ptr(), contiguous_strides(self.shape()), other.data_ptr(),
              broadcast_strides(other.shape(), self.shape()), self.data_ptr(), self.shape());
}

void Tensor::mul_(const Tensor& factor) {
  bool fits = factor.dtype() == dtype() && factor.device() == device() && factor.dim() <= dim();
  for (int64_t i = 1; fits && i <= factor.dim(); ++i) {
    const int64_t f = factor.shape()[factor.dim() - i];
    fits = f == 1 || f == shape()[dim() - i];
  }
  if (!fits) throw std::runtime_error("mul_: factor " + factor.describe() + " does not broadcast to " + describe());
  binary_in_place(BinaryOp::Mul, *this, factor);
}

void Tensor::add_(const Tensor& other) {
  if (other.shape() != shape() || other.dtype() != dtype() || other.device() != device())
    throw std::runtime_error("add_: " + other.describe() + " does not match " + describe());
  binary_in_place(BinaryOp::Add, *this, other);
}

void Tensor::write_at_(int64_t axis, int64_t begin, const Tensor& source) {
  const int64_t rank = dim();
  const int64_t a = axis < 0 ? axis + rank : axis;
  Shape expect = shape();
  bool fits = a >= 0 && a < rank && source.dim() == rank && source.dtype() == dtype() && source.device() == device() &&
              begin >= 0;
  if (fits) {
    expect[a] = source.shape()[a];
    fits = source.shape() == expect && begin + source.shape()[a] <= shape()[a];
  }
  if (!fits)
    throw std::runtime_error(fmt::format("write_at_: cannot write {} at {} along axis {} of {}", source.describe(),
                                         begin, axis, describe()));
  if (source.numel() == 0) return;
  const Strides strides = contiguous_strides(shape());
  char* base = static_cast<char*>(data_ptr()) + begin * strides[a] * static_cast<int64_t>(dtype_size(dtype()));
  backend_for(device()).strided_copy(dtype(), source.data_ptr(), contiguous_strides(source.shape()), base, strides,
                                     source.shape());
}

}  // namespace qkv
