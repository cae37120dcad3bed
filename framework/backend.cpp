// framework/backend.cpp — picks the backend for a device, and the stride helpers every backend
// and op shares. The CUDA backend registers itself here when it is compiled in.
#include "backend.h"

#include <fmt/format.h>

#include <map>
#include <mutex>
#include <stdexcept>

namespace qkv {

Backend& cpu_backend();  // framework/cpu/cpu_backend.cpp

namespace {
Backend* (*g_cuda_factory)(int) = nullptr;
}

void register_cuda_backend(Backend* (*factory)(int device_index)) { g_cuda_factory = factory; }

Backend& backend_for(Device device) {
  if (device.type == DeviceType::CPU) return cpu_backend();
  static std::mutex mutex;
  static std::map<int, Backend*> cuda_backends;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = cuda_backends.find(device.index);
  if (found != cuda_backends.end()) return *found->second;
  if (!g_cuda_factory)
#ifdef QKV_CPU_ONLY_BESIDE_NVCC
    throw std::runtime_error(
        "no CUDA device available: this is the CPU-only build of qkv (made with CUDA=0, as "
        "`make demo` does), although nvcc is installed; `make` builds the CUDA one as build/qkv; "
        "or use --device cpu");
#else
    throw std::runtime_error(
        "no CUDA device available (this qkv was built without CUDA: nvcc was not found at build time); "
        "use --device cpu");
#endif
  Backend* backend = g_cuda_factory(device.index);  // throws a clear error when unusable
  cuda_backends[device.index] = backend;
  return *backend;
}

Strides contiguous_strides(const Shape& shape) {
  Strides strides(shape.size());
  int64_t step = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = step;
    step *= shape[i];
  }
  return strides;
}

Strides broadcast_strides(const Shape& shape, const Shape& out_shape) {
  if (shape.size() > out_shape.size())
    throw std::runtime_error(fmt::format("cannot broadcast {} to {}", shape_str(shape), shape_str(out_shape)));
  const Strides own = contiguous_strides(shape);
  Strides strides(out_shape.size(), 0);
  const size_t pad = out_shape.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] != out_shape[i + pad] && shape[i] != 1)
      throw std::runtime_error(fmt::format("cannot broadcast {} to {}", shape_str(shape), shape_str(out_shape)));
    strides[i + pad] = shape[i] == 1 ? 0 : own[i];
  }
  return strides;
}

}  // namespace qkv
