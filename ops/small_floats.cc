#include "ops/small_floats.h"

namespace brt::ops {

Half::Half(float f) {
  uint32_t x = FloatToBits(f);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t exp = (x >> 23) & 0xFF;
  uint32_t mant = x & 0x7FFFFF;
  if (exp == 0xFF) {  // inf or nan
    bits = static_cast<uint16_t>(sign | 0x7C00 | (mant ? 0x200 : 0));
    return;
  }
  int32_t e = static_cast<int32_t>(exp) - 127 + 15;
  if (e >= 31) {  // overflow to inf
    bits = static_cast<uint16_t>(sign | 0x7C00);
    return;
  }
  if (e <= 0) {  // subnormal or zero
    if (e < -10) {
      bits = static_cast<uint16_t>(sign);
      return;
    }
    mant |= 0x800000;
    uint32_t shift = static_cast<uint32_t>(14 - e);
    uint32_t half_mant = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1))) ++half_mant;
    bits = static_cast<uint16_t>(sign | half_mant);
    return;
  }
  uint32_t half = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1FFF;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1))) ++half;  // may carry into exponent: correct
  bits = static_cast<uint16_t>(half);
}

Half::operator float() const {
  uint32_t sign = (static_cast<uint32_t>(bits) & 0x8000) << 16;
  uint32_t exp = (bits >> 10) & 0x1F;
  uint32_t mant = bits & 0x3FF;
  if (exp == 0) {
    if (mant == 0) return BitsToFloat(sign);
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return BitsToFloat(sign | 0x7F800000 | (mant << 13));
  return BitsToFloat(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

}  // namespace brt::ops
