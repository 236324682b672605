// brt's CUDA kernel files compiled as C++ for the host emulation (see
// emulation.h).
#define BRT_CUDA_EMULATION 1
#include "cuda/kernels_data.cu"
#include "cuda/kernels_elementwise.cu"
#include "cuda/kernels_math.cu"
