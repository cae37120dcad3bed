// framework/checkpoint.cpp — the bridge between tensors (a module's named parameters) and safetensors
// files.
#include "checkpoint.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "safetensors.h"

namespace qkv {

SafeTensor safetensor_of(const Tensor& t) {
  const Tensor host = t.device() == Device::cpu() ? t : t.to(Device::cpu());
  SafeTensor out;
  out.dtype = std::array{"F32", "F64", "I64"}[static_cast<size_t>(host.dtype())];  // DType's order
  out.shape = host.shape();
  out.data.resize(static_cast<size_t>(host.numel()) * dtype_size(host.dtype()));
  if (!out.data.empty()) std::memcpy(out.data.data(), host.data_ptr(), out.data.size());
  return out;
}

Tensor host_tensor_of(const SafeTensor& t, int64_t& bad, bool non_negative) {
  bad = 0;
  if (t.dtype != "F32" && t.dtype != "F64") return Tensor();
  Tensor host = Tensor::empty(t.shape, t.dtype == "F64" ? DType::F64 : DType::F32, Device::cpu());
  if (!t.data.empty()) std::memcpy(host.data_ptr(), t.data.data(), t.data.size());
  for (const double v : host.to_vector()) bad += !std::isfinite(v) || (non_negative && v < 0);
  return host;
}

void save_checkpoint(const std::string& path, const nn::Module& module,
                     const std::map<std::string, std::string>& metadata) {
  SafeTensorsFile file;
  file.metadata = metadata;
  for (const auto& [name, param] : module.named_parameters()) file.tensors.emplace(name, safetensor_of(param));
  safetensors_write(path, file);
}

static SafeTensorsFile read_existing(const std::string& path) {
  if (!std::filesystem::exists(path)) throw std::runtime_error(fmt::format("{}: checkpoint not found", path));
  return safetensors_read(path);
}

std::map<std::string, std::string> read_checkpoint_metadata(const std::string& path) {
  return read_existing(path).metadata;
}

void load_checkpoint(const std::string& path, nn::Module& module) {
  load_checkpoint(read_existing(path), path, module);
}

void load_checkpoint(const SafeTensorsFile& file, const std::string& path, nn::Module& module) {
  const auto params = module.named_parameters();
  for (const auto& [name, param] : params) {
    auto it = file.tensors.find(name);
    if (it == file.tensors.end())
      throw std::runtime_error(fmt::format("{}: tensor '{}' is missing from the checkpoint", path, name));
    const SafeTensor& t = it->second;
    if (t.shape != param.shape())
      throw std::runtime_error(fmt::format("{}: tensor '{}' has shape {} in the checkpoint but {} in the model", path,
                                           name, shape_str(t.shape), shape_str(param.shape())));
    int64_t bad = 0;
    Tensor host = host_tensor_of(t, bad);
    if (!host.defined())
      throw std::runtime_error(fmt::format("{}: tensor '{}' has dtype {}, expected F32 or F64", path, name, t.dtype));
    if (bad > 0)
      throw std::runtime_error(fmt::format("{}: tensor '{}' holds {} non-finite value{} (NaN or Inf) among {}", path,
                                           name, bad, bad == 1 ? "" : "s", host.numel()));
    if (host.dtype() != param.dtype()) host = host.to(param.dtype());
    Tensor target = param;
    target.copy_(host);
  }
  if (file.tensors.size() != params.size())
    for (const auto& [name, t] : file.tensors)
      if (std::none_of(params.begin(), params.end(), [&n = name](const auto& param) { return param.first == n; }))
        throw std::runtime_error(fmt::format("{}: checkpoint tensor '{}' does not belong to this model", path, name));
}

}  // namespace qkv
