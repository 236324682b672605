// fft, and complex reduce, reduce_window, scatter, dot_general and the
// complex-only ops, on random c64 and c128 data against long double
// references (the DFT by its definition, loops): on the CPU provider, the
// CUDA provider's own kernels and cuFFT steps (the _cuda_emulated run, and
// the GPU suite on a real GPU). Part of ops_complex_test.
#include <algorithm>
#include <complex>
#include <cstring>
#include <functional>
#include <numeric>
#include <string>
#include <thread>

#include "complex_test_util.h"

namespace brt::test {
namespace {

const long double kPi = 3.14159265358979323846264338327950288L;

DType PartOf(DType t) { return t == DType::kC64 ? DType::kF32 : DType::kF64; }

// The unscaled DFT of every line along `axis` of a row-major `dims` array.
void DftAxis(std::vector<Z>& x, const std::vector<int64_t>& dims, size_t axis, bool inverse) {
  int64_t stride = 1;
  for (size_t d = axis + 1; d < dims.size(); ++d) stride *= dims[d];
  const int64_t n = dims[axis], outer = static_cast<int64_t>(x.size()) / (n * stride);
  std::vector<Z> line(n);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t s = 0; s < stride; ++s) {
      Z* base = x.data() + o * n * stride + s;
      for (int64_t k = 0; k < n; ++k) {
        line[k] = 0;
        for (int64_t j = 0; j < n; ++j)
          line[k] +=
              base[j * stride] * std::polar(1.0L, (inverse ? 2 : -2) * kPi * ((k * j) % n) / n);
      }
      for (int64_t k = 0; k < n; ++k) base[k * stride] = line[k];
    }
}

// fft by its definition on `in` (values as long double) of shape `dims`,
// whose innermost lengths.size() dims are transformed. IRFFT: the outer
// dims inverted, then each line of the last extended by Hermitian symmetry,
// the imaginary parts of frequency 0 and n/2 not counting (XLA's).
std::vector<Z> FftReference(const std::string& type, std::vector<Z> x, std::vector<int64_t> dims,
                            const std::vector<int64_t>& lengths) {
  const size_t first = dims.size() - lengths.size(), last = dims.size() - 1;
  const int64_t n = lengths.back();
  long double scale = 1;
  for (int64_t l : lengths) scale *= l;
  const bool inverse = type[0] == 'I';
  if (type == "IRFFT") {
    for (size_t a = first; a < last; ++a) DftAxis(x, dims, a, true);
    const int64_t half = dims[last], lines = static_cast<int64_t>(x.size()) / half;
    std::vector<Z> out;
    for (int64_t line = 0; line < lines; ++line) {
      std::vector<Z> e(n);
      for (int64_t k = 0; k < n; ++k)
        e[k] = k < half ? x[line * half + k] : std::conj(x[line * half + n - k]);
      e[0].imag(0);
      if (n % 2 == 0) e[n / 2].imag(0);
      DftAxis(e, {n}, 0, true);
      for (const Z& v : e) out.push_back(Z(v.real() / scale));
    }
    return out;
  }
  for (size_t a = first; a <= last; ++a) DftAxis(x, dims, a, inverse);
  if (inverse)
    for (Z& v : x) v /= scale;
  if (type != "RFFT") return x;
  std::vector<Z> half;
  for (size_t i = 0; i < x.size(); ++i)
    if (static_cast<int64_t>(i) % n <= n / 2) half.push_back(x[i]);
  return half;
}

struct FftCase {
  const char* type;
  std::vector<int64_t> dims;  // the real side's (FFT, IFFT: the operand's)
  std::vector<int64_t> lengths;
};

// Odd, even, prime and unit lengths, 1-D to 3-D transforms, with and
// without batches, and an empty batch.
const FftCase kFftCases[] = {
    {"FFT", {3, 7}, {7}},
    {"IFFT", {2, 5, 6}, {5, 6}},
    {"FFT", {2, 3, 4, 5}, {3, 4, 5}},
    {"IFFT", {3, 3, 5}, {3, 3, 5}},
    {"FFT", {64}, {64}},
    {"RFFT", {4, 9}, {9}},
    {"RFFT", {2, 8}, {8}},
    {"RFFT", {2, 3, 4, 6}, {3, 4, 6}},
    {"IRFFT", {3, 9}, {9}},
    {"IRFFT", {2, 5, 8}, {5, 8}},
    {"IRFFT", {2, 3, 4, 6}, {3, 4, 6}},
    {"IRFFT", {5, 2}, {2}},
    {"IRFFT", {3, 1}, {1}},
    {"RFFT", {2, 1}, {1}},
    {"FFT", {2, 97}, {97}},
    {"RFFT", {3, 5, 7, 11}, {5, 7, 11}},
    {"IRFFT", {2, 5, 7, 11}, {5, 7, 11}},
    {"FFT", {0, 8}, {8}},
};

// Every case on random data; IRFFT on random (not Hermitian) half spectra,
// so what becomes of the parts that do not count is checked too.
TEST(ComplexFft, EveryTypeAndRankMatchesTheDefinition) {
  for (DType t : {DType::kC64, DType::kC128})
    for (const FftCase& c : kFftCases) {
      const std::string type = c.type;
      std::vector<int64_t> spectrum = c.dims;
      if (type == "RFFT" || type == "IRFFT") spectrum.back() = c.dims.back() / 2 + 1;
      const bool real_in = type == "RFFT", real_out = type == "IRFFT";
      const std::vector<int64_t>& in_dims = real_in ? c.dims : spectrum;
      const std::vector<int64_t>& out_dims = real_out ? c.dims : spectrum;
      HostTensor x = Random(real_in ? PartOf(t) : t, in_dims, Rng(), -1, 1);
      std::vector<Z> values;
      for (int64_t i = 0; i < x.numel(); ++i) values.push_back(real_in ? Z(x.Get(i)) : At(x, i));
      auto out = MustRunOp({"fft",
                            {x},
                            {{real_out ? PartOf(t) : t, Dims(out_dims)}},
                            {{"fft_type", c.type}, {"fft_length", c.lengths}}});
      const std::vector<Z> want = FftReference(type, values, in_dims, c.lengths);
      EXPECT_LE(RelErr(out[0], want), t == DType::kC64 ? 2e-6 : 1e-14)
          << type << " of " << ::testing::PrintToString(in_dims) << " on " << DTypeName(t);
    }
}

// One session, contexts on 4 threads running a 3-D FFT and a 3-D IRFFT
// (each context has a cuFFT plan of its own; later runs replay a graph) on
// inputs of their own, round after round: every result bit-identical to one
// context's run of the same input.
TEST(ComplexFft, ContextsOnThreadsShareThePreparedKernel) {
  const std::vector<int64_t> x_dims = {2, 3, 4, 6}, h_dims = {2, 3, 4, 4};
  const std::vector<int64_t> lengths = {3, 4, 6};
  ExecutableBuilder b("fft-threads");
  FunctionBuilder& f = b.AddFunction("main");
  const Device device = TestDevice();
  ValueId x = f.Input("x", DType::kC64, Dims(x_dims), device);
  ValueId h = f.Input("h", DType::kC64, Dims(h_dims), device);
  f.Output("y", f.Op("fft", {x}, {{DType::kC64, Dims(x_dims)}},
                     {{"fft_type", "FFT"}, {"fft_length", lengths}}, device)[0]);
  f.Output("r", f.Op("fft", {h}, {{DType::kF32, Dims(x_dims)}},
                     {{"fft_type", "IRFFT"}, {"fft_length", lengths}}, device)[0]);
  auto session = LoadBuilt(b, TestOptions());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  const int inputs = 3, threads = 4, rounds = 6;
  std::vector<HostTensor> xs, hs;
  for (int i = 0; i < inputs; ++i) {
    xs.push_back(Random(DType::kC64, x_dims, Rng()));
    hs.push_back(Random(DType::kC64, h_dims, Rng()));
  }
  // Runs input i on ctx; the results' bytes.
  auto run = [&](RequestContext& ctx, int i) -> std::vector<char> {
    HostTensor xi = xs[i], hi = hs[i], y(DType::kC64, x_dims), r(DType::kF32, x_dims);
    if (!ctx.Bind("x", xi.view()).ok() || !ctx.Bind("h", hi.view()).ok() ||
        !ctx.Bind("y", y.view()).ok() || !ctx.Bind("r", r.view()).ok() || !ctx.Run().ok())
      return {};
    std::vector<char> bytes(y.num_bytes() + r.num_bytes());
    std::memcpy(bytes.data(), y.data(), y.num_bytes());
    std::memcpy(bytes.data() + y.num_bytes(), r.data(), r.num_bytes());
    return bytes;
  };
  std::vector<std::vector<char>> expected;
  for (int i = 0; i < inputs; ++i) {
    auto ctx = (*session)->NewRequest();
    ASSERT_TRUE(ctx.ok()) << ctx.status().ToString();
    expected.push_back(run(**ctx, i));
    ASSERT_FALSE(expected.back().empty()) << "input " << i;
  }
  std::vector<int> mismatches(threads, 0);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      auto ctx = (*session)->NewRequest();
      if (!ctx.ok()) return void(mismatches[t] = -1);
      for (int k = 0; k < rounds * inputs; ++k)
        mismatches[t] += run(**ctx, (k + t) % inputs) != expected[(k + t) % inputs];
    });
  for (std::thread& th : pool) th.join();
  for (int t = 0; t < threads; ++t) EXPECT_EQ(mismatches[t], 0) << "thread " << t;
}

