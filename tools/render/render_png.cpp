// tools/render/render_png.cpp — write_png: the image encoded by stb_image_write and written
// atomically (framework/file_util.h).
#include <stb/stb_image_write.h>

#include <stdexcept>
#include <string>

#include "framework/file_util.h"
#include "render.h"

namespace qkv::render {

namespace {

// stb_image_write hands the encoded bytes over in pieces; this appends them to a std::string.
void append_to_string(void* context, void* data, int size) {
  static_cast<std::string*>(context)->append(static_cast<const char*>(data), static_cast<size_t>(size));
}

}  // namespace

void write_png(const Image& img, const std::string& path) {
  if (img.width <= 0 || img.height <= 0) throw std::runtime_error("write_png: empty image for " + path);
  if (img.rgb.size() != static_cast<size_t>(img.width) * img.height * 3)
    throw std::runtime_error("write_png: pixel buffer size does not match width*height*3 for " + path);
  std::string png;
  if (!stbi_write_png_to_func(append_to_string, &png, img.width, img.height, 3, img.rgb.data(), img.width * 3))
    throw std::runtime_error("write_png: cannot encode " + path);
  write_file_atomic(path, png);
}

}  // namespace qkv::render
