/*
 * box_stream_avx512.c - the streamed box filter kernel (box_stream_kernel.h)
 * compiled with the avx512 flags of cpu/isa_flags.txt; called by box.stream
 * only when the CPU has them (src/cpu/isa.h).
 */
#define PSI_BOX_FN psi_box_stream_avx512
#include "box_stream_kernel.h"
