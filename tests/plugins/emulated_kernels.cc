// kernels.cu compiled as C++ for the host emulation (see emulation.h).
#define BRT_CUDA_EMULATION 1
#include "cuda/kernels.cu"
