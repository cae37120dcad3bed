// framework/crc32c.h — CRC32C (Castagnoli), the checksum that qkv's files carry: the published
// algorithm (reflected polynomial 0x82F63B78, initial value and final xor 0xFFFFFFFF), one table.
#pragma once

#include <cstddef>
#include <cstdint>

namespace qkv {

// The CRC32C of bytes[0, size) continued from `crc` (0 to start): crc32c("123456789") is 0xE3069283,
// and crc32c(b, crc32c(a)) equals the CRC32C of a followed by b.
uint32_t crc32c(const void* bytes, size_t size, uint32_t crc = 0);

}  // namespace qkv
