#!/usr/bin/env python3
"""plot_cpu.py - draws the CPU integral-image plots of docs/benchmarks.md from
the JSON records of `pixsum bench --json` (gnuplot does the drawing):

  cpu_time_vs_pixels.png   median time against pixels per method, 1 thread,
                           with the same-run memory floor (as papers 000, 004)
  cpu_speedup_threads.png  speed-up against threads per threaded method,
                           relative to the same method with 1 thread (paper 000)

usage: plot_cpu.py SIZES.json THREADS.json OUTDIR
"""
import json
import os
import subprocess
import sys
import tempfile


def load(path):
    with open(path) as f:
        return json.load(f)


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    sizes, threads, outdir = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3]
    os.makedirs(outdir, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="pixsum-plot-")

    # time vs pixels, one series per method, plus the floor
    series = {}
    floor = {}
    for r in sizes:
        if r["threads"] != 1:
            continue
        px = r["width"] * r["height"]
        series.setdefault(r["method"], []).append((px, r["median_ms"]))
        floor[px] = r["floor_ms"]
    series["memory floor"] = sorted(floor.items())
    plots = []
    for i, (name, pts) in enumerate(sorted(series.items())):
        dat = os.path.join(tmp, "s%d.dat" % i)
        with open(dat, "w") as f:
            for px, ms in sorted(pts):
                f.write("%d %g\n" % (px, ms))
        style = "lw 2 dt 2" if name == "memory floor" else "lw 1.5"
        plots.append("'%s' using 1:2 with linespoints %s title '%s'" % (dat, style, name))
    pair = "%s->%s" % (sizes[0]["in_type"], sizes[0]["out_type"]) if sizes else ""
    script = """
set terminal pngcairo size 900,600 font ',10'
set output '%s'
set logscale xy
set xlabel 'pixels'
set ylabel 'median time (ms)'
set title 'pixsum integral %s, 1 thread, this machine (same-run floor dashed)'
set key left top
set grid
plot %s
""" % (os.path.join(outdir, "cpu_time_vs_pixels.png"), pair, ", \\\n  ".join(plots))

    # speed-up vs threads relative to the method's own 1-thread time
    by = {}
    for r in threads:
        by.setdefault(r["method"], {})[r["threads"]] = r["median_ms"]
    floors = {}
    for r in threads:
        floors[r["threads"]] = r["floor_ms"]
    plots2 = []
    for i, (name, pts) in enumerate(sorted(by.items())):
        if 1 not in pts or name.startswith("peer."):
            continue
        dat = os.path.join(tmp, "t%d.dat" % i)
        with open(dat, "w") as f:
            for t in sorted(pts):
                f.write("%d %g\n" % (t, pts[1] / pts[t]))
        plots2.append("'%s' using 1:2 with linespoints lw 1.5 title '%s'" % (dat, name))
    if 1 in floors:
        dat = os.path.join(tmp, "floor.dat")
        with open(dat, "w") as f:
            for t in sorted(floors):
                f.write("%d %g\n" % (t, floors[1] / floors[t]))
        plots2.append("'%s' using 1:2 with linespoints lw 2 dt 2 title 'memory floor'" % dat)
    size = "%dx%d" % (threads[0]["width"], threads[0]["height"]) if threads else ""
    script += """
set terminal pngcairo size 900,600 font ',10'
set output '%s'
unset logscale
set xlabel 'threads'
set ylabel 'speed-up over the same method with 1 thread'
set title 'pixsum integral %s, %s: speed-up against threads (2-core machine)'
set key left top
set xtics 1
plot %s
""" % (os.path.join(outdir, "cpu_speedup_threads.png"), pair, size, ", \\\n  ".join(plots2))
    gp = os.path.join(tmp, "plots.gp")
    with open(gp, "w") as f:
        f.write(script)
    subprocess.run(["gnuplot", gp], check=True)
    print("wrote", os.path.join(outdir, "cpu_time_vs_pixels.png"), "and",
          os.path.join(outdir, "cpu_speedup_threads.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
