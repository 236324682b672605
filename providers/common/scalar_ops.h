// Scalar semantics of the elementwise ops, on compute types (float for the
// 16-bit floats, bool for i1), shared by the CPU provider's loops and the
// CUDA provider's kernels so both compute the same values. Integer
// arithmetic wraps and never divides by zero (StableHLO leaves those cases
// implementation-defined; the choices follow XLA).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

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

// Every unary and binary op kind: X(enumerator, op kind name). The enums,
// the name tables and the run-time dispatch below, and the CPU provider's
// kernel tables, are all made from these lists.
#define BRT_UNARY_OPS(X)                                                                           \
  X(kNegate, "negate")                                                                             \
  X(kAbs, "abs") X(kExp, "exponential") X(kExpm1, "exponential_minus_one") X(kLog, "log")          \
      X(kLog1p, "log_plus_one") X(kSqrt, "sqrt") X(kRsqrt, "rsqrt") X(kTanh, "tanh")               \
          X(kLogistic, "logistic") X(kSin, "sine") X(kCos, "cosine") X(kFloor, "floor")            \
              X(kCeil, "ceil") X(kRoundEven, "round_nearest_even") X(kSign, "sign") X(kErf, "erf") \
                  X(kNot, "not")
#define BRT_BINARY_OPS(X)                                                                         \
  X(kAdd, "add")                                                                                  \
  X(kSub, "subtract") X(kMul, "multiply") X(kDiv, "divide") X(kMax, "maximum") X(kMin, "minimum") \
      X(kPow, "power") X(kRem, "remainder") X(kAnd, "and") X(kOr, "or")

#define BRT_ENUMERATOR(e, name) e,
enum class Unary { BRT_UNARY_OPS(BRT_ENUMERATOR) };
enum class Binary { BRT_BINARY_OPS(BRT_ENUMERATOR) };
#undef BRT_ENUMERATOR

template <Unary OP, typename V>
constexpr bool UnarySupports() {
  if constexpr (std::is_same_v<V, bool>) return OP == Unary::kNot;
  if constexpr (kIsInt<V>)
    return OP == Unary::kNegate || OP == Unary::kAbs || OP == Unary::kSign || OP == Unary::kNot;
  return OP != Unary::kNot;
}

template <Unary OP, typename V>
BRT_HD inline V ApplyUnary(V x) {
  if constexpr (std::is_same_v<V, bool>) {
    return !x;
  } else if constexpr (kIsInt<V>) {
    if constexpr (OP == Unary::kNegate) return WrapSub<V>(0, x);
    if constexpr (OP == Unary::kAbs) return x < 0 ? WrapSub<V>(0, x) : x;
    if constexpr (OP == Unary::kSign) return static_cast<V>((x > 0) - (x < 0));
    if constexpr (OP == Unary::kNot) return static_cast<V>(~x);
  } else {
    if constexpr (OP == Unary::kNegate) return -x;
    if constexpr (OP == Unary::kAbs) return std::fabs(x);
    if constexpr (OP == Unary::kExp) return std::exp(x);
    if constexpr (OP == Unary::kExpm1) return std::expm1(x);
    if constexpr (OP == Unary::kLog) return std::log(x);
    if constexpr (OP == Unary::kLog1p) return std::log1p(x);
    if constexpr (OP == Unary::kSqrt) return std::sqrt(x);
    if constexpr (OP == Unary::kRsqrt) return V(1) / std::sqrt(x);
    if constexpr (OP == Unary::kTanh) return std::tanh(x);
    if constexpr (OP == Unary::kLogistic) return V(1) / (V(1) + std::exp(-x));
    if constexpr (OP == Unary::kSin) return std::sin(x);
    if constexpr (OP == Unary::kCos) return std::cos(x);
    if constexpr (OP == Unary::kFloor) return std::floor(x);
    if constexpr (OP == Unary::kCeil) return std::ceil(x);
    if constexpr (OP == Unary::kRoundEven) return std::nearbyint(x);
    if constexpr (OP == Unary::kSign) return std::isnan(x) ? x : (x > 0 ? V(1) : x < 0 ? V(-1) : x);
    if constexpr (OP == Unary::kErf) return std::erf(x);
  }
  return x;
}

