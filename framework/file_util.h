// framework/file_util.h — writing a file atomically: readers see the old file or the new one,
// never a partial one, and a crash leaves at most a stale temp file beside it.
#pragma once

#include <string>
#include <string_view>

namespace qkv {

// Throws unless `path` names a regular file (following symlinks) or nothing yet: a device, a
// pipe, a directory or /proc/self/fd/N is refused, "<path>: <what it is>; give a file name".
// write_file_atomic checks it first; commands call it before their work, so that a bad --out
// fails at once.
void check_output_file(const std::string& path);

// Writes `bytes` to `temp_path`, fsyncs it, renames it over `path` and fsyncs the directory
// (best effort). On failure the temp file is removed and std::runtime_error says
// "<path>: <what failed>", naming the temp file where it is involved.
void write_file_atomic(const std::string& path, std::string_view bytes, const std::string& temp_path);

// The same with the temp file path + ".tmp".
void write_file_atomic(const std::string& path, std::string_view bytes);

}  // namespace qkv
