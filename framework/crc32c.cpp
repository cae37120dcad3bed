// framework/crc32c.cpp — CRC32C eight bytes at a time ("slicing-by-8": eight 256-entry tables,
// built once, each advancing the CRC over one byte position of a little-endian 64-bit word).
#include "crc32c.h"

#include <array>
#include <cstring>

namespace qkv {

namespace {

constexpr uint32_t kReflectedPolynomial = 0x82F63B78u;

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (uint32_t byte = 0; byte < 256; ++byte) {  // table 0: one byte, bit by bit
    uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? kReflectedPolynomial : 0u);
    t[0][byte] = crc;
  }
  for (uint32_t byte = 0; byte < 256; ++byte)  // table k: the byte followed by k zero bytes
    for (size_t k = 1; k < 8; ++k) t[k][byte] = (t[k - 1][byte] >> 8) ^ t[0][t[k - 1][byte] & 0xFFu];
  return t;
}

constexpr Tables kTables = make_tables();

}  // namespace

uint32_t crc32c(const void* bytes, size_t size, uint32_t crc) {
  const auto* p = static_cast<const uint8_t*>(bytes);
  crc = ~crc;
  for (; size >= 8; p += 8, size -= 8) {
    uint64_t word = 0;
    std::memcpy(&word, p, 8);  // little-endian: byte 0 is the low byte (x86, ARM)
    word ^= crc;
    crc = kTables[7][word & 0xFF] ^ kTables[6][(word >> 8) & 0xFF] ^ kTables[5][(word >> 16) & 0xFF] ^
          kTables[4][(word >> 24) & 0xFF] ^ kTables[3][(word >> 32) & 0xFF] ^ kTables[2][(word >> 40) & 0xFF] ^
          kTables[1][(word >> 48) & 0xFF] ^ kTables[0][word >> 56];
  }
  for (; size > 0; ++p, --size) crc = (crc >> 8) ^ kTables[0][(crc ^ *p) & 0xFFu];
  return ~crc;
}

}  // namespace qkv
