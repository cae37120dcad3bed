// framework/file_util.cpp — write_file_atomic: temp file, fsync, rename over the target, fsync of
// the directory that holds it.
#include "file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace qkv {

namespace {

// Makes a rename durable: fsync of the directory that holds `path` (best effort).
void sync_directory_of(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  const std::string directory = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const int directory_fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY);
  if (directory_fd >= 0) {
    ::fsync(directory_fd);
    ::close(directory_fd);
  }
}

// What a file that is not a regular one is, in words.
const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a pipe";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

}  // namespace

void check_output_file(const std::string& path) {
  struct stat info {
  }, link_info{};
  const bool is_link = ::lstat(path.c_str(), &link_info) == 0 && S_ISLNK(link_info.st_mode);
  if (::stat(path.c_str(), &info) != 0) {
    if (errno == ENOENT) {
      if (is_link)  // a symlink to nothing: writing would replace the link
        throw std::runtime_error(path + ": a symbolic link to a missing file; give a file name");
      return;  // a new name
    }
    if (errno == ENOTDIR) return;  // a missing folder on the way: the write names it
    throw std::runtime_error(path + ": cannot check it: " + std::strerror(errno));
  }
  if (!S_ISREG(info.st_mode))
    throw std::runtime_error(path + ": " + kind_of(info.st_mode) + ", not a regular file; give a file name");
  // A link to a file (even /proc/self/fd/1 on a file): the atomic rename would replace the link
  // itself, so it is refused, as `qkv train --out` refuses a link that is not a folder.
  if (is_link)
    throw std::runtime_error(path +
                             ": a symbolic link; qkv writes a new file and renames it over the old one, which "
                             "would replace the link: give the file's own path");
}

void write_file_atomic(const std::string& path, std::string_view bytes, const std::string& temp_path) {
  check_output_file(path);
  FILE* stream = std::fopen(temp_path.c_str(), "wb");
  if (stream == nullptr)
    throw std::runtime_error(path + ": cannot create temp file '" + temp_path + "': " + std::strerror(errno));
  auto abandon = [&](const std::string& reason) {
    const std::string detail = reason + ": " + std::strerror(errno);
    if (stream != nullptr) std::fclose(stream);
    std::remove(temp_path.c_str());
    throw std::runtime_error(path + ": " + detail);
  };
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), stream) != bytes.size())
    abandon("writing '" + temp_path + "' failed");
  if (std::fflush(stream) != 0) abandon("flushing '" + temp_path + "' failed");
  // on disk before the rename makes it visible
  if (::fsync(::fileno(stream)) != 0) abandon("fsync of '" + temp_path + "' failed");
  const int close_result = std::fclose(stream);
  stream = nullptr;
  if (close_result != 0) abandon("closing '" + temp_path + "' failed");
  if (std::rename(temp_path.c_str(), path.c_str()) != 0) abandon("renaming '" + temp_path + "' over it failed");
  sync_directory_of(path);
}

void write_file_atomic(const std::string& path, std::string_view bytes) {
  write_file_atomic(path, bytes, path + ".tmp");
}

}  // namespace qkv
