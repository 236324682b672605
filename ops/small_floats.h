// 16-bit floats and i1 storage for host code: stored as bits, computed in
// float. Shared by the providers that touch tensors on the host.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace brt::ops {

inline float BitsToFloat(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
inline uint32_t FloatToBits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f) {  // NOLINT: converts like a built-in float type
    uint32_t b = FloatToBits(f);
    if (std::isnan(f)) {
      bits = static_cast<uint16_t>((b >> 16) | 0x40);
    } else {
      b += 0x7FFF + ((b >> 16) & 1);  // round to nearest even
      bits = static_cast<uint16_t>(b >> 16);
    }
  }
  operator float() const { return BitsToFloat(static_cast<uint32_t>(bits) << 16); }
};

struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float f);  // NOLINT
  operator float() const;
};

// i1 storage: one byte, any non-zero byte reads as true.
struct Bool8 {
  uint8_t v = 0;
  Bool8() = default;
  Bool8(bool b) : v(b ? 1 : 0) {}  // NOLINT
  operator bool() const { return v != 0; }
};

}  // namespace brt::ops
