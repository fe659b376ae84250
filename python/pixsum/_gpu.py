"""pixsum._gpu - where the C extension sends the calls of GPU arrays that it
does not run itself.

integral(), integral_sq() and integral3d() of CuPy arrays and PyTorch tensors
never come here (python/src/gpu.c runs them). The others arrive through
`dispatch()` and go to the module of their operation:
  - box_sum, box_mean, box_var, box_filter, threshold_local, normalize_local
    -> pixsum/_gpu_box.py;
  - histogram, histogram2d, equalize, threshold_otsu -> pixsum/_gpu_hist.py;
  - the integrals of other producers (DLPack-only objects, Numba and the
    like) and integral_tilted -> pixsum/_gpu_base.py.
Those modules share pixsum/_gpu_base.py (reading arrays, allocating results)
and pixsum/_gpu_ops.py (array arithmetic); none of them imports this one.
"""

from . import _core, _gpu_base, _gpu_box, _gpu_hist
from ._errors import UnavailableError, UnsupportedError

_BOX_FUNCTIONS = ("box_sum", "box_mean", "box_var", "box_filter", "threshold_local",
                  "normalize_local")
_HIST_FUNCTIONS = ("histogram", "histogram2d", "equalize", "threshold_otsu")
_ALL_GPU_FUNCTIONS = _gpu_base.INTEGRAL_FUNCTIONS + _BOX_FUNCTIONS + _HIST_FUNCTIONS


def dispatch(name, args, kwargs):
    """Runs pixsum.<name>(*args, **kwargs) for a GPU array (see the module
    docstring). Called by the C extension."""
    if name not in _ALL_GPU_FUNCTIONS:
        raise UnsupportedError(f"{name}: GPU arrays are not accepted; copy this one to the "
                               "host first", 9, "")
    if not _core.HAVE_CUDA:
        raise UnavailableError(f"{name}: GPU arrays need a pixsum library built with CUDA; this "
                               "one was built without it", 11, "")
    if name in _BOX_FUNCTIONS:
        return _gpu_box.dispatch(name, args, kwargs or {})
    if name in _HIST_FUNCTIONS:
        return _gpu_hist.dispatch(name, args, kwargs or {})
    return _gpu_base.dispatch(name, args, kwargs)
