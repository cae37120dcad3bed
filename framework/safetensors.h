// framework/safetensors.h — reading and writing the safetensors checkpoint format as raw bytes.
// Knows nothing of Tensor; sub-byte dtypes (F4, F6_*) are not supported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace qkv {

// One tensor as stored in the file.
struct SafeTensor {
  std::string dtype;           // safetensors dtype name: "F32", "F64", "I64", "BF16", ...
  std::vector<int64_t> shape;  // empty for a 0-d scalar
  std::vector<uint8_t> data;   // little-endian, row-major, size == numel * dtype_size
};

// The __metadata__ key of the checksum every file qkv writes carries: 8 hex digits of the CRC32C
// of its content (the header it would have without this key, then each tensor's bytes in name
// order). The reader checks it and removes it from `metadata`; the writer adds it.
inline constexpr const char* kSafetensorsChecksumKey = "qkv_crc32c";

// A whole checkpoint: free-form string metadata plus named tensors.
struct SafeTensorsFile {
  std::map<std::string, std::string> metadata;  // the "__metadata__" map
  std::map<std::string, SafeTensor> tensors;    // written in name order, contiguously
  bool checksum_verified = false;               // read: the file carried a checksum and it matched
};

// Largest header the reader accepts, as in the reference implementation.
inline constexpr uint64_t kSafetensorsMaxHeaderSize = 100'000'000;

// Bytes per element of a dtype name; throws std::runtime_error on an unknown name.
size_t safetensors_dtype_size(const std::string& dtype);

// Whether an encoded file carries qkv's checksum (kSafetensorsChecksumKey). Files qkv writes do;
// omit gives the plain format, as other tools write it (tests use it).
enum class SafetensorsChecksum { write, omit };

// Encodes a file: 8-byte little-endian header length, JSON header padded with spaces so the
// data starts 8-byte aligned, then the tensors' bytes. Throws std::runtime_error on invalid input,
// and on metadata that already holds kSafetensorsChecksumKey.
std::vector<uint8_t> safetensors_serialize(const SafeTensorsFile& file,
                                           SafetensorsChecksum checksum = SafetensorsChecksum::write);

// Decodes and fully validates a file image, and its checksum where it has one ("<name>: corrupted:
// ..." when it does not match). Error messages start with name_for_errors.
SafeTensorsFile safetensors_parse(const std::vector<uint8_t>& bytes, const std::string& name_for_errors);

// Atomic write: writes "<path>.tmp.<pid>" in the same directory, fflush + fsync, then renames
// it over path. On any failure the temp file is removed, path is left untouched, and it throws.
void safetensors_write(const std::string& path, const SafeTensorsFile& file);

// Reads and validates a file; throws std::runtime_error("<path>: <reason>").
SafeTensorsFile safetensors_read(const std::string& path);

}  // namespace qkv
