// brt's own CUDA kernels for elementwise ops (unary, binary, compare, select,
// clamp, convert, epilogue activations) and the fused-program interpreter.
#include "kernel_support.cuh"

namespace brt::cuda {
namespace {

// --- elementwise --------------------------------------------------------------

template <typename T>
__global__ void SameTypeKernel(ElementwiseParams p, const void* a, const void* b, const void* c,
                               void* out) {
  using C = typename Num<T>::C;
  BRT_GRID_STRIDE(i, p.space.n) {
    long long off[3];
    Offsets(p.space, i, 3, off);
    C r;
    switch (p.kind) {
      case Elementwise::kUnary:
        r = ops::ApplyUnaryAt<C>(static_cast<Unary>(p.op), LoadAt<T>(a, off[0]));
        break;
      case Elementwise::kBinary:
        r = ops::ApplyBinaryAt<C>(static_cast<Binary>(p.op), LoadAt<T>(a, off[0]),
                                  LoadAt<T>(b, off[1]));
        break;
      case Elementwise::kSelect:
        r = LoadAt<Bool8>(a, off[0]) ? LoadAt<T>(b, off[1]) : LoadAt<T>(c, off[2]);
        break;
      case Elementwise::kClamp: {
        const C lo = LoadAt<T>(a, off[0]), x = LoadAt<T>(b, off[1]), hi = LoadAt<T>(c, off[2]);
        r = ops::ApplyBinary<Binary::kMin, C>(ops::ApplyBinary<Binary::kMax, C>(x, lo), hi);
        break;
      }
      default:
        if constexpr (ops::kIsFloat<C>)
          r = ops::Activate<C>(static_cast<Activation>(p.op), LoadAt<T>(a, off[0]));
        else
          r = LoadAt<T>(a, off[0]);
        break;
    }
    StoreAt<T>(out, i, r);
  }
}

template <typename T>
__global__ void CompareKernel(ElementwiseParams p, const void* a, const void* b, void* out) {
  BRT_GRID_STRIDE(i, p.space.n) {
    long long off[2];
    Offsets(p.space, i, 2, off);
    StoreAt<Bool8>(
        out, i, ops::ApplyCmp(static_cast<Cmp>(p.op), LoadAt<T>(a, off[0]), LoadAt<T>(b, off[1])));
  }
}

template <typename From, typename To>
__global__ void ConvertKernel(long long n, const void* in, void* out) {
  BRT_GRID_STRIDE(i, n) {
    StoreAt<To>(out, i, ops::ConvertScalar<typename Num<To>::C>(LoadAt<From>(in, i)));
  }
}

// --- fused elementwise ------------------------------------------------------------

__device__ float LoadAsFloat(int32_t dtype, const void* p, long long i) {
  switch (dtype) {
    case BRT_DTYPE_F16:
      return LoadAt<__half>(p, i);
    case BRT_DTYPE_BF16:
      return LoadAt<__nv_bfloat16>(p, i);
    case BRT_DTYPE_F64:
      return static_cast<float>(LoadAt<double>(p, i));
    case BRT_DTYPE_I1:
      return LoadAt<Bool8>(p, i) ? 1.f : 0.f;
    case BRT_DTYPE_I8:
      return LoadAt<int8_t>(p, i);
    case BRT_DTYPE_I16:
      return LoadAt<int16_t>(p, i);
    case BRT_DTYPE_I32:
      return static_cast<float>(LoadAt<int32_t>(p, i));
    case BRT_DTYPE_I64:
      return static_cast<float>(LoadAt<int64_t>(p, i));
    case BRT_DTYPE_U8:
      return LoadAt<uint8_t>(p, i);
    case BRT_DTYPE_U16:
      return LoadAt<uint16_t>(p, i);
    case BRT_DTYPE_U32:
      return static_cast<float>(LoadAt<uint32_t>(p, i));
    case BRT_DTYPE_U64:
      return static_cast<float>(LoadAt<uint64_t>(p, i));
  }
  return LoadAt<float>(p, i);
}

struct FusedInputs {
  const void* ptr[kMaxOperands];
};

template <typename T>
__global__ void FusedKernel(FusedParams p, FusedInputs in, void* out) {
  float reg[kMaxFusedRegisters];
  for (int c = 0; c < p.num_constants; ++c) reg[p.num_inputs + c] = p.constants[c];
  BRT_GRID_STRIDE(i, p.space.n) {
    long long off[kMaxOperands];
    Offsets(p.space, i, p.num_inputs, off);
    for (int k = 0; k < p.num_inputs; ++k) reg[k] = LoadAsFloat(p.in_dtypes[k], in.ptr[k], off[k]);
    int last = 0;
    for (int s = 0; s < p.num_instructions; ++s) {
      const float x = reg[p.src[s][0]], y = reg[p.src[s][1]], z = reg[p.src[s][2]];
      float r = x;
      switch (static_cast<Elementwise>(p.kind[s])) {
        case Elementwise::kUnary:
          r = ops::ApplyUnaryAt<float>(static_cast<Unary>(p.op[s]), x);
          break;
        case Elementwise::kBinary:
          r = ops::ApplyBinaryAt<float>(static_cast<Binary>(p.op[s]), x, y);
          break;
        case Elementwise::kCompare:
          r = ops::ApplyCmp(static_cast<Cmp>(p.op[s]), x, y) ? 1.f : 0.f;
          break;
        case Elementwise::kSelect:
          r = x != 0.f ? y : z;
          break;
        case Elementwise::kClamp:
          r = ops::ApplyBinary<Binary::kMin, float>(ops::ApplyBinary<Binary::kMax, float>(y, x), z);
          break;
        default:
          break;
      }
      last = p.dst[s];
      reg[last] = r;
    }
    StoreAt<T>(out, i, reg[last]);
  }
}

// real, imag and abs of complex numbers of part type P, and complex of two
// parts.
template <typename P>
__global__ void ComplexPartKernel(ComplexPart part, long long n, const void* a, const void* b,
                                  void* out) {
  using Z = ::cuda::std::complex<P>;
  BRT_GRID_STRIDE(i, n) {
    if (part == ComplexPart::kMake) {
      static_cast<Z*>(out)[i] = Z(static_cast<const P*>(a)[i], static_cast<const P*>(b)[i]);
    } else {
      const Z z = static_cast<const Z*>(a)[i];
      static_cast<P*>(out)[i] = part == ComplexPart::kReal   ? z.real()
                                : part == ComplexPart::kImag ? z.imag()
                                                             : ::cuda::std::abs(z);
    }
  }
}

}  // namespace

cudaError_t LaunchComplexPart(ComplexPart part, int32_t complex_dtype, long long n, const void* a,
                              const void* b, void* out, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (complex_dtype == BRT_DTYPE_C64)
    Launch(&ComplexPartKernel<float>, Blocks(n), kThreads, stream, part, n, a, b, out);
  else if (complex_dtype == BRT_DTYPE_C128)
    Launch(&ComplexPartKernel<double>, Blocks(n), kThreads, stream, part, n, a, b, out);
  else
    return cudaErrorInvalidValue;
  return LastError();
}

Space MakeSpace(const ops::BroadcastPlan& plan, int num_operands, long long n) {
  Space s;
  s.rank = plan.rank();
  s.n = n;
  for (int d = 0; d < s.rank; ++d) {
    s.dims[d] = plan.dim(d);
    for (int k = 0; k < num_operands; ++k) s.strides[k][d] = plan.stride(k, d);
  }
  return s;
}

cudaError_t LaunchElementwise(const ElementwiseParams& p, int32_t in_dtype, int32_t out_dtype,
                              const void* const* in, void* out, cudaStream_t stream) {
  if (p.space.n == 0) return cudaSuccess;
  const unsigned blocks = Blocks(p.space.n);
  bool known = false;
  if (p.kind == Elementwise::kConvert) {
    bool to_known = false;
    known = DispatchOrComplex(in_dtype, [&](auto from) {
      to_known = DispatchOrComplex(out_dtype, [&](auto to) {
        Launch(&ConvertKernel<typename decltype(from)::type, typename decltype(to)::type>, blocks,
               kThreads, stream, p.space.n, in[0], out);
      });
    });
    known = known && to_known;
  } else if (p.kind == Elementwise::kCompare) {
    known = DispatchOrComplex(in_dtype, [&](auto t) {
      Launch(&CompareKernel<typename decltype(t)::type>, blocks, kThreads, stream, p, in[0], in[1],
             out);
    });
  } else {
    const int arity = p.kind == Elementwise::kUnary || p.kind == Elementwise::kActivation ? 1
                      : p.kind == Elementwise::kBinary                                    ? 2
                                                                                          : 3;
    known = DispatchOrComplex(out_dtype, [&](auto t) {
      Launch(&SameTypeKernel<typename decltype(t)::type>, blocks, kThreads, stream, p, in[0],
             arity > 1 ? in[1] : nullptr, arity > 2 ? in[2] : nullptr, out);
    });
  }
  return known ? LastError() : cudaErrorInvalidValue;
}

cudaError_t LaunchFused(const FusedParams& p, int32_t out_dtype, const void* const* in, void* out,
                        cudaStream_t stream) {
  if (p.space.n == 0) return cudaSuccess;
  FusedInputs inputs{};
  for (int k = 0; k < p.num_inputs; ++k) inputs.ptr[k] = in[k];
  const unsigned blocks = Blocks(p.space.n);
  switch (out_dtype) {
    case BRT_DTYPE_F32:
      Launch(&FusedKernel<float>, blocks, kThreads, stream, p, inputs, out);
      break;
    case BRT_DTYPE_F16:
      Launch(&FusedKernel<__half>, blocks, kThreads, stream, p, inputs, out);
      break;
    case BRT_DTYPE_BF16:
      Launch(&FusedKernel<__nv_bfloat16>, blocks, kThreads, stream, p, inputs, out);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return LastError();
}

CopyParams MakeCopy(const ops::StridedCopy& c) {
  CopyParams p;
  p.rank = c.rank;
  p.n = 1;
  for (int d = 0; d < c.rank; ++d) {
    p.dims[d] = c.dims[d], p.src_strides[d] = c.src_strides[d], p.dst_strides[d] = c.dst_strides[d];
    p.n *= c.dims[d];
  }
  return p;
}

}  // namespace brt::cuda
