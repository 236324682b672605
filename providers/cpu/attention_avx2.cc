// attention.inc for CPUs with AVX2 and FMA (built with -mavx2 -mfma).
#define BRT_FUSED_ISA avx2
#include "attention.inc"
