// framework/safetensors.cpp — safetensors encode/decode with the reference reader's validation,
// written atomically (file_util.h). JSON parsing is nlohmann's; duplicate keys are detected here.
#include "safetensors.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string_view>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "bounded_json.h"
#include "crc32c.h"
#include "file_util.h"
#include "text_util.h"

namespace qkv {

namespace {

using nlohmann::json;

const char* const kMetadataKey = "__metadata__";
constexpr size_t kLengthPrefixBytes = 8;
constexpr size_t kDataAlignment = 8;

// Closes a file descriptor on every way out of its scope (a failure's message reads errno first).
struct ClosesOnExit {
  int fd;
  ~ClosesOnExit() { ::close(fd); }
};

[[noreturn]] void fail(const std::string& name, const std::string& reason) {
  throw std::runtime_error(name + ": " + reason);
}

std::string single_quoted(const std::string& s) { return "'" + s + "'"; }

// The bytes `tensor` needs (its elements times its dtype's size), which must equal `have`
// (`have_what`: where those bytes are); fails naming `where` on an unknown dtype, a negative
// dimension, an overflow or another count.
uint64_t checked_byte_count(const SafeTensor& tensor, uint64_t have, const std::string& have_what,
                            const std::string& name, const std::string& where) {
  size_t dtype_size = 0;
  try {
    dtype_size = safetensors_dtype_size(tensor.dtype);
  } catch (const std::runtime_error&) { fail(name, where + "unknown dtype " + single_quoted(tensor.dtype)); }
  const std::string what = where + "shape [" + dims_for_message(tensor.shape) + "] x " + tensor.dtype;
  uint64_t count = 1;
  for (int64_t dim : tensor.shape) {
    if (dim < 0) fail(name, where + "negative dimension " + std::to_string(dim) + " in shape");
    if (__builtin_mul_overflow(count, static_cast<uint64_t>(dim), &count))
      fail(name, what + " overflows the byte count");
  }
  if (__builtin_mul_overflow(count, static_cast<uint64_t>(dtype_size), &count))
    fail(name, what + " overflows the byte count");
  if (count != have)
    fail(name, what + " needs " + std::to_string(count) + " bytes but " + have_what + " " + std::to_string(have));
  return count;
}

// ---- header parsing -------------------------------------------------------------------------

// A safetensors header is two levels deep (entries, then shape/offset arrays); 64 is plenty.
constexpr int kMaxHeaderDepth = 64;
// Values in a header (every entry, dtype, dimension and offset counts, about ten a tensor): a
// model of 20,000 tensors fits, and the parse of a hostile 100 MB header stops after 3 MB or so.
constexpr size_t kMaxHeaderValues = 250'000;

// A short description of an untrusted JSON value for a message. Never dump() a container from the
// file: its size and depth are the attacker's.
std::string describe(const json& value) {
  if (value.is_array()) return "an array of " + std::to_string(value.size()) + " entries";
  if (value.is_object()) return "an object of " + std::to_string(value.size()) + " keys";
  if (value.is_string()) {
    const std::string& text = value.get_ref<const std::string&>();
    return text.size() <= 40 ? value.dump() : "a string of " + std::to_string(text.size()) + " bytes";
  }
  return value.dump();  // a number, a boolean or null
}

// Parses the header text in one linear pass, rejecting duplicate keys in any object (nlohmann
// alone keeps the last one), nesting past kMaxHeaderDepth and more than kMaxHeaderValues values.
json parse_header_json(std::string_view text, const std::string& name) {
  try {
    return parse_bounded_json(text, {.max_depth = kMaxHeaderDepth, .max_values = kMaxHeaderValues});
  } catch (const std::runtime_error& e) { fail(name, std::string("header ") + e.what()); }
}

struct TensorEntry {
  std::string name;
  SafeTensor tensor;  // data filled in after offsets are validated
  uint64_t begin = 0;
  uint64_t end = 0;
};

TensorEntry parse_tensor_entry(const std::string& tensor_name, const json& entry, const std::string& name) {
  const std::string where = "tensor " + single_quoted(tensor_name) + ": ";
  if (!entry.is_object()) fail(name, where + "entry must be an object with dtype, shape, data_offsets");
  for (const char* field : {"dtype", "shape", "data_offsets"})
    if (!entry.contains(field)) fail(name, where + "missing field '" + field + "'");
  TensorEntry result;
  result.name = tensor_name;

  const json& dtype = entry.at("dtype");
  if (!dtype.is_string()) fail(name, where + "field 'dtype' must be a string");
  result.tensor.dtype = dtype.get<std::string>();

  const json& shape = entry.at("shape");
  if (!shape.is_array()) fail(name, where + "field 'shape' must be an array of non-negative integers");
  for (const json& dim : shape) {
    if (dim.is_number_integer() && !dim.is_number_unsigned())
      fail(name, where + "negative dimension " + std::to_string(dim.get<int64_t>()) + " in shape");
    if (!dim.is_number_unsigned() || dim.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      fail(name, where + "shape entry " + describe(dim) + " is not a non-negative 64-bit integer");
    result.tensor.shape.push_back(static_cast<int64_t>(dim.get<uint64_t>()));
  }

  const json& offsets = entry.at("data_offsets");
  if (!offsets.is_array() || offsets.size() != 2)
    fail(name, where + "field 'data_offsets' must be [begin, end], got " + describe(offsets));
  if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
    fail(name, where + "data_offsets must be non-negative integers, got [" + describe(offsets[0]) + ", " +
                   describe(offsets[1]) + "]");
  result.begin = offsets[0].get<uint64_t>();
  result.end = offsets[1].get<uint64_t>();
  if (result.begin > result.end)
    fail(name, where + "data_offsets [" + std::to_string(result.begin) + ", " + std::to_string(result.end) +
                   "] have begin > end");

  checked_byte_count(result.tensor, result.end - result.begin, "data_offsets span", name, where);
  return result;
}

// (moves the strings out of `metadata`)
std::map<std::string, std::string> parse_metadata(json& metadata, const std::string& name) {
  std::map<std::string, std::string> result;
  if (metadata.is_null()) return result;
  if (!metadata.is_object()) fail(name, "__metadata__ must be an object of string to string");
  for (auto& [key, value] : metadata.items()) {
    if (!value.is_string())
      fail(name, "__metadata__ value for key " + single_quoted(key) + " is not a string: " + describe(value));
    result[key] = std::move(value.get_ref<std::string&>());
  }
  return result;
}

// ---- header writing -------------------------------------------------------------------------

std::string json_string_literal(const std::string& text, const std::string& name, const std::string& what) {
  if (!valid_utf8(text)) fail(name, what + " is not valid UTF-8");
  std::string out = "\"";
  const auto plain = [](char c) { return c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20; };
  if (std::all_of(text.begin(), text.end(), plain)) return out + text + "\"";  // most text: one copy
  for (char c : text) {
    if (plain(c))
      out += c;
    else if (c == '"' || c == '\\')
      out += std::string("\\") + c;
    else
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(c));
  }
  return out + "\"";
}

// The header's JSON text for these metadata and tensors, unpadded, with every tensor's entry
// checked against its data; data_offsets follow the tensors' name order. Returns the data size.
std::string header_text_of(const std::map<std::string, std::string>& metadata,
                           const std::map<std::string, SafeTensor>& tensors, const std::string& name,
                           uint64_t& data_bytes) {
  std::vector<std::string> entries, pairs;
  for (const auto& [key, value] : metadata)
    pairs.push_back(json_string_literal(key, name, "__metadata__ key") + ":" +
                    json_string_literal(value, name, "__metadata__ value for key " + single_quoted(key)));
  if (!metadata.empty()) entries.push_back("\"__metadata__\":{" + join(pairs, ",") + "}");
  uint64_t offset = 0;
  for (const auto& [tensor_name, tensor] : tensors) {
    const std::string where = "tensor " + single_quoted(tensor_name) + ": ";
    if (tensor_name == kMetadataKey) fail(name, "a tensor may not be named '__metadata__'");
    const uint64_t needed_bytes = checked_byte_count(tensor, tensor.data.size(), "data holds", name, where);
    entries.push_back(fmt::format("{}:{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}",
                                  json_string_literal(tensor_name, name, "tensor name"), tensor.dtype,
                                  fmt::join(tensor.shape, ","), offset, offset + needed_bytes));
    offset += needed_bytes;
  }
  data_bytes = offset;
  return "{" + join(entries, ",") + "}";
}

// The checksum of a file's content: CRC32C of the header qkv would write for its metadata (less
// the checksum itself) and tensors, then of every tensor's bytes in name order. It covers every
// value a reader uses, and not the layout: another writer's offsets, key order or padding do not
// change it.
std::string content_checksum(const std::map<std::string, std::string>& metadata,
                             const std::map<std::string, SafeTensor>& tensors, const std::string& name) {
  std::map<std::string, std::string> without_checksum = metadata;
  without_checksum.erase(kSafetensorsChecksumKey);
  uint64_t data_bytes = 0;
  const std::string header = header_text_of(without_checksum, tensors, name, data_bytes);
  uint32_t crc = crc32c(header.data(), header.size());
  for (const auto& [tensor_name, tensor] : tensors) crc = crc32c(tensor.data.data(), tensor.data.size(), crc);
  char hex[9];
  std::snprintf(hex, sizeof hex, "%08x", crc);
  return hex;
}

std::vector<uint8_t> serialize_with_name(const SafeTensorsFile& file, const std::string& name,
                                         SafetensorsChecksum checksum) {
  if (file.metadata.count(kSafetensorsChecksumKey))
    fail(name,
         std::string("metadata key '") + kSafetensorsChecksumKey + "' is the writer's own (it holds the checksum)");
  uint64_t data_bytes = 0;
  std::map<std::string, std::string> metadata = file.metadata;
  if (checksum == SafetensorsChecksum::write)
    metadata[kSafetensorsChecksumKey] = content_checksum(file.metadata, file.tensors, name);
  std::string header = header_text_of(metadata, file.tensors, name, data_bytes);
  // Pad with spaces so that 8 + header size is a multiple of the alignment.
  header.append((kDataAlignment - header.size() % kDataAlignment) % kDataAlignment, ' ');
  if (header.size() > kSafetensorsMaxHeaderSize)
    fail(name, "header of " + std::to_string(header.size()) + " bytes exceeds the limit of " +
                   std::to_string(kSafetensorsMaxHeaderSize));

  std::vector<uint8_t> bytes;
  bytes.reserve(kLengthPrefixBytes + header.size() + data_bytes);
  const uint64_t header_size = header.size();
  for (size_t i = 0; i < kLengthPrefixBytes; ++i) bytes.push_back(static_cast<uint8_t>(header_size >> (8 * i)));
  bytes.insert(bytes.end(), header.begin(), header.end());
  for (const auto& [tensor_name, tensor] : file.tensors)
    bytes.insert(bytes.end(), tensor.data.begin(), tensor.data.end());
  return bytes;
}

std::string errno_text() { return std::strerror(errno); }

}  // namespace

size_t safetensors_dtype_size(const std::string& dtype) {
  static const std::map<std::string, size_t> kSizes = {
      {"BOOL", 1}, {"U8", 1},   {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"F8_E8M0", 1}, {"I16", 2}, {"U16", 2},
      {"F16", 2},  {"BF16", 2}, {"I32", 4}, {"U32", 4},     {"F32", 4},     {"I64", 8},     {"U64", 8}, {"F64", 8},
  };
  const auto found = kSizes.find(dtype);
  if (found == kSizes.end()) throw std::runtime_error("unknown safetensors dtype " + single_quoted(dtype));
  return found->second;
}

std::vector<uint8_t> safetensors_serialize(const SafeTensorsFile& file, SafetensorsChecksum checksum) {
  return serialize_with_name(file, "safetensors_serialize", checksum);
}

// The header of a safetensors file: the 8-byte length, then that many bytes of JSON (a file of another
// kind, a truncated one and malformed JSON each fail naming the problem). Sets header_size.
static json read_header(const std::vector<uint8_t>& bytes, const std::string& name, uint64_t& header_size) {
  if (bytes.size() < kLengthPrefixBytes)
    fail(name, "file is " + std::to_string(bytes.size()) + " bytes, shorter than the 8-byte header length");
  header_size = 0;
  for (size_t i = 0; i < kLengthPrefixBytes; ++i) header_size |= static_cast<uint64_t>(bytes[i]) << (8 * i);
  // Another kind of file read as a checkpoint: say so, and what it looks like, before the numbers.
  static const uint8_t kPngMagic[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  const bool png = std::equal(kPngMagic, kPngMagic + 8, bytes.begin());
  const std::string not_safetensors = std::string("not a safetensors file") + (png ? " (it is a PNG image)" : "") +
                                      ": its first 8 bytes give a header length of ";
  if (header_size > kSafetensorsMaxHeaderSize)
    fail(name, not_safetensors + std::to_string(header_size) + " bytes; header too large: " +
                   std::to_string(header_size) + " bytes (limit " + std::to_string(kSafetensorsMaxHeaderSize) + ")");
  const size_t available = bytes.size() - kLengthPrefixBytes;
  if (header_size > available)
    fail(name, (png ? not_safetensors + std::to_string(header_size) + " bytes; " : std::string()) + "header length " +
                   std::to_string(header_size) + " is larger than the " + std::to_string(available) +
                   " bytes after the length prefix (a truncated or foreign file)");
  const uint8_t* header_begin = bytes.data() + kLengthPrefixBytes;
  if (!valid_utf8(header_begin, header_size)) fail(name, "header is not valid UTF-8");
  const std::string_view header_text(reinterpret_cast<const char*>(header_begin), header_size);
  // JSON ends at a NUL for the parser; the reference reader rejects it, and so do we.
  if (const size_t nul = header_text.find('\0'); nul != std::string::npos)
    fail(name,
         "header has a NUL byte at offset " + std::to_string(nul) + " (only JSON and trailing spaces are allowed)");
  if (header_text.empty() || header_text[0] != '{') fail(name, "header is not a JSON object (it must start with '{')");
  // The padding (spaces) is cut before the parse, which would otherwise step through it byte by byte.
  const size_t last = header_text.find_last_not_of(' ');
  json header = parse_header_json(header_text.substr(0, last == std::string_view::npos ? 0 : last + 1), name);
  if (!header.is_object()) fail(name, "header is not a JSON object");
  return header;
}

// The tensors' data offsets, sorted by begin, must tile the data buffer exactly, each starting where
// the last ended; returns where the last ends.
static uint64_t check_offsets_tile(std::vector<TensorEntry>& entries, const std::string& name) {
  std::sort(entries.begin(), entries.end(), [](const TensorEntry& a, const TensorEntry& b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);
  });
  uint64_t expected_begin = 0;
  const TensorEntry* previous = nullptr;
  for (const TensorEntry& entry : entries) {
    const std::string offsets = "data_offsets [" + std::to_string(entry.begin) + ", " + std::to_string(entry.end) + "]";
    if (entry.begin < expected_begin)
      fail(name, "tensor " + single_quoted(entry.name) + ": " + offsets + " overlap tensor " +
                     single_quoted(previous->name) + ", which ends at " + std::to_string(expected_begin));
    if (entry.begin > expected_begin) {
      const std::string after = previous ? "tensor " + single_quoted(previous->name) + " ends" : "the data starts";
      fail(name, "tensor " + single_quoted(entry.name) + ": " + offsets + " are not contiguous: gap of " +
                     std::to_string(entry.begin - expected_begin) + " bytes after " + after + " at " +
                     std::to_string(expected_begin));
    }
    expected_begin = entry.end;
    previous = &entry;
  }
  return expected_begin;
}

SafeTensorsFile safetensors_parse(const std::vector<uint8_t>& bytes, const std::string& name) {
  uint64_t header_size = 0;
  json header = read_header(bytes, name, header_size);
  SafeTensorsFile result;
  std::vector<TensorEntry> entries;
  for (auto& [key, value] : header.items()) {
    if (key == kMetadataKey) {
      result.metadata = parse_metadata(value, name);
    } else {
      entries.push_back(parse_tensor_entry(key, value, name));
    }
  }

  const uint64_t expected_begin = check_offsets_tile(entries, name);
  const uint64_t data_start = kLengthPrefixBytes + header_size;
  const uint64_t data_size = bytes.size() - data_start;
  if (expected_begin > data_size)
    fail(name, "file is truncated: tensors need " + std::to_string(expected_begin) + " bytes of data but only " +
                   std::to_string(data_size) + " are present");
  if (expected_begin < data_size)
    fail(name, std::to_string(data_size - expected_begin) + " trailing bytes after the last tensor's data (" +
                   std::to_string(expected_begin) + " bytes described, " + std::to_string(data_size) + " present)");

  for (TensorEntry& entry : entries) {
    const auto first = bytes.begin() + static_cast<std::ptrdiff_t>(data_start + entry.begin);
    entry.tensor.data.assign(first, first + static_cast<std::ptrdiff_t>(entry.end - entry.begin));
    result.tensors.emplace(entry.name, std::move(entry.tensor));
  }

  // The checksum qkv writes (files from other tools have none, and load unverified).
  if (const auto stored = result.metadata.find(kSafetensorsChecksumKey); stored != result.metadata.end()) {
    const std::string expected = stored->second;
    const std::string actual = content_checksum(result.metadata, result.tensors, name);
    if (expected != actual)
      fail(name, "corrupted: its content checksum (CRC32C) is " + actual + " but the file says " +
                     (expected.size() <= 16 ? expected : expected.substr(0, 16) + "...") +
                     " (a changed byte in the header or the tensor data)");
    result.metadata.erase(kSafetensorsChecksumKey);
    result.checksum_verified = true;
  }
  return result;
}

void safetensors_write(const std::string& path, const SafeTensorsFile& file) {
  const std::vector<uint8_t> bytes = serialize_with_name(file, path, SafetensorsChecksum::write);
  const std::string temp_path = path + ".tmp." + std::to_string(::getpid());
  write_file_atomic(path, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), temp_path);
}

SafeTensorsFile safetensors_read(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; only regular files are read at all.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) fail(path, "cannot open: " + errno_text());
  const ClosesOnExit closes_fd{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) fail(path, "cannot stat: " + errno_text());
  if (!S_ISREG(info.st_mode))
    fail(path, "not a regular file (a checkpoint must be a file, not a device, pipe or directory)");
  const size_t size = static_cast<size_t>(info.st_size);
  std::vector<uint8_t> bytes;
  try {
    bytes.resize(size);
  } catch (const std::bad_alloc&) { fail(path, "cannot allocate " + std::to_string(size) + " bytes to read it"); }
  size_t done = 0;
  while (done < size) {  // the size fstat gave bounds the read, whatever the file does meanwhile
    const ssize_t got = ::read(fd, bytes.data() + done, size - done);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail(path, "read error: " + errno_text());
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  if (done != size)
    fail(path,
         "the file shrank while it was read (" + std::to_string(done) + " of " + std::to_string(size) + " bytes)");
  return safetensors_parse(bytes, path);
}

}  // namespace qkv
