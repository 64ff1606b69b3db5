#!/usr/bin/env python3
"""Plot the results of a noise sweep (assets/sweeps/noise.ini or small.ini).

usage: python3 assets/sweeps/plot_noise.py DIR/sweep.csv out.png

Two panels against agents.noise: mean_moved (agents that moved per step) and mean_field_max
(the highest field value), each averaged over the last --window steps of a run. Points are
the mean over the replicates of each noise value, error bars their standard deviation.
Needs pandas and matplotlib (Debian: apt-get install python3-pandas python3-matplotlib).
"""
import sys

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

KEY = "agents.noise"
PANELS = [("mean_moved", "agents moved per step"), ("mean_field_max", "field maximum")]


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: plot_noise.py DIR/sweep.csv out.png\n")
        return 2
    csv, png = argv[1], argv[2]
    df = pd.read_csv(csv)
    if KEY not in df.columns:
        sys.stderr.write(f"{csv}: no {KEY} column: not a sweep over {KEY}\n")
        return 2
    # Rows come in completion order; a run of 0 steps has empty statistics.
    df = df.sort_values("run").dropna(subset=[c for c, _ in PANELS])
    if df.empty:
        sys.stderr.write(f"{csv}: no finished runs with statistics\n")
        return 2
    g = df.groupby(KEY)[[c for c, _ in PANELS]].agg(["mean", "std", "count"])
    reps = int(g[PANELS[0][0]]["count"].max())
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
    for ax, (col, label) in zip(axes, PANELS):
        m = g[col]
        ax.errorbar(m.index, m["mean"], yerr=m["std"].fillna(0), fmt="o-", capsize=3,
                    markersize=4)
        ax.set_xlabel(KEY)
        ax.set_ylabel(f"{col} ({label})")
        ax.grid(True, alpha=0.3)
    steps = df["steps"].iloc[0]
    fig.suptitle(f"{len(df)} runs, {reps} replicates per value, {steps} steps; "
                 "mean ± std over replicates")
    fig.savefig(png, dpi=120)
    print(f"wrote {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
