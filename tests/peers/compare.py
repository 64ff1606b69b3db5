#!/usr/bin/python3
"""compare.py - Horizon's CPU backend against the NumPy peer, timed interleaved.

For each case (world size, radius) it alternates runs of the peer and of
`horizon run --backend cpu --threads T` (stats and frames off), `--repeat` times each, and prints
the median steps/s of both and their ratio. Interleaving matters on a shared machine: a burst of
load hits both sides instead of one. Both sides run on one thread unless --threads is given
(the peer is pinned to one thread with OMP/OPENBLAS/MKL_NUM_THREADS=1 and workers=1 FFTs).

Usage: compare.py [--horizon build/app/horizon] [--repeat 3] [--threads 1] [CASE ...]
CASE is SIZE:RADIUS:STEPS[:BOUNDARY], e.g. 512:8:100; default: the "speed" issue's set.
Each line ends with the issue's target for that case (3x the peer from 512^2 up; 20,000 steps/s
on one thread for 64^2) and whether this run met it. Horizon's rate is its run.json's: the steps
over the stepping time (creation excluded), the peer's excludes its two warm-up steps.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CASES = ["512:8:100", "2048:8:10", "512:32:50", "2048:32:5", "64:8:4000"]


def run_peer(size, radius, steps, boundary):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    peer_steps = max(3, steps // 4) if size >= 512 else steps
    out = subprocess.run([sys.executable, os.path.join(HERE, "peer_numpy.py"), "--size", str(size),
                          "--radius", str(radius), "--steps", str(peer_steps), "--boundary",
                          boundary], check=True, capture_output=True, text=True, env=env).stdout
    return float(out.split()[1])


def run_horizon(exe, size, radius, steps, boundary, threads, outdir):
    subprocess.run([exe, "run", "--backend", "cpu", "--threads", str(threads),
                    "--steps", str(steps),
                    "--set", f"world.width={size}", "--set", f"world.height={size}",
                    "--set", f"agents.radius={radius}", "--set", f"world.boundary={boundary}",
                    "--frames-every", "0", "--stats-every", "0", "--quiet", "--force",
                    "--out", outdir], check=True)
    with open(os.path.join(outdir, "run.json")) as f:
        return float(json.load(f)["steps_per_second"])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--horizon", default=os.path.join(HERE, "..", "..", "build", "app", "horizon"))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("cases", nargs="*", default=DEFAULT_CASES)
    args = ap.parse_args()
    print(f"{'case':>16} {'peer steps/s':>13} {'horizon steps/s':>16} {'ratio':>7}  target")
    with tempfile.TemporaryDirectory() as tmp:
        for case in args.cases:
            parts = case.split(":")
            size, radius, steps = int(parts[0]), int(parts[1]), int(parts[2])
            boundary = parts[3] if len(parts) > 3 else "periodic"
            peer, hz = [], []
            for _ in range(args.repeat):
                peer.append(run_peer(size, radius, steps, boundary))
                hz.append(run_horizon(args.horizon, size, radius, steps, boundary, args.threads,
                                      os.path.join(tmp, "out")))
            p, h = statistics.median(peer), statistics.median(hz)
            name = f"{size}^2 r={radius}" + ("" if boundary == "periodic" else f" {boundary}")
            if size >= 512:
                goal, met = ">= 3x", h / p >= 3.0
            else:
                goal, met = ">= 20000 steps/s", h >= 20000.0
            print(f"{name:>16} {p:13.2f} {h:16.2f} {h / p:6.2f}x  {goal} "
                  f"{'met' if met else 'missed'}", flush=True)


if __name__ == "__main__":
    main()
