/*
 * peer_opencv_hist.cpp - the `peer.opencv` histogram peer: cv::calcHist with
 * uniform bins over [lo, hi) on channel 0 of an image, as a C-callable shim in
 * the same loadable module as the integral peer (bench/peer_opencv.cpp).
 * The counts (OpenCV returns float) are converted to u64 so the caller can
 * compare them with pixsum's.
 */
#include <opencv2/core.hpp>
#include <opencv2/imgproc.hpp>

#include <cstddef>
#include <cstdint>

extern "C" {

/* Histogram of channel 0 of a width x height image of `channels` samples per
 * pixel (pixsum type code in_type: 1 u8, 2 u16, 3 i16, 6 f32; others -1) with
 * `bins` uniform bins over [lo, hi) into counts[bins]. Returns 0 or -1. */
int pixsum_peer_opencv_hist(int in_type, const void *in, size_t width, size_t height,
                            size_t channels, size_t in_step, size_t bins, double lo, double hi,
                            uint64_t *counts)
{
    int depth;
    switch (in_type) {
    case 1: depth = CV_8U; break;
    case 2: depth = CV_16U; break;
    case 3: depth = CV_16S; break;
    case 6: depth = CV_32F; break;
    default: return -1;
    }
    if (channels < 1 || channels > 4)
        return -1;
    try {
        cv::Mat src((int)height, (int)width, CV_MAKETYPE(depth, (int)channels),
                    const_cast<void *>(in), in_step);
        int ch = 0, size = (int)bins;
        float range[2] = {(float)lo, (float)hi};
        const float *ranges[1] = {range};
        cv::Mat hist;
        cv::calcHist(&src, 1, &ch, cv::Mat(), hist, 1, &size, ranges, true, false);
        for (size_t i = 0; i < bins; i++)
            counts[i] = (uint64_t)hist.at<float>((int)i);
    } catch (...) {
        return -1;
    }
    return 0;
}

} // extern "C"
