/*
 * volume_box.c - a 3-D integral volume (paper 003) and the 8-corner box sum,
 * in the zero-padded layout OpenCV and NPP users know, with a method chosen by
 * name. Exits non-zero if a box sum differs from the direct sum.
 */
#include <pixsum.h>

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    enum { W = 37, H = 23, D = 11 };
    static uint16_t volume[D][H][W];
    for (int z = 0; z < D; z++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                volume[z][y][x] = (uint16_t)(x * 1000 + y * 77 + z * 3001);

    pixsum_ctx *ctx = pixsum_ctx_new();
    if (!ctx || pixsum_ctx_set(ctx, PIXSUM_PARAM_PADDED, 1) != PIXSUM_OK ||
        pixsum_ctx_set_method(ctx, "serial.dual") != PIXSUM_OK)
        return 1;
    pixsum_view in = pixsum_view_3d(volume, PIXSUM_U16, W, H, D, 1, 0, 0);
    size_t tw, th, td;
    pixsum_integral_shape(ctx, &in, &tw, &th, &td); /* (W+1) x (H+1) x (D+1) */
    uint64_t *table = calloc(tw * th * td, sizeof *table);
    if (!table)
        return 1;
    pixsum_view out = pixsum_view_3d(table, PIXSUM_U64, tw, th, td, 1, 0, 0);
    int st = pixsum_integral(ctx, &in, &out);
    if (st != PIXSUM_OK) {
        fprintf(stderr, "%s: %s\n", pixsum_strerror(st), pixsum_last_error());
        return 1;
    }
    pixsum_box box = {3, 4, 2, 20, 10, 7};
    uint64_t got = 0, want = 0;
    if (pixsum_box_sum(ctx, &out, &box, &got) != PIXSUM_OK)
        return 1;
    for (size_t z = box.z; z < box.z + box.d; z++)
        for (size_t y = box.y; y < box.y + box.h; y++)
            for (size_t x = box.x; x < box.x + box.w; x++)
                want += volume[z][y][x];
    printf("%zux%zux%zu table; box sum %llu (direct %llu)\n", tw, th, td,
           (unsigned long long)got, (unsigned long long)want);
    free(table);
    pixsum_ctx_free(ctx);
    return got == want ? 0 : 1;
}
