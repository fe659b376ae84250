/* consumer.c - checks that an installed pixsum links and runs: header and
 * library versions agree and a tiny integral image is right. */
#include <pixsum.h>

#include <stdio.h>
#include <string.h>

int main(void)
{
    if (pixsum_version_number() != PIXSUM_VERSION_NUMBER) {
        fprintf(stderr, "header %d, library %u\n", PIXSUM_VERSION_NUMBER,
                pixsum_version_number());
        return 1;
    }
    unsigned char img[6] = {1, 2, 3, 4, 5, 6};
    unsigned int sat[6];
    pixsum_view in = pixsum_view_2d(img, PIXSUM_U8, 3, 2, 1, 0);
    pixsum_view out = pixsum_view_2d(sat, PIXSUM_U32, 3, 2, 1, 0);
    int st = pixsum_integral(NULL, &in, &out);
    const unsigned int want[6] = {1, 3, 6, 5, 12, 21};
    if (st != PIXSUM_OK || memcmp(sat, want, sizeof want) != 0) {
        fprintf(stderr, "integral: %s %s\n", pixsum_strerror(st), pixsum_last_error());
        return 1;
    }
    printf("pixsum %s installed and working\n", pixsum_version());
    return 0;
}
