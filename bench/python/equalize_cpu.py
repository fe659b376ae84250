#!/usr/bin/env python3
"""equalize_cpu.py - pixsum.equalize against OpenCV's cv2.equalizeHist on the
CPU, same process, same images (u8, one channel: the only kind OpenCV takes),
and the two builds of pixsum given on the command line (e.g. before and after
a change), each timed in a fresh interpreter in turn. OpenCV's output is
compared with pixsum's (they agree on these images: maximum difference
printed).

Usage: python3 bench/python/equalize_cpu.py BUILD/python [BUILD2/python ...]
"""

import json
import subprocess
import sys

CHILD = r"""
import json, sys, time
import numpy as np
import cv2
import pixsum
rng = np.random.default_rng(1)
res = {}
for n in (512, 1024, 4096):
    img = (rng.random((n, n), dtype=np.float32) ** 2 * 255).astype(np.uint8)
    out = np.empty_like(img)
    def med(f, reps=31):
        for _ in range(3):
            f()
        ts = []
        for _ in range(reps):
            t0 = time.perf_counter()
            f()
            ts.append(time.perf_counter() - t0)
        return float(np.median(ts)) * 1e3
    res[n] = {"pixsum": med(lambda: pixsum.equalize(img, out=out)),
              "opencv": med(lambda: cv2.equalizeHist(img, dst=out)),
              "maxdiff": int(np.abs(pixsum.equalize(img).astype(int)
                                    - cv2.equalizeHist(img).astype(int)).max()),
              "threads": cv2.getNumThreads()}
print(json.dumps(res))
"""


def main():
    builds = sys.argv[1:]
    if not builds:
        raise SystemExit(__doc__)
    print("| build | side | pixsum ms | cv2.equalizeHist ms | cv2 / pixsum | max diff |")
    print("|---|---|---|---|---|---|")
    for rnd in range(2):
        for b in builds:
            env = {"PYTHONPATH": b, "PATH": "/usr/bin:/bin"}
            r = json.loads(subprocess.run([sys.executable, "-c", CHILD], env=env, check=True,
                                          capture_output=True, text=True).stdout)
            for n, v in r.items():
                print(f"| {b} (round {rnd + 1}) | {n} | {v['pixsum']:.3f} | {v['opencv']:.3f} | "
                      f"{v['opencv'] / v['pixsum']:.2f} | {v['maxdiff']} |")


if __name__ == "__main__":
    main()
