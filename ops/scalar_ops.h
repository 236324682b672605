// Scalar semantics of the elementwise ops, on compute types (float for the
// 16-bit floats, bool for i1), shared by the CPU provider's loops and the
// CUDA provider's kernels so both compute the same values. Integer
// arithmetic wraps and never divides by zero (StableHLO leaves those cases
// implementation-defined; the choices follow XLA).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "ops/erfinv.h"

#ifdef __CUDACC__
#define BRT_HD __host__ __device__
#else
#define BRT_HD
#endif

namespace brt::ops {

template <typename V>
constexpr bool kIsFloat = std::is_floating_point_v<V>;
template <typename V>
constexpr bool kIsInt = std::is_integral_v<V> && !std::is_same_v<V, bool>;

template <typename V>
BRT_HD inline V WrapAdd(V a, V b) {
  using U = std::make_unsigned_t<V>;
  return static_cast<V>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename V>
BRT_HD inline V WrapSub(V a, V b) {
  using U = std::make_unsigned_t<V>;
  return static_cast<V>(static_cast<U>(a) - static_cast<U>(b));
}
template <typename V>
BRT_HD inline V WrapMul(V a, V b) {
  using U = std::make_unsigned_t<V>;
  // Promote through uint64 so narrow types do not multiply as signed int.
  return static_cast<V>(
      static_cast<U>(static_cast<uint64_t>(static_cast<U>(a)) * static_cast<U>(b)));
}

template <typename V>
BRT_HD inline V IntDivide(V a, V b) {
  if (b == 0) return static_cast<V>(-1);
  if constexpr (std::is_signed_v<V>)
    if (a == std::numeric_limits<V>::min() && b == -1) return a;
  return static_cast<V>(a / b);
}
template <typename V>
BRT_HD inline V IntRemainder(V a, V b) {
  if (b == 0) return a;
  if constexpr (std::is_signed_v<V>)
    if (a == std::numeric_limits<V>::min() && b == -1) return V(0);
  return static_cast<V>(a % b);
}

template <typename V>
BRT_HD inline V IntPow(V base, V exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if constexpr (std::is_signed_v<V>)
      if (base == -1) return (exp & 1) ? V(-1) : V(1);
    return 0;
  }
  V result = 1;
  while (exp > 0) {
    if (exp & 1) result = WrapMul(result, base);
    base = WrapMul(base, base);
    exp >>= 1;
  }
  return result;
}

template <typename V>
BRT_HD inline bool ShiftOutOfRange(V b) {
  return static_cast<std::make_unsigned_t<V>>(b) >= sizeof(V) * 8;
}
template <typename V>
BRT_HD inline V ShiftLeft(V a, V b) {
  using U = std::make_unsigned_t<V>;
  return ShiftOutOfRange(b) ? V(0) : static_cast<V>(static_cast<U>(a) << static_cast<U>(b));
}
template <typename V>
BRT_HD inline V ShiftRightLogical(V a, V b) {
  using U = std::make_unsigned_t<V>;
  return ShiftOutOfRange(b) ? V(0) : static_cast<V>(static_cast<U>(a) >> static_cast<U>(b));
}
template <typename V>
BRT_HD inline V ShiftRightArithmetic(V a, V b) {
  using S = std::make_signed_t<V>;
  const S s = static_cast<S>(a);
  if (ShiftOutOfRange(b)) return static_cast<V>(s < 0 ? S(-1) : S(0));
  return static_cast<V>(s >> static_cast<std::make_unsigned_t<V>>(b));
}

// The number of set bits of x's two's-complement representation
// (stablehlo.popcnt): __popc/__popcll on the GPU, the GCC/Clang builtin on
// the host (CUDA sources build as C++17, without std::popcount).
template <typename V>
BRT_HD inline V PopCount(V x) {
  using U = std::make_unsigned_t<V>;
  const U u = static_cast<U>(x);
#ifdef __CUDA_ARCH__
  if constexpr (sizeof(U) == 8)
    return static_cast<V>(__popcll(static_cast<unsigned long long>(u)));
  else
    return static_cast<V>(__popc(static_cast<unsigned>(u)));
#else
  return static_cast<V>(__builtin_popcountll(static_cast<unsigned long long>(u)));
#endif
}

// The zero bits above x's highest set bit, counted over its type's width
// (stablehlo.count_leading_zeros): the width for 0. __clz/__clzll on the
// GPU, the GCC/Clang builtin on the host, less the bits above the type.
template <typename V>
BRT_HD inline V CountLeadingZeros(V x) {
  using U = std::make_unsigned_t<V>;
  constexpr int kWidth = 8 * sizeof(U);
  const U u = static_cast<U>(x);
  if (u == 0) return static_cast<V>(kWidth);
#ifdef __CUDA_ARCH__
  if constexpr (sizeof(U) == 8)
    return static_cast<V>(__clzll(static_cast<long long>(u)));
  else
    return static_cast<V>(__clz(static_cast<int>(static_cast<unsigned>(u))) - (32 - kWidth));
#else
  return static_cast<V>(__builtin_clzll(static_cast<unsigned long long>(u)) - (64 - kWidth));
#endif
}

// The unary and binary op kinds of the op registry (brt/ops.def).
enum class Unary {
#define BRT_UNARY(e, ...) e,
#include "brt/ops.def"
};
enum class Binary {
#define BRT_BINARY(e, ...) e,
#include "brt/ops.def"
};

}  // namespace brt::ops

