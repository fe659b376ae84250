/*
 * peer_opencv.cpp - the `peer.opencv` benchmark peer: a small C-callable shim
 * over OpenCV's cv::integral, built as a loadable module (libpixsum_peer_opencv)
 * only when OpenCV is found. `pixsum bench` loads it with dlopen() so that the
 * pixsum library and the CLI stay C and never link OpenCV.
 *
 * Every entry returns 0 on success, -1 for a type OpenCV does not offer and -2
 * when OpenCV had to reallocate (the caller's buffers were not used), so a
 * measurement never silently times a different layout.
 */
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <cstddef>

namespace {

/* pixsum_type values (pixsum.h, pinned) to OpenCV depths; -1 if none. */
int cv_depth(int pixsum_type)
{
    switch (pixsum_type) {
    case 1: return CV_8U;   /* u8 */
    case 2: return CV_16U;  /* u16 */
    case 3: return CV_16S;  /* i16 */
    case 4: return CV_32S;  /* i32 */
    case 5: return CV_32S;  /* u32 table: OpenCV's signed 32-bit sums, same bits */
    case 6: return CV_32F;  /* f32 */
    case 7: return CV_64F;  /* f64 */
    default: return -1;
    }
}

} // namespace

extern "C" {

/* The padded (W+1) x (H+1) integral of a W x H image of `channels` samples per
 * pixel into `sum` (and the squared one into `sq` when not NULL), as
 * cv::integral(src, sum[, sqsum], sdepth[, sqdepth]). Steps are in bytes. */
int pixsum_peer_opencv_integral(int in_type, int sum_type, int sq_type, const void *in,
                                size_t width, size_t height, size_t channels,
                                size_t in_step, void *sum, size_t sum_step, void *sq,
                                size_t sq_step)
{
    int din = cv_depth(in_type), dsum = cv_depth(sum_type);
    int dsq = sq ? cv_depth(sq_type) : -1;
    if (din < 0 || dsum < 0 || (sq && dsq < 0) || channels < 1 || channels > 4)
        return -1;
    int ch = (int)channels, w = (int)width, h = (int)height;
    try {
        cv::Mat src(h, w, CV_MAKETYPE(din, ch), const_cast<void *>(in), in_step);
        cv::Mat s(h + 1, w + 1, CV_MAKETYPE(dsum, ch), sum, sum_step);
        if (sq) {
            cv::Mat q(h + 1, w + 1, CV_MAKETYPE(dsq, ch), sq, sq_step);
            cv::integral(src, s, q, dsum, dsq);
            if (q.data != static_cast<uchar *>(sq))
                return -2;
        } else {
            cv::integral(src, s, dsum);
        }
        if (s.data != static_cast<uchar *>(sum))
            return -2;
    } catch (const cv::Exception &) {
        return -1;
    }
    return 0;
}

/* Number of threads OpenCV's parallel_for would use (for the report). */
int pixsum_peer_opencv_threads(void)
{
    return cv::getNumThreads();
}

/* Sets OpenCV's thread count (cv::setNumThreads). */
void pixsum_peer_opencv_set_threads(int n)
{
    cv::setNumThreads(n);
}

} // extern "C"
