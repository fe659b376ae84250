"""setup.py - builds pixsum._core for `pip install .` (run at the checkout's root).

The extension (python/src) is compiled together with the C library's sources
(src/, or $PIXSUM_SOURCE_DIR): the same files the CMake build compiles,
with the same rules - files named *_sse2.c, *_sse41.c, *_avx2.c, *_avx512.c get
their ISA flags (x86 only; the library picks the ISA at run time), *_neon.c are
built on ARM only, OpenMP is used when the compiler has it.

The CUDA backend (src/cuda/) is built in too when the CUDA toolkit is found
(nvcc under $CUDA_HOME, on PATH, or in /usr/local/cuda): the kernels are
compiled with nvcc for the architectures of $PIXSUM_CUDA_ARCHS (default
"90-real;75-virtual", CMake's spelling, as the CMake build's default: sm_90
machine code plus compute_75 PTX for older cards) and linked with the static
CUDA runtime, so GPU arrays (CuPy, PyTorch) work after a plain `pip install .`.
Build-time settings (they choose what is built, never what it computes):
PIXSUM_CUDA=OFF builds without CUDA even where nvcc exists; PIXSUM_CUDA=ON fails
when it is missing (default AUTO). The OpenGL and MPI parts are left out (their
*_off.c stand-ins are compiled); use the CMake build for those.
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


def find_nvcc():
    """nvcc of the CUDA toolkit to build with, or None: PIXSUM_CUDA=OFF, or no
    toolkit found (PIXSUM_CUDA=ON then stops the build)."""
    want = os.environ.get("PIXSUM_CUDA", "AUTO").upper()
    if want in ("OFF", "0", "FALSE", "NO"):
        return None
    candidates = [os.path.join(os.environ[v], "bin", "nvcc")
                  for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    candidates += [shutil.which("nvcc") or "", "/usr/local/cuda/bin/nvcc"]
    for nvcc in candidates:
        if nvcc and os.access(nvcc, os.X_OK):
            return os.path.realpath(nvcc)
    if want in ("ON", "1", "TRUE", "YES"):
        raise SystemExit("PIXSUM_CUDA=ON but no nvcc was found (set CUDA_HOME)")
    return None


def cuda_gencode(archs):
    """nvcc -gencode flags for a CMake-style list ("90-real;75-virtual")."""
    flags = []
    for item in filter(None, re.split(r"[;,\s]+", archs)):
        num, _, kind = item.partition("-")
        if not num.isdigit() or kind not in ("", "real", "virtual"):
            raise SystemExit(f"PIXSUM_CUDA_ARCHS: '{item}' is not NN, NN-real or NN-virtual")
        codes = {"": [f"sm_{num}", f"compute_{num}"], "real": [f"sm_{num}"],
                 "virtual": [f"compute_{num}"]}[kind]
        flags += ["-gencode", f"arch=compute_{num},code=[{','.join(codes)}]"]
    return flags


ISA_FLAGS = read_isa_flags()
NVCC = find_nvcc()
CUDA_ROOT = os.path.dirname(os.path.dirname(NVCC)) if NVCC else None
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
    for pattern in ("*.c", "cpu/*.c", "hist/*.c", "papers/*.c") + (("cuda/*.c",) if NVCC else ()):
        files += sorted(glob.glob(os.path.join(SRC, pattern)))
    keep = []
    for f in files:
        if NVCC and os.path.basename(f) == "cuda_off.c":
            continue
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
        include_dirs = list(ext.include_dirs)
        if NVCC:
            macros += [("PIXSUM_HAVE_CUDA", "1"), ("PSB_HAVE_CUDA", "1")]
            include_dirs += [os.path.join(SRC, "cuda"), os.path.join(CUDA_ROOT, "include")]
            # the static runtime: nothing to find at import time but the driver
            ext.library_dirs = list(ext.library_dirs or []) + [
                d for d in (os.path.join(CUDA_ROOT, "lib64"), os.path.join(CUDA_ROOT, "lib"))
                if os.path.isdir(d)]
            ext.libraries = list(ext.libraries or []) + ["cudart_static", "dl", "rt", "stdc++"]
        # the library's sources, compiled here (outside the Extension's own
        # list); their "../src" paths put objects under build_temp/lib/src
        out_dir = os.path.join(self.build_temp, "lib")
        os.makedirs(out_dir, exist_ok=True)

        def compile_one(src):
            rel = os.path.relpath(src, HERE)
            for obj in self.compiler.object_filenames([rel], output_dir=out_dir):
                os.makedirs(os.path.dirname(os.path.normpath(obj)), exist_ok=True)
            return self.compiler.compile(
                [rel], output_dir=out_dir, macros=macros, include_dirs=include_dirs,
                extra_postargs=common + ISA_FLAGS.get(isa_of(src), []))

        def compile_cuda(src):
            # the flags of src/cuda/CMakeLists.txt (C++17, relaxed constexpr,
            # hidden symbols, warnings as errors) at the Release level
            obj = os.path.join(out_dir, "cuda", os.path.basename(src) + ".o")
            os.makedirs(os.path.dirname(obj), exist_ok=True)
            cmd = [NVCC, "-c", src, "-o", obj, "-std=c++17", "-O3", "-DNDEBUG",
                   "--expt-relaxed-constexpr", "-Werror=all-warnings",
                   "-Xcompiler=-fPIC,-fvisibility=hidden"]
            cmd += [f"-D{k}" if v is None else f"-D{k}={v}" for k, v in macros]
            cmd += [f"-I{d}" for d in include_dirs if d != numpy.get_include()]
            cmd += cuda_gencode(os.environ.get("PIXSUM_CUDA_ARCHS", "90-real;75-virtual"))
            self.spawn(cmd)
            return [obj]

        sources = library_sources()
        kernels = sorted(glob.glob(os.path.join(SRC, "cuda", "*.cu")) +
                         glob.glob(os.path.join(SRC, "papers", "*.cu"))) if NVCC else []
        # one compiler process per core: the library is ~60 files (+ ~10 kernels)
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            jobs = [pool.submit(compile_cuda, k) for k in kernels]
            jobs += [pool.submit(compile_one, f) for f in sources]
            objects = [o for job in jobs for o in job.result()]
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