Z Combine(const std::string& reducer, Z a, Z b) {
  if (reducer == "add") return a + b;
  if (reducer == "mul") return a * b;
  if (reducer == "max") return Less(a, b) ? b : a;
  return Less(b, a) ? b : a;
}

// reduce over the last dim (long rows are split across blocks on CUDA) and
// the first, by every reducer, from a random init, against loops.
TEST(ComplexReduce, EveryReducerAlongRowsAndColumns) {
  struct Shape {
    int64_t rows, cols;
  };
  for (DType t : {DType::kC64, DType::kC128})
    for (Shape s : {Shape{3, 37}, Shape{2, 5000}, Shape{300, 5}})
      for (const std::string reducer : {"add", "mul", "max", "min"})
        for (int64_t dim : {0, 1}) {
          HostTensor x = RandomComplex(t, {s.rows, s.cols}), init = RandomComplex(t, {});
          if (reducer == "mul")  // products of unit magnitude neither vanish nor overflow
            for (int64_t i = 0; i < x.numel(); ++i) SetAt(x, i, std::polar(1.0L, At(x, i).real()));
          const int64_t kept = dim == 0 ? s.cols : s.rows, reduced = dim == 0 ? s.rows : s.cols;
          auto out = MustRunOp({"reduce",
                                {x, init},
                                {{t, {kept}}},
                                {{"dimensions", std::vector<int64_t>{dim}}, {"reducer", reducer}}});
          std::vector<Z> want;
          for (int64_t k = 0; k < kept; ++k) {
            Z acc = At(init, 0);
            for (int64_t r = 0; r < reduced; ++r)
              acc = Combine(reducer, acc, At(x, dim == 0 ? r * s.cols + k : k * s.cols + r));
            want.push_back(acc);
          }
          const double tol = reducer == "add" || reducer == "mul"
                                 ? (t == DType::kC64 ? 2e-5 : 1e-12)
                                 : 0;  // max and min pick an element
          EXPECT_LE(RelErr(out[0], want), tol) << reducer << " over dim " << dim << " of " << s.rows
                                               << "x" << s.cols << " on " << DTypeName(t);
        }
}

