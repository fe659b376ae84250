"""pixsum.compat - drop-in replacements for other libraries' functions.

Each module follows its library's rules exactly (signatures, return types,
binning, value ranges, layouts) and computes with pixsum's native functions,
so that a port changes nothing but the import:

    from pixsum.compat import skimage as ski   # skimage.transform / exposure / filters
    from pixsum.compat import cv2              # cv2.integral*, calcHist, equalizeHist

The modules only adapt arguments, conventions and outputs; every operation
(integral tables, box sums and statistics, histograms, equalisation, Otsu)
runs in the library. Where pixsum deliberately differs from the original, the
function's docstring says so.
"""

__all__ = ["skimage", "cv2"]