// Complex values' semantics, written over Unary and Binary.
#include "ops/complex_ops.h"

namespace brt::ops {

// Which element types an elementwise op takes (the registry's domain column).
// The *Complex domains take c64 and c128 as well.
enum class Domain {
  kFloat,
  kSigned,
  kNumeric,
  kAll,
  kIntegral,
  kInteger,
  kFloatComplex,
  kSignedComplex,
  kNumericComplex,
  kAllComplex,
};

constexpr bool TakesComplex(Domain d) {
  return d == Domain::kFloatComplex || d == Domain::kSignedComplex ||
         d == Domain::kNumericComplex || d == Domain::kAllComplex;
}
// The domain less its complex types.
constexpr Domain RealDomain(Domain d) {
  switch (d) {
    case Domain::kFloatComplex:
      return Domain::kFloat;
    case Domain::kSignedComplex:
      return Domain::kSigned;
    case Domain::kNumericComplex:
      return Domain::kNumeric;
    case Domain::kAllComplex:
      return Domain::kAll;
    default:
      return d;
  }
}

constexpr bool TakesFloats(Domain d) {
  return RealDomain(d) != Domain::kIntegral && RealDomain(d) != Domain::kInteger;
}

template <typename V>
constexpr bool InDomain(Domain domain) {
  if constexpr (kIsComplex<V>) return TakesComplex(domain);
  const Domain d = RealDomain(domain);
  if constexpr (std::is_same_v<V, bool>) return d == Domain::kAll || d == Domain::kIntegral;
  if constexpr (kIsInt<V> && std::is_unsigned_v<V>)
    return d != Domain::kFloat && d != Domain::kSigned;
  if constexpr (kIsInt<V>) return d != Domain::kFloat;
  return TakesFloats(d);
}

template <Unary OP, typename V>
constexpr bool UnarySupports() {
#define BRT_UNARY(e, kind, domain, ...) \
  if constexpr (OP == Unary::e) return InDomain<V>(Domain::domain);
#include "brt/ops.def"
  return false;
}

template <Binary OP, typename V>
constexpr bool BinarySupports() {
#define BRT_BINARY(e, kind, domain, ...) \
  if constexpr (OP == Binary::e) return InDomain<V>(Domain::domain);
#include "brt/ops.def"
  return false;
}

// The registry's expressions call the math functions unqualified (they are
// also CUDA C for generated kernels), so std's overloads are brought in.
template <Unary OP, typename V>
BRT_HD inline V ApplyUnary(V x) {
  if constexpr (std::is_same_v<V, bool>) {
    return !x;  // not, the only unary op on i1
  } else if constexpr (kIsComplex<V>) {
    return ComplexUnary<OP>(x);
  } else {
    using namespace std;
#define BRT_UNARY(e, kind, domain, flags, float_expr, int_expr) \
  if constexpr (OP == Unary::e) {                               \
    if constexpr (kIsFloat<V>)                                  \
      return static_cast<V>(float_expr);                        \
    else                                                        \
      return static_cast<V>(int_expr);                          \
  }
#include "brt/ops.def"
  }
  return x;
}

template <Binary OP, typename V>
BRT_HD inline V ApplyBinary(V a, V b) {
  if constexpr (std::is_same_v<V, bool>) {
    // multiply is and, add or: XLA's pred arithmetic (StableHLO's booleans).
    if constexpr (OP == Binary::kAnd || OP == Binary::kMin || OP == Binary::kMul) return a && b;
    if constexpr (OP == Binary::kXor) return a != b;
    return a || b;
  } else if constexpr (kIsComplex<V>) {
    return ComplexBinary<OP>(a, b);
  } else {
    using namespace std;
#define BRT_BINARY(e, kind, domain, flags, float_expr, int_expr) \
  if constexpr (OP == Binary::e) {                               \
    if constexpr (kIsFloat<V>)                                   \
      return static_cast<V>(float_expr);                         \
    else                                                         \
      return static_cast<V>(int_expr);                           \
  }
#include "brt/ops.def"
  }
  return a;
}

// An unsigned integer whose order is x's in a sort (brt/ops.def), for a
// compute type C: floats (as doubles, which hold every float type's values,
// sign of NaN included) by IEEE totalOrder (-NaN < -inf < ... < -0 < +0 <
// ... < +inf < +NaN: the sign flips the other bits), or without total_order
// with -0 as +0 and every NaN above +inf; signed integers with the sign bit
// flipped; unsigned ones and bool as they are.
template <typename C>
BRT_HD inline uint64_t SortKey(C value, bool total_order) {
  if constexpr (std::is_floating_point_v<C>) {
    double x = static_cast<double>(value);
    if (!total_order) {
      if (x != x) return ~uint64_t{0};
      if (x == 0) x = 0.0;
    }
    uint64_t bits;
    memcpy(&bits, &x, sizeof(bits));
    return bits >> 63 ? ~bits : bits | (uint64_t{1} << 63);
  } else if constexpr (std::is_signed_v<C>) {
    return static_cast<uint64_t>(static_cast<int64_t>(value)) ^ (uint64_t{1} << 63);
  } else {
    return static_cast<uint64_t>(value);
  }
}

enum class Cmp { kEq, kNe, kGe, kGt, kLe, kLt };

inline bool ParseCmp(const std::string& s, Cmp* out) {
  static const std::pair<const char*, Cmp> kNames[] = {{"EQ", Cmp::kEq}, {"NE", Cmp::kNe},
                                                       {"GE", Cmp::kGe}, {"GT", Cmp::kGt},
                                                       {"LE", Cmp::kLe}, {"LT", Cmp::kLt}};
  for (auto [name, c] : kNames)
    if (s == name) return *out = c, true;
  return false;
}

template <typename V>
BRT_HD inline bool ApplyCmp(Cmp c, V a, V b) {
  if constexpr (kIsComplex<V>) {
    if (c == Cmp::kEq || c == Cmp::kNe) return (a == b) == (c == Cmp::kEq);
    if (c == Cmp::kLt || c == Cmp::kLe) return ComplexLess(a, b) || (c == Cmp::kLe && a == b);
    return ComplexLess(b, a) || (c == Cmp::kGe && a == b);
  } else {
    switch (c) {
      case Cmp::kEq:
        return a == b;
      case Cmp::kNe:
        return a != b;
      case Cmp::kGe:
        return a >= b;
      case Cmp::kGt:
        return a > b;
      case Cmp::kLe:
        return a <= b;
      case Cmp::kLt:
        return a < b;
    }
    return false;
  }
}

// Conversion between compute types (StableHLO convert): to i1 tests for
// non-zero; float to integer saturates and maps NaN to 0 (out-of-range
// float->int is undefined in C++).
template <typename CT, typename CF>
BRT_HD inline CT ConvertScalar(CF v) {
  if constexpr (std::is_same_v<CT, bool>) {
    if constexpr (kIsComplex<CF>)
      return v.real() != 0;  // the real part alone, as for every real type
    else
      return v != CF(0);
  } else if constexpr (kIsComplex<CT>) {
    if constexpr (kIsComplex<CF>)
      return CT(v);
    else
      return CT(ConvertScalar<typename CT::value_type>(v));
  } else if constexpr (kIsComplex<CF>) {
    return ConvertScalar<CT>(v.real());  // the imaginary part is dropped, as in XLA
  } else if constexpr (kIsInt<CT> && kIsFloat<CF>) {
    if (std::isnan(v)) return CT(0);
    if (v <= static_cast<CF>(std::numeric_limits<CT>::min())) return std::numeric_limits<CT>::min();
    if (v >= static_cast<CF>(std::numeric_limits<CT>::max())) return std::numeric_limits<CT>::max();
    return static_cast<CT>(v);
  } else {
    return static_cast<CT>(v);
  }
}

// The op kinds with their scalar ops, for providers that pick the op at run
// time (the CUDA kernels, fused programs). on_float: defined for floats, so
// usable in a fused program, which computes in f32.
struct UnaryKind {
  const char* kind;
  Unary op;
  bool on_float;
  Domain domain;
};
struct BinaryKind {
  const char* kind;
  Binary op;
  bool on_float;
  Domain domain;
};
inline constexpr UnaryKind kUnaryKinds[] = {
#define BRT_UNARY(e, kind, domain, ...) \
  {kind, Unary::e, UnarySupports<Unary::e, float>(), Domain::domain},
#include "brt/ops.def"
};
inline constexpr BinaryKind kBinaryKinds[] = {
#define BRT_BINARY(e, kind, domain, ...) \
  {kind, Binary::e, BinarySupports<Binary::e, float>(), Domain::domain},
#include "brt/ops.def"
};

// ApplyUnary/ApplyBinary with the op chosen at run time; an op the type does
// not support (the kernel table never asks for one) returns x / a.
template <typename V>
BRT_HD inline V ApplyUnaryAt(Unary op, V x) {
  switch (op) {
#define BRT_UNARY(e, ...)                                                          \
  case Unary::e:                                                                   \
    if constexpr (UnarySupports<Unary::e, V>()) return ApplyUnary<Unary::e, V>(x); \
    break;
#include "brt/ops.def"
  }
  return x;
}

template <typename V>
BRT_HD inline V ApplyBinaryAt(Binary op, V a, V b) {
  switch (op) {
#define BRT_BINARY(e, ...)                                                                \
  case Binary::e:                                                                         \
    if constexpr (BinarySupports<Binary::e, V>()) return ApplyBinary<Binary::e, V>(a, b); \
    break;
#include "brt/ops.def"
  }
  return a;
}

// The activation of brt.matmul and brt.conv epilogues; gelu is the exact
// (erf) form. relu is maximum(x, 0): NaN propagates, -0 becomes +0;
// relu_select is select(x < 0, 0, x), PyTorch's relu: -0 stays -0 too.
enum class Activation { kNone, kRelu, kReluSelect, kTanh, kGelu };

template <typename C>
BRT_HD inline C Activate(Activation a, C x) {
  switch (a) {
    case Activation::kRelu:
      return ApplyBinary<Binary::kMax, C>(x, C(0));
    case Activation::kReluSelect:
      return x < C(0) ? C(0) : x;
    case Activation::kTanh:
      return ApplyUnary<Unary::kTanh, C>(x);
    case Activation::kGelu:
      return C(0.5) * x * (C(1) + ApplyUnary<Unary::kErf, C>(x * C(0.70710678118654752)));
    case Activation::kNone:
      break;
  }
  return x;
}

// The reducers of reduce and reduce_window; and/or/xor take integers or i1,
// logaddexp floats and complex numbers.
enum class Reducer { kAdd, kMul, kMax, kMin, kAnd, kOr, kXor, kLogAddExp };

// The elementwise op a reducer combines with (logaddexp has none: LogAddExp).
constexpr Binary ReducerOp(Reducer r) {
  switch (r) {
    case Reducer::kAdd:
      return Binary::kAdd;
    case Reducer::kMul:
      return Binary::kMul;
    case Reducer::kMax:
      return Binary::kMax;
    case Reducer::kMin:
      return Binary::kMin;
    case Reducer::kAnd:
      return Binary::kAnd;
    case Reducer::kXor:
      return Binary::kXor;
    case Reducer::kOr:
    case Reducer::kLogAddExp:
      break;
  }
  return Binary::kOr;
}

// Calls f(std::integral_constant<Reducer, R>{}) for the runtime reducer r:
// where a kernel takes R as a template argument, one instantiation each.
template <typename F>
decltype(auto) WithReducer(Reducer r, F&& f) {
  switch (r) {
    case Reducer::kAdd:
      return f(std::integral_constant<Reducer, Reducer::kAdd>{});
    case Reducer::kMul:
      return f(std::integral_constant<Reducer, Reducer::kMul>{});
    case Reducer::kMax:
      return f(std::integral_constant<Reducer, Reducer::kMax>{});
    case Reducer::kMin:
      return f(std::integral_constant<Reducer, Reducer::kMin>{});
    case Reducer::kAnd:
      return f(std::integral_constant<Reducer, Reducer::kAnd>{});
    case Reducer::kXor:
      return f(std::integral_constant<Reducer, Reducer::kXor>{});
    case Reducer::kLogAddExp:
      return f(std::integral_constant<Reducer, Reducer::kLogAddExp>{});
    case Reducer::kOr:
      break;
  }
  return f(std::integral_constant<Reducer, Reducer::kOr>{});
}

// log(exp(a) + exp(b)) as jnp.logaddexp computes it (lax.cumlogsumexp's
// reducer): max(a, b) + log1p(exp(-|a - b|)), which neither overflows nor
// loses a small term; a + b where a - b is NaN (a NaN, or two infinities of
// one sign). Complex numbers: ComplexLogAddExp. Integers are refused in
// Prepare (ReducerDefinedFor).
template <typename C>
BRT_HD inline C LogAddExp(C a, C b) {
  if constexpr (kIsComplex<C>) {
    return ComplexLogAddExp(a, b);
  } else if constexpr (kIsFloat<C>) {
    const C d = a - b;
    if (d != d) return a + b;
    return (a > b ? a : b) + std::log1p(std::exp(-std::fabs(d)));
  } else {
    return a;
  }
}

// On i1 (ApplyBinary), add and max reduce as or, mul and min as and, xor as !=.
template <Reducer R, typename C>
BRT_HD inline C Combine(C a, C b) {
  if constexpr (R == Reducer::kLogAddExp)
    return LogAddExp(a, b);
  else
    return ApplyBinary<ReducerOp(R), C>(a, b);  // and/or/xor are refused for floats in Prepare
}

template <typename C>
BRT_HD inline C CombineAt(Reducer r, C a, C b) {
  switch (r) {
    case Reducer::kAdd:
      return Combine<Reducer::kAdd, C>(a, b);
    case Reducer::kMul:
      return Combine<Reducer::kMul, C>(a, b);
    case Reducer::kMax:
      return Combine<Reducer::kMax, C>(a, b);
    case Reducer::kMin:
      return Combine<Reducer::kMin, C>(a, b);
    case Reducer::kAnd:
      return Combine<Reducer::kAnd, C>(a, b);
    case Reducer::kOr:
      return Combine<Reducer::kOr, C>(a, b);
    case Reducer::kXor:
      return Combine<Reducer::kXor, C>(a, b);
    case Reducer::kLogAddExp:
      return Combine<Reducer::kLogAddExp, C>(a, b);
  }
  return a;
}

// reduce_precision (brt/ops.def) on the bits of a float with `src_exponent`
// and `src_mantissa` bits (UInt: its width), to exponent_bits (>= 1) and
// mantissa_bits (>= 0).
template <typename UInt>
BRT_HD inline UInt ReducePrecisionBits(UInt bits, int src_exponent, int src_mantissa,
                                       int64_t exponent_bits, int64_t mantissa_bits) {
  const UInt sign = UInt(1) << (src_exponent + src_mantissa);
  const UInt exponent_mask = ((UInt(1) << src_exponent) - 1) << src_mantissa;
  const bool nan = (bits & ~sign) > exponent_mask;
  UInt x = bits;
  if (mantissa_bits < src_mantissa) {
    // Round to nearest even by adding 0111..1 plus the last kept bit, then
    // dropping the rest; a carry into the exponent is the right result.
    const int dropped = src_mantissa - static_cast<int>(mantissa_bits);
    const UInt last_kept = UInt(1) << dropped;
    x += ((x & last_kept) >> dropped) + (last_kept >> 1) - 1;
    x &= ~(last_kept - 1);
  }
  if (exponent_bits < src_exponent) {
    // Biased exponents of the narrower type's largest finite and of its zero.
    const UInt bias = (UInt(1) << (src_exponent - 1)) - 1;
    const UInt narrow_bias = (UInt(1) << (exponent_bits - 1)) - 1;
    const UInt exponent = x & exponent_mask;
    if (exponent > ((bias + narrow_bias) << src_mantissa))
      x = (x & sign) | exponent_mask;
    else if (exponent <= ((bias - narrow_bias) << src_mantissa))
      x &= sign;
  }
  return nan ? bits : x;
}

}  // namespace brt::ops