// A strided, padded 2-D window sum and max, against loops (the padding adds
// nothing but the init value).
TEST(ComplexReduce, WindowsWithStridesAndPadding) {
  const int64_t h = 7, w = 6, oh = 4, ow = 3;  // window 3x2, strides 2x2, rows padded by 1 and 1
  for (DType t : {DType::kC64, DType::kC128})
    for (const std::string reducer : {"add", "max"}) {
      HostTensor x = RandomComplex(t, {h, w}), init = RandomComplex(t, {});
      auto out = MustRunOp({"reduce_window",
                            {x, init},
                            {{t, {oh, ow}}},
                            {{"window_dimensions", std::vector<int64_t>{3, 2}},
                             {"window_strides", std::vector<int64_t>{2, 2}},
                             {"padding", std::vector<int64_t>{1, 1, 0, 0}},
                             {"reducer", reducer}}});
      std::vector<Z> want;
      for (int64_t i = 0; i < oh; ++i)
        for (int64_t j = 0; j < ow; ++j) {
          Z acc = At(init, 0);
          for (int64_t a = 0; a < 3; ++a)
            for (int64_t b = 0; b < 2; ++b) {
              const int64_t r = i * 2 + a - 1, c = j * 2 + b;
              if (r >= 0 && r < h) acc = Combine(reducer, acc, At(x, r * w + c));
            }
          want.push_back(acc);
        }
      EXPECT_LE(RelErr(out[0], want), reducer == "add" ? 1e-6 : 0)
          << reducer << " on " << DTypeName(t);
    }
}

