// fused_blocks.inc for CPUs with AVX2 and FMA (built with -mavx2 -mfma).
#define BRT_FUSED_ISA avx2
#define BRT_FUSED_ISA_NAME "avx2"
#include "fused_blocks.inc"
