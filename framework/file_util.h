// framework/file_util.h — writing a file atomically: readers see the old file or the new one,
// never a partial one, and a crash leaves at most a stale temp file beside it.
#pragma once

#include <string>
#include <string_view>

namespace qkv {

// Writes `bytes` to `temp_path`, fsyncs it, renames it over `path` and fsyncs the directory
// (best effort). On failure the temp file is removed and std::runtime_error says
// "<path>: <what failed>", naming the temp file where it is involved.
void write_file_atomic(const std::string& path, std::string_view bytes, const std::string& temp_path);

// The same with the temp file path + ".tmp".
void write_file_atomic(const std::string& path, std::string_view bytes);

}  // namespace qkv