// Rows of updates scattered into a [n, 3] operand by random indices that
// repeat (and one out of range, dropped), every mode: the combiners against
// a loop in index order (sums and products in any order, so to a
// tolerance); replace keeps one of the updates that reached an element.
TEST(ComplexScatter, EveryModeWithDuplicateIndices) {
  const int64_t n = 6, row = 3, m = 40;
  std::uniform_int_distribution<int> index(0, static_cast<int>(n) - 1);
  std::vector<double> at;
  for (int64_t i = 0; i < m; ++i) at.push_back(i == 7 ? double(n) : index(Rng()));
  HostTensor idx = HostTensor::FromDouble(DType::kI64, {m, 1}, at);
  for (DType t : {DType::kC64, DType::kC128})
    for (const std::string mode : {"add", "mul", "max", "min", "replace"}) {
      HostTensor x = RandomComplex(t, {n, row}), upd = RandomComplex(t, {m, row});
      if (mode == "mul")
        for (int64_t i = 0; i < upd.numel(); ++i)
          SetAt(upd, i, std::polar(1.0L, At(upd, i).real()));
      std::vector<Attribute> attrs = {{"update_window_dims", std::vector<int64_t>{1}},
                                      {"inserted_window_dims", std::vector<int64_t>{0}},
                                      {"scatter_dims_to_operand_dims", std::vector<int64_t>{0}},
                                      {"index_vector_dim", int64_t{1}},
                                      {"mode", mode}};
      auto out = MustRunOp({"scatter", {x, idx, upd}, {{t, {n, row}}}, attrs});
      std::vector<Z> want;
      for (int64_t i = 0; i < x.numel(); ++i) want.push_back(At(x, i));
      std::vector<std::vector<Z>> reached(x.numel());
      for (int64_t i = 0; i < m; ++i) {
        if (at[i] >= n) continue;
        for (int64_t c = 0; c < row; ++c) {
          const int64_t e = static_cast<int64_t>(at[i]) * row + c;
          want[e] = Combine(mode, want[e], At(upd, i * row + c));
          reached[e].push_back(At(upd, i * row + c));
        }
      }
      if (mode == "replace") {
        for (int64_t e = 0; e < x.numel(); ++e) {
          const Z got = At(out[0], e);
          const bool one_of = reached[e].empty() ? got == At(x, e)
                                                 : std::find(reached[e].begin(), reached[e].end(),
                                                             got) != reached[e].end();
          EXPECT_TRUE(one_of) << "replace on " << DTypeName(t) << " at " << e;
        }
        continue;
      }
      const double tol = mode == "max" || mode == "min" ? 0 : (t == DType::kC64 ? 1e-5 : 1e-13);
      EXPECT_LE(RelErr(out[0], want), tol) << mode << " on " << DTypeName(t);
    }
}

// Batched complex matmuls against a long double loop: operands in place
// (the rhs transposed or not: cuBLASLt's layouts on CUDA) and one
// contracting two dims in another order (packed first).
TEST(ComplexDot, BatchedLayoutsAgainstALoop) {
  struct Spec {
    std::vector<int64_t> lhs, rhs, lc, rc;
  };
  const int64_t b = 2, m = 5, n = 4;
  const Spec specs[] = {
      {{b, m, 33}, {b, 33, n}, {2}, {1}},
      {{b, m, 33}, {b, n, 33}, {2}, {2}},
      {{b, m, 3, 2}, {b, 2, n, 3}, {2, 3}, {3, 1}},
  };
  for (DType t : {DType::kC64, DType::kC128})
    for (const Spec& s : specs) {
      HostTensor lhs = Random(t, s.lhs, Rng()), rhs = Random(t, s.rhs, Rng());
      auto out = MustRunOp({"dot_general",
                            {lhs, rhs},
                            {{t, {b, m, n}}},
                            {{"lhs_batching_dimensions", std::vector<int64_t>{0}},
                             {"rhs_batching_dimensions", std::vector<int64_t>{0}},
                             {"lhs_contracting_dimensions", s.lc},
                             {"rhs_contracting_dimensions", s.rc}}});
      // The contracting index walks lhs's contracting dims in order; rhs's
      // pair with them.
      std::vector<int64_t> k_dims;
      for (int64_t d : s.lc) k_dims.push_back(s.lhs[d]);
      const int64_t k_n =
          std::accumulate(k_dims.begin(), k_dims.end(), int64_t{1}, std::multiplies<int64_t>());
      std::vector<Z> want;
      for (int64_t i = 0; i < b; ++i)
        for (int64_t r = 0; r < m; ++r)
          for (int64_t c = 0; c < n; ++c) {
            Z acc = 0;
            for (int64_t k = 0; k < k_n; ++k) {
              const std::vector<int64_t> kk = Unravel(k, k_dims);
              std::vector<int64_t> li = {i, r, 0, 0}, ri(s.rhs.size(), 0);
              li.resize(s.lhs.size());
              ri[0] = i;
              for (size_t q = 0; q < s.lc.size(); ++q) li[s.lc[q]] = kk[q], ri[s.rc[q]] = kk[q];
              for (size_t d = 1; d < ri.size(); ++d)
                if (std::find(s.rc.begin(), s.rc.end(), int64_t(d)) == s.rc.end()) ri[d] = c;
              acc += At(lhs, Ravel(li, s.lhs)) * At(rhs, Ravel(ri, s.rhs));
            }
            want.push_back(acc);
          }
      EXPECT_LE(RelErr(out[0], want), t == DType::kC64 ? 4e-6 : 1e-14)
          << ::testing::PrintToString(s.lhs) << " x " << ::testing::PrintToString(s.rhs) << " on "
          << DTypeName(t);
    }
}

}  // namespace
}  // namespace brt::test