template <Binary OP, typename V>
constexpr bool BinarySupports() {
  if constexpr (std::is_same_v<V, bool>)
    return OP == Binary::kAnd || OP == Binary::kOr || OP == Binary::kMax || OP == Binary::kMin;
  if constexpr (kIsFloat<V>) return OP != Binary::kAnd && OP != Binary::kOr;
  return true;
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

template <Binary OP, typename V>
BRT_HD inline V ApplyBinary(V a, V b) {
  if constexpr (std::is_same_v<V, bool>) {
    if constexpr (OP == Binary::kAnd || OP == Binary::kMin) return a && b;
    return a || b;
  } else if constexpr (kIsInt<V>) {
    if constexpr (OP == Binary::kAdd) return WrapAdd(a, b);
    if constexpr (OP == Binary::kSub) return WrapSub(a, b);
    if constexpr (OP == Binary::kMul) return WrapMul(a, b);
    if constexpr (OP == Binary::kMax) return a > b ? a : b;
    if constexpr (OP == Binary::kMin) return a < b ? a : b;
    if constexpr (OP == Binary::kAnd) return static_cast<V>(a & b);
    if constexpr (OP == Binary::kOr) return static_cast<V>(a | b);
    if constexpr (OP == Binary::kPow) return IntPow(a, b);
    if constexpr (OP == Binary::kDiv || OP == Binary::kRem) {
      if (b == 0) return OP == Binary::kDiv ? static_cast<V>(-1) : a;
      if constexpr (std::is_signed_v<V>)
        if (a == std::numeric_limits<V>::min() && b == -1) return OP == Binary::kDiv ? a : V(0);
      return OP == Binary::kDiv ? static_cast<V>(a / b) : static_cast<V>(a % b);
    }
  } else {
    if constexpr (OP == Binary::kAdd) return a + b;
    if constexpr (OP == Binary::kSub) return a - b;
    if constexpr (OP == Binary::kMul) return a * b;
    if constexpr (OP == Binary::kDiv) return a / b;
    // NaN propagates through maximum/minimum, as in StableHLO.
    if constexpr (OP == Binary::kMax) return (a > b || std::isnan(a)) ? a : b;
    if constexpr (OP == Binary::kMin) return (a < b || std::isnan(a)) ? a : b;
    if constexpr (OP == Binary::kPow) return std::pow(a, b);
    if constexpr (OP == Binary::kRem) return std::fmod(a, b);
  }
  return a;
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

// Conversion between compute types (StableHLO convert): to i1 tests for
// non-zero; float to integer saturates and maps NaN to 0 (out-of-range
// float->int is undefined in C++).
template <typename CT, typename CF>
BRT_HD inline CT ConvertScalar(CF v) {
  if constexpr (std::is_same_v<CT, bool>) {
    return v != CF(0);
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
};
struct BinaryKind {
  const char* kind;
  Binary op;
  bool on_float;
};
#define BRT_UNARY_KIND(e, name) {name, Unary::e, UnarySupports<Unary::e, float>()},
#define BRT_BINARY_KIND(e, name) {name, Binary::e, BinarySupports<Binary::e, float>()},
inline constexpr UnaryKind kUnaryKinds[] = {BRT_UNARY_OPS(BRT_UNARY_KIND)};
inline constexpr BinaryKind kBinaryKinds[] = {BRT_BINARY_OPS(BRT_BINARY_KIND)};
#undef BRT_UNARY_KIND
#undef BRT_BINARY_KIND

// ApplyUnary/ApplyBinary with the op chosen at run time; an op the type does
// not support (the kernel table never asks for one) returns x / a.
template <typename V>
BRT_HD inline V ApplyUnaryAt(Unary op, V x) {
#define BRT_UNARY_CASE(e, name)                                                    \
  case Unary::e:                                                                   \
    if constexpr (UnarySupports<Unary::e, V>()) return ApplyUnary<Unary::e, V>(x); \
    break;
  switch (op) { BRT_UNARY_OPS(BRT_UNARY_CASE) }
#undef BRT_UNARY_CASE
  return x;
}

template <typename V>
BRT_HD inline V ApplyBinaryAt(Binary op, V a, V b) {
#define BRT_BINARY_CASE(e, name)                                                          \
  case Binary::e:                                                                         \
    if constexpr (BinarySupports<Binary::e, V>()) return ApplyBinary<Binary::e, V>(a, b); \
    break;
  switch (op) { BRT_BINARY_OPS(BRT_BINARY_CASE) }
#undef BRT_BINARY_CASE
  return a;
}

// The reducers of reduce and reduce_window; and/or take integers or i1.
enum class Reducer { kAdd, kMul, kMax, kMin, kAnd, kOr };

template <Reducer R, typename C>
BRT_HD inline C Combine(C a, C b) {
  if constexpr (std::is_same_v<C, bool>) {
    if constexpr (R == Reducer::kAnd || R == Reducer::kMin || R == Reducer::kMul) return a && b;
    return a || b;
  } else if constexpr (std::is_integral_v<C>) {
    using U = std::make_unsigned_t<C>;
    if constexpr (R == Reducer::kAdd) return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
    if constexpr (R == Reducer::kMul)
      return static_cast<C>(static_cast<uint64_t>(static_cast<U>(a)) * static_cast<U>(b));
    if constexpr (R == Reducer::kMax) return a > b ? a : b;
    if constexpr (R == Reducer::kMin) return a < b ? a : b;
    if constexpr (R == Reducer::kAnd) return static_cast<C>(a & b);
    return static_cast<C>(a | b);
  } else {
    if constexpr (R == Reducer::kAdd) return a + b;
    if constexpr (R == Reducer::kMul) return a * b;
    if constexpr (R == Reducer::kMax) return (a > b || std::isnan(a)) ? a : b;
    if constexpr (R == Reducer::kMin) return (a < b || std::isnan(a)) ? a : b;
    return a;  // and/or are rejected for floats in Prepare
  }
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
  }
  return a;
}

}  // namespace brt::ops
