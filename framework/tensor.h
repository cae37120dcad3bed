// framework/tensor.h — the Tensor handle: shape, dtype, device, shared storage, and autograd fields.
// Tensors are always row-major and contiguous from an element offset into shared storage;
// views (reshape, slices of the leading dim) share storage. Differentiable ops live in ops.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace qkv {

// F32 trains, F64 checks derivatives, I64 holds token ids and indices (never differentiable).
enum class DType { F32, F64, I64 };
size_t dtype_size(DType dtype);
std::string dtype_name(DType dtype);  // "float32", "float64", "int64"

enum class DeviceType { CPU, CUDA };
struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;
  bool operator==(const Device&) const = default;
  std::string str() const;  // "cpu", "cuda:0"
  static Device cpu() { return {DeviceType::CPU, 0}; }
  static Device cuda(int index = 0) { return {DeviceType::CUDA, index}; }
  static Device parse(const std::string& text);  // "cpu", "cuda", "cuda:1"; throws on anything else
};

using Shape = std::vector<int64_t>;
std::string shape_str(const Shape& shape);  // "(2, 3)"
int64_t shape_numel(const Shape& shape);

// A block of device memory. Freed through its device's backend when the last owner drops it.
struct Storage {
  void* data = nullptr;
  size_t nbytes = 0;
  Device device;
  Storage(size_t nbytes, Device device);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
};

struct Node;  // autograd.h
struct TensorImpl;

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor; defined() is false

  // ---- creation (contiguous, fresh storage) ----
  static Tensor empty(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu());
  static Tensor zeros(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu());
  static Tensor ones(const Shape& shape, DType dtype = DType::F32, Device device = Device::cpu());
  static Tensor full(const Shape& shape, double value, DType dtype = DType::F32, Device device = Device::cpu());
  static Tensor arange(int64_t n, DType dtype = DType::F32, Device device = Device::cpu());
  static Tensor from_vector(const std::vector<double>& values, const Shape& shape, DType dtype = DType::F32,
                            Device device = Device::cpu());
  static Tensor from_ids(const std::vector<int64_t>& ids, const Shape& shape, Device device = Device::cpu());
  static Tensor scalar(double value, DType dtype = DType::F32, Device device = Device::cpu());

  // ---- metadata ----
  bool defined() const { return impl_ != nullptr; }
  const Shape& shape() const;
  int64_t dim() const { return static_cast<int64_t>(shape().size()); }
  int64_t size(int64_t axis) const;  // negative axes count from the end
  int64_t numel() const;
  DType dtype() const;
  Device device() const;
  std::string describe() const;  // "float32 (2, 3) on cpu"

  // ---- raw access (for backends, io and tests) ----
  void* data_ptr() const;  // first element of this tensor (storage + offset)
  template <typename T>
  T* data() const {
    return static_cast<T*>(data_ptr());
  }
  const std::shared_ptr<Storage>& storage() const;
  int64_t offset() const;

  // Copies out to host as doubles / int64 (works for any device).
  std::vector<double> to_vector() const;
  std::vector<int64_t> to_ids() const;
  double item() const;  // one-element tensors only

  // ---- device and dtype movement (not differentiable; result is a fresh tensor) ----
  Tensor to(Device device) const;
  Tensor to(DType dtype) const;
  Tensor clone() const;
  Tensor detach() const;  // same storage, no autograd history

  // ---- autograd ----
  bool requires_grad() const;
  Tensor& set_requires_grad(bool flag = true);  // leaves only
  bool is_leaf() const;
  const Tensor& grad() const;  // undefined until a backward reaches this leaf
  void set_grad(const Tensor& grad);
  void zero_grad();  // drops the gradient (like PyTorch's set_to_none=True)
  std::shared_ptr<Node> grad_fn() const;
  void set_grad_fn(std::shared_ptr<Node> node);
  // Runs reverse-mode autograd from this tensor. With no argument the tensor must hold one element.
  void backward(const Tensor& grad_output = Tensor()) const;

  // A view of the same storage with another shape (numel must match). Not recorded by autograd:
  // use ops::reshape for the differentiable version.
  Tensor view_as_shape(const Shape& shape) const;
  // Rows [begin, end) of the leading dimension, sharing storage (not recorded by autograd).
  Tensor narrow_rows(int64_t begin, int64_t end) const;

  // In-place writes used by optimisers, initialisers and decoding caches (never recorded by autograd).
  void copy_(const Tensor& source);
  void fill_(double value);
  // Multiplies every entry by `factor` (same dtype and device, broadcast to this shape, e.g. one
  // element), in place: the same bits as mul(*this, factor), without a new tensor.
  void mul_(const Tensor& factor);
  // this = this + other, elementwise in place (other of this shape, dtype and device); not recorded
  // by autograd. The backward engine accumulates gradients with it.
  void add_(const Tensor& other);
  // `source` into the entries [begin, begin + source.size(axis)) along `axis`; the other dims must
  // match (a decoding cache appends one position's keys this way instead of concatenating).
  void write_at_(int64_t axis, int64_t begin, const Tensor& source);

  bool same_impl(const Tensor& other) const { return impl_ == other.impl_; }
  long use_count() const { return impl_.use_count(); }  // handles sharing this tensor
  TensorImpl* impl() const { return impl_.get(); }

 private:
  std::shared_ptr<TensorImpl> impl_;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
  friend Tensor make_tensor(std::shared_ptr<Storage>, int64_t, Shape, DType);
};

Tensor make_tensor(std::shared_ptr<Storage> storage, int64_t offset, Shape shape, DType dtype);

// How many times tensor values have been read back to the host since the program started
// (to_vector, to_ids, item, or to(cpu) from another device), on any device. Tests use it to
// prove that a training step never waits for its device.
int64_t host_reads();

// What the engine has made since the program started (counted atomically, on any thread): tensor
// headers (every Tensor that is not a copy of a handle: results, views, detached copies), storages
// (allocations) and their bytes. `qkv bench` reports them per training step: the work that does no
// arithmetic beside the work that does.
struct MadeCounts {
  int64_t tensors = 0, storages = 0, storage_bytes = 0;
};
MadeCounts made_counts();

struct TensorImpl {
  std::shared_ptr<Storage> storage;
  int64_t offset = 0;  // in elements
  Shape shape;
  DType dtype = DType::F32;
  bool requires_grad = false;
  Tensor grad;
  std::shared_ptr<Node> grad_fn;
};

}  // namespace qkv
