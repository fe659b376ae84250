/*
 * box_stream_avx2.c - the streamed box filter kernel (box_stream_kernel.h)
 * compiled with the avx2 flags of cpu/isa_flags.txt; called by box.stream
 * only when the CPU has them (src/cpu/isa.h).
 */
#define PSI_BOX_FN psi_box_stream_avx2
#include "box_stream_kernel.h"
