/*
 * integral_and_boxes.c - the everyday use of pixsum: build the integral image
 * and the squared integral of an 8-bit image once, then answer box sums, means
 * and variances in constant time each. Checks its answers against direct sums
 * and exits non-zero if any differs.
 */
#include <pixsum.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define W 640
#define H 480

int main(void)
{
    uint8_t *image = malloc((size_t)W * H);
    if (!image)
        return 1;
    for (size_t y = 0; y < H; y++)
        for (size_t x = 0; x < W; x++)
            image[y * W + x] = (uint8_t)((x * 7 + y * 13 + (x * y) % 31) & 0xff);

    pixsum_view in = pixsum_view_2d(image, PIXSUM_U8, W, H, 1, 0);

    /* Let the type rule choose output types that cannot overflow. */
    pixsum_type sum_type = pixsum_integral_type(PIXSUM_U8, (size_t)W * H, 0);
    pixsum_type sq_type = pixsum_integral_type(PIXSUM_U8, (size_t)W * H, 1);
    void *sum = malloc(pixsum_packed_bytes(sum_type, W, H, 1, 1));
    void *sq = malloc(pixsum_packed_bytes(sq_type, W, H, 1, 1));
    pixsum_ctx *ctx = pixsum_ctx_new();
    if (!sum || !sq || !ctx)
        return 1;
    pixsum_view sum_view = pixsum_view_2d(sum, sum_type, W, H, 1, 0);
    pixsum_view sq_view = pixsum_view_2d(sq, sq_type, W, H, 1, 0);

    int st = pixsum_integral_sq(ctx, &in, &sum_view, &sq_view);
    if (st != PIXSUM_OK) {
        fprintf(stderr, "integral failed: %s: %s\n", pixsum_strerror(st), pixsum_last_error());
        return 1;
    }
    printf("pixsum %s: %dx%d u8 -> %s sum table, %s squared table\n", pixsum_version(), W, H,
           pixsum_type_name(sum_type), pixsum_type_name(sq_type));

    pixsum_box boxes[3] = {
        {0, 0, 0, W, H, 1}, {10, 20, 0, 33, 17, 1}, {W - 5, H - 9, 0, 5, 9, 1}};
    double mean[3], var[3];
    st = pixsum_box_stats(ctx, &sum_view, &sq_view, boxes, 3, mean, var);
    if (st != PIXSUM_OK) {
        fprintf(stderr, "box stats failed: %s: %s\n", pixsum_strerror(st), pixsum_last_error());
        return 1;
    }
    int bad = 0;
    for (int k = 0; k < 3; k++) {
        const pixsum_box *b = &boxes[k];
        uint64_t total = 0, total_sq = 0;
        for (size_t y = b->y; y < b->y + b->h; y++)
            for (size_t x = b->x; x < b->x + b->w; x++) {
                total += image[y * W + x];
                total_sq += (uint64_t)image[y * W + x] * image[y * W + x];
            }
        double n = (double)(b->w * b->h);
        double want_mean = (double)total / n;
        double want_var = (double)total_sq / n - want_mean * want_mean;
        printf("box (%zu,%zu) %zux%zu: mean %.4f variance %.4f\n", b->x, b->y, b->w, b->h,
               mean[k], var[k]);
        if (mean[k] < want_mean - 1e-9 || mean[k] > want_mean + 1e-9 ||
            var[k] < want_var - 1e-6 * (1 + want_var) || var[k] > want_var + 1e-6 * (1 + want_var))
            bad = 1;
    }
    pixsum_ctx_free(ctx);
    free(sq);
    free(sum);
    free(image);
    if (bad)
        fprintf(stderr, "a box statistic differs from the direct computation\n");
    return bad;
}
