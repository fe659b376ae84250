"""pytest plugin: runs scikit-image's own installed tests against
pixsum.compat.skimage (issue #41).

Loaded with `-p pixsum_skimage_plugin` (this folder on PYTHONPATH) by the
ctest `python_skimage_suite` (tests/python.cmake, run_skimage_suite.sh). Before
pytest imports scikit-image's test modules it replaces, in every loaded
`skimage.*` module, each name bound to one of the scikit-image functions that
pixsum.compat.skimage provides (integral_image, integrate, histogram,
cumulative_distribution, equalize_hist, threshold_otsu, threshold_sauvola,
threshold_niblack, threshold_local) by the compat function. The test modules'
own `from skimage... import` then get pixsum's functions, and so do
scikit-image functions that call them (threshold_li's histogram, _mean_std's
integral_image, ...). No scikit-image code is copied.

Each replacement counts the tests that call it ("reached pixsum"). The list
known_failures.txt (same folder) names the tests expected to fail, each with
its reason; they are marked xfail(strict=True), so one that starts to pass
fails the run until it is taken off the list. At the end the plugin prints a
summary and sets the exit status: 1 when a test that reached pixsum failed
and is not on the list (or a listed one passed), else 0. Tests that fail
without reaching pixsum are scikit-image's or the environment's business:
they are reported, not counted against pixsum.
"""

import functools
import os
import sys

import pytest

# Imported now, while PYTHONPATH leads sys.path: scikit-image's conftest
# (loaded next) makes pytest put its site directory first, where another
# pixsum may be installed.
import pixsum
from pixsum.compat import skimage as _compat

_NAMES = ("integral_image", "integrate", "histogram", "cumulative_distribution",
          "equalize_hist", "threshold_otsu", "threshold_sauvola", "threshold_niblack",
          "threshold_local")
_MODULES = ("skimage.transform", "skimage.transform.integral", "skimage.exposure",
            "skimage.exposure.exposure", "skimage.filters", "skimage.filters.thresholding")

_state = {"current": None, "reached": set(), "calls": {}, "replaced": 0,
          "known": {}, "outcomes": {}}


def _counting(name, fn):
    """fn, recording the running test as one that reached pixsum."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        test = _state["current"]
        if test is not None:
            _state["reached"].add(test)
        _state["calls"][name] = _state["calls"].get(name, 0) + 1
        return fn(*args, **kwargs)
    wrapper.__pixsum_compat__ = True
    return wrapper


def _redirect():
    """Replaces every skimage.* module attribute bound to one of the original
    functions by the counting compat function; returns how many."""
    import importlib
    for m in _MODULES:
        importlib.import_module(m)
    compat = _compat
    originals = {}
    for m in _MODULES:
        mod = sys.modules[m]
        for name in _NAMES:
            fn = getattr(mod, name, None)
            if fn is not None and not getattr(fn, "__pixsum_compat__", False):
                originals[id(fn)] = name
    replacements = {name: _counting(name, getattr(compat, name)) for name in _NAMES}
    count = 0
    for modname, mod in list(sys.modules.items()):
        if mod is None or not (modname == "skimage" or modname.startswith("skimage.")):
            continue
        for attr, value in list(vars(mod).items()):
            name = originals.get(id(value))
            if name is not None and attr == name:
                setattr(mod, attr, replacements[name])
                count += 1
    return count


def _key(item):
    """A test's name in known_failures.txt: file name::test id."""
    return f"{os.path.basename(str(item.fspath))}::{item.nodeid.split('::', 1)[1]}"


def _load_known():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "known_failures.txt")
    known = {}
    with open(path) as fh:
        for line in fh:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            key, _, reason = line.partition("|")
            if not reason.strip():
                raise pytest.UsageError(f"known_failures.txt: no reason for {key.strip()}")
            known[key.strip()] = reason.strip()
    return known


def pytest_configure(config):
    _state["replaced"] = _redirect()
    _state["known"] = _load_known()


def pytest_collection_modifyitems(session, config, items):
    for item in items:
        reason = _state["known"].get(_key(item))
        if reason is not None:
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _state["current"] = item.nodeid
    yield
    _state["current"] = None


def pytest_runtest_logreport(report):
    outcomes = _state["outcomes"]
    prev = outcomes.get(report.nodeid)
    if report.failed:
        outcomes[report.nodeid] = "failed"
    elif report.skipped and hasattr(report, "wasxfail"):
        outcomes[report.nodeid] = "xfailed"
    elif report.when == "call" and report.passed and hasattr(report, "wasxfail"):
        outcomes[report.nodeid] = "failed"  # a non-strict xpass; ours are strict
    elif report.skipped and prev is None:
        outcomes[report.nodeid] = "skipped"
    elif report.when == "call" and prev is None:
        outcomes[report.nodeid] = "passed"


def _tally():
    reached = _state["reached"]
    out = _state["outcomes"]
    t = {"total": len(out), "reached": 0, "passed": 0, "xfailed": 0, "unexpected": [],
         "skipped": 0, "other_failed": []}
    for nodeid, outcome in out.items():
        if outcome == "skipped":
            t["skipped"] += 1
        if nodeid in reached or outcome == "xfailed":
            t["reached"] += 1
            if outcome == "passed":
                t["passed"] += 1
            elif outcome == "xfailed":
                t["xfailed"] += 1
            elif outcome == "failed":
                t["unexpected"].append(nodeid)
        elif outcome == "failed":
            t["other_failed"].append(nodeid)
    return t


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    t = _tally()
    w = terminalreporter
    w.section("pixsum.compat.skimage against scikit-image's tests")
    w.line(f"pixsum from {os.path.dirname(pixsum.__file__)}")
    w.line(f"names redirected to pixsum.compat.skimage: {_state['replaced']}; calls: "
           + ", ".join(f"{k} {v}" for k, v in sorted(_state["calls"].items())))
    w.line(f"scikit-image tests run: {t['total']}, skipped: {t['skipped']}")
    w.line(f"reached pixsum: {t['reached']}: passed {t['passed']}, known failures "
           f"{t['xfailed']} (known_failures.txt), unexpected failures {len(t['unexpected'])}")
    for nodeid in t["unexpected"]:
        w.line(f"  UNEXPECTED: {nodeid}")
    if t["other_failed"]:
        w.line(f"failed without reaching pixsum (not counted): {len(t['other_failed'])}")
        for nodeid in t["other_failed"]:
            w.line(f"  {nodeid}")


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    if exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
        return  # usage or collection errors keep pytest's status
    t = _tally()
    if t["reached"] == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    else:
        session.exitstatus = (pytest.ExitCode.TESTS_FAILED if t["unexpected"]
                              else pytest.ExitCode.OK)
