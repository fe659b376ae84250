"""pixsum.IntegralHistogram: the histogram of any rectangle of an image in
O(bins) (Porikli 2005), over the C library's pixsum_ihist_* functions."""

import threading

import numpy as np

from . import _core


class IntegralHistogram:
    """An integral histogram of a 2-D image: for every pixel, the histogram of
    the rectangle from the origin to it, so that the histogram of any box
    costs 4 reads per bin whatever the box's size (Porikli 2005). Used for
    sliding-window histograms: tracking, local equalisation, region
    descriptors.

    IntegralHistogram(image, *, bins=None, range=None, mask=None, threads=0,
                      max_bytes=0)

    image: (H, W), (H, W, C) or (N,) NumPy array (uint8, uint16, int16, int32,
      float32, float64); bins, range and mask as in pixsum.histogram(); samples
      outside the range, NaN and masked pixels are in no bin.
    max_bytes: refuse (TooLargeError) a table larger than this; 0 means the
      library's default of 1 GiB. The table takes (W + 1) x (H + 1) x C x bins
      x 4 bytes (8 bytes once W x H >= 2^32), see `nbytes`.

    Attributes: bins, channels, lo, hi, width, height, nbytes, edges.

    rebuild(image, *, mask=None, threads=0) builds the table of another image
    (a video's next frame) with the same bins and range, in the memory of the
    current table when it fits: no fresh pages, about 1.5x faster than a new
    IntegralHistogram. On error the table stays as it was.

    query(boxes, *, threads=0) gives the counts of boxes (x, y, w, h), the
    columns [x, x + w) and rows [y, y + h): uint64 of shape (bins,) for one
    box of a single-channel image, (C, bins) with channels, and (N, ...) for
    an (N, 4) array of boxes. Each equals pixsum.histogram() of that crop with
    the same bins and range. A box outside the image raises OutOfRangeError
    naming it. Large batches run over `threads` threads (0: all cores).
    """

    __slots__ = ("_table", "_lock", "_max_bytes", "_has_channels", "bins", "channels", "lo",
                 "hi", "width", "height", "nbytes")

    def __init__(self, image, *, bins=None, range=None, mask=None, threads=0, max_bytes=0):
        self._lock = threading.Lock()  # a rebuild may free the table a query reads
        self._max_bytes = max_bytes
        self._table, info = _core._ihist_new(image, bins=bins, range=range, mask=mask,
                                             threads=threads, max_bytes=max_bytes)
        self._set(image, info)

    def _set(self, image, info):
        self._has_channels = np.ndim(image) == 3
        self.bins = info["bins"]
        self.channels = info["channels"]
        self.lo = info["lo"]
        self.hi = info["hi"]
        self.width = info["width"]
        self.height = info["height"]
        self.nbytes = info["nbytes"]

    @property
    def edges(self):
        """The bins + 1 bin edges (float64), as histogram(info=True) gives."""
        return _core._hist_edges(self.bins, self.lo, self.hi)

    def rebuild(self, image, *, mask=None, threads=0):
        """The table of another image with the same bins and range, in place."""
        with self._lock:
            _, info = _core._ihist_new(image, bins=self.bins, range=(self.lo, self.hi),
                                       mask=mask, threads=threads, max_bytes=self._max_bytes,
                                       capsule=self._table)
            self._set(image, info)
        return self

    def query(self, boxes, *, threads=0):
        """Counts of one box (x, y, w, h) or of an (N, 4) array of boxes."""
        with self._lock:
            counts = _core._ihist_query(self._table, boxes, threads=threads)  # (N, C, bins)
        if not self._has_channels:
            counts = counts[:, 0, :]
        return counts[0] if np.ndim(boxes) == 1 else counts

    def __repr__(self):
        return (f"IntegralHistogram({self.height}x{self.width}, channels={self.channels}, "
                f"bins={self.bins}, range=({self.lo:g}, {self.hi:g}), "
                f"{self.nbytes / 2**20:.1f} MiB)")
