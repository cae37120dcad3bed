// framework/checkpoint.h — saves and loads a module's named parameters as safetensors, with a
// string metadata map, and one tensor as a safetensors entry and back (a training state's too).
// Shapes are checked tensor by tensor; nothing about any model lives here.
#pragma once

#include <map>
#include <string>

#include "nn.h"
#include "safetensors.h"

namespace qkv {

// Atomic: the file appears complete or not at all.
void save_checkpoint(const std::string& path, const nn::Module& module,
                     const std::map<std::string, std::string>& metadata);

// Reads only the metadata (to build the right model before loading its weights).
std::map<std::string, std::string> read_checkpoint_metadata(const std::string& path);

// Copies every tensor into the module's parameters (converting dtype when needed). A missing,
// extra or differently shaped tensor throws a message naming the tensor and both shapes.
// Non-finite weights (NaN, Inf) are refused, naming the tensor and counting them.
void load_checkpoint(const std::string& path, nn::Module& module);
// The same from a file already read (path only names it in messages).
void load_checkpoint(const SafeTensorsFile& file, const std::string& path, nn::Module& module);

// A tensor's values as a safetensors entry, copied to the host (what save_checkpoint writes).
SafeTensor safetensor_of(const Tensor& t);
// An F32 or F64 entry as a host tensor of its dtype (undefined for any other dtype), with `bad` set
// to the count of its values that are NaN or Inf (or negative, with non_negative).
Tensor host_tensor_of(const SafeTensor& t, int64_t& bad, bool non_negative = false);

}  // namespace qkv
