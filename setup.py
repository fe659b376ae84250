"""setup.py - builds pixsum._core for `pip install .` (run at the checkout's root).

The extension (python/src) is compiled together with the C library's sources
(src/, or $PIXSUM_SOURCE_DIR): the same files the CMake build compiles,
with the same rules - files named *_sse2.c, *_sse41.c, *_avx2.c, *_avx512.c get
their ISA flags (x86 only; the library picks the ISA at run time), *_neon.c are
built on ARM only, OpenMP is used when the compiler has it. The CUDA, OpenGL and
MPI parts are left out (their *_off.c stand-ins are compiled), so the package
built this way runs the CPU methods; use the CMake build for CUDA.
"""

import glob
import os
import platform
import re
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))
PYDIR = os.path.join(HERE, "python")
ROOT = os.environ.get("PIXSUM_SOURCE_DIR", HERE)
SRC = os.path.join(ROOT, "src")

def read_isa_flags():
    """The flags of each ISA-specific file: src/cpu/isa_flags.txt, the list the
    CMake build reads too."""
    flags = {}
    with open(os.path.join(SRC, "cpu", "isa_flags.txt")) as fh:
        for line in fh:
            line = line.split("#", 1)[0].strip()
            if line:
                isa, _, rest = line.partition(":")
                flags[isa.strip()] = rest.split()
    return flags


ISA_FLAGS = read_isa_flags()
IS_X86 = platform.machine().lower() in ("x86_64", "amd64", "i386", "i686")
IS_ARM = platform.machine().lower() in ("aarch64", "arm64")


def isa_of(path):
    name = os.path.basename(path)[:-2]
    for isa in ISA_FLAGS:
        if name.endswith("_" + isa):
            return isa
    return "neon" if name.endswith("_neon") else None


def library_sources():
    if not os.path.isfile(os.path.join(ROOT, "include", "pixsum.h")):
        raise SystemExit(f"pixsum's C sources were not found under {ROOT}; build from a "
                         "checkout (pip install .) or set PIXSUM_SOURCE_DIR")
    files = []
    for pattern in ("*.c", "cpu/*.c", "hist/*.c", "papers/*.c"):
        files += sorted(glob.glob(os.path.join(SRC, pattern)))
    keep = []
    for f in files:
        isa = isa_of(f)
        if isa == "neon" and not IS_ARM:
            continue
        if isa in ISA_FLAGS and not IS_X86:
            continue
        keep.append(f)
    return keep


class BuildExt(build_ext):
    """Compiles the C library's files (the ISA ones with their own flags) into
    the extension, and probes for OpenMP."""

    def _has_flag(self, flag):
        d = tempfile.mkdtemp()
        try:
            src = os.path.join(d, "t.c")
            with open(src, "w") as fh:
                fh.write("#include <omp.h>\nint main(void) { return omp_get_max_threads() < 1; }\n")
            self.compiler.compile([src], output_dir=d, extra_postargs=[flag])
            return True
        except Exception:
            return False
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def build_extension(self, ext):
        # -O3 as the CMake Release build (the optimisation level the library's
        # tests run at), unless CFLAGS names its own level (the pip-install
        # test builds at -O1: half the compile time, same code paths)
        opt = [] if re.search(r"(^|\s)-O", os.environ.get("CFLAGS", "")) else ["-O3"]
        # -ffp-contract=off as the CMake build (src/CMakeLists.txt): the
        # histogram edges round a product and a sum separately
        common = ["-std=c11", "-ffp-contract=off"] + opt + ["-fvisibility=hidden"]
        macros = [("_GNU_SOURCE", None), ("PIXSUM_SHARED_BUILD", None),
                  ("PSB_HAVE_HIST", "1")]
        if self._has_flag("-fopenmp"):
            common.append("-fopenmp")
            ext.extra_link_args.append("-fopenmp")
            macros.append(("PIXSUM_HAVE_OPENMP", "1"))
        # the library's sources, compiled here (outside the Extension's own
        # list); their "../src" paths put objects under build_temp/lib/src
        out_dir = os.path.join(self.build_temp, "lib")
        os.makedirs(out_dir, exist_ok=True)

        def compile_one(src):
            rel = os.path.relpath(src, HERE)
            for obj in self.compiler.object_filenames([rel], output_dir=out_dir):
                os.makedirs(os.path.dirname(os.path.normpath(obj)), exist_ok=True)
            return self.compiler.compile(
                [rel], output_dir=out_dir, macros=macros, include_dirs=ext.include_dirs,
                extra_postargs=common + ISA_FLAGS.get(isa_of(src), []))

        # one compiler process per core: the library is ~60 files
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            objects = [o for objs in pool.map(compile_one, library_sources()) for o in objs]
        ext.extra_objects = objects + list(ext.extra_objects or [])
        ext.define_macros = list(ext.define_macros or []) + macros
        ext.extra_compile_args = list(ext.extra_compile_args or []) + common
        super().build_extension(ext)


ext = Extension(
    "pixsum._core",
    sources=[os.path.relpath(p, HERE) for p in sorted(glob.glob(os.path.join(PYDIR, "src", "*.c")))],
    include_dirs=[os.path.join(ROOT, "include"), SRC, os.path.join(PYDIR, "src"),
                  numpy.get_include()],
    libraries=["m"],
    extra_link_args=["-pthread"],
)

# build-python/, not build/: build/ is the CMake build directory of `make`
os.makedirs(os.path.join(HERE, "build-python"), exist_ok=True)
setup(ext_modules=[ext], cmdclass={"build_ext": BuildExt},
      options={"build": {"build_base": "build-python"},
               "egg_info": {"egg_base": "build-python"}})
