#!/usr/bin/python3
"""peer_numpy.py - the Horizon model written the way a scientist would write it in NumPy/SciPy.

It does the same work per step as `horizon run --backend cpu` (README, "The model"), vectorised:
  1. sense:   one FFT convolution of the field with the disk {dx^2 + dy^2 <= r^2} gives the
              horizon sum of every cell (float64, periodic); the 9 candidates of each agent are
              gathered from it (bounded grids: zero padding, candidates outside are never chosen);
  2. decide:  argmax over the 9 candidates (ties to the lower index), a random candidate with
              probability `noise`;
  3. move:    claims on cells empty at the start of the step, the highest random key wins
              (one sort + np.unique);
  4. deposit: field[pos] += deposit (one agent per cell);
  5. diffuse: `sweeps` Jacobi sweeps with np.roll (periodic) or edge padding, then decay.
It is not bit-exact (float sums, NumPy's RNG): it is a performance peer, not an oracle.

Usage: peer_numpy.py --size 512 --radius 8 --steps 50 [--density 0.1] [--boundary periodic]
Prints one line: "steps_per_second <value>" (timed over the steps, setup excluded).
"""
import argparse
import time

import numpy as np
import scipy.fft


def disk_kernel(r):
    dy, dx = np.mgrid[-r:r + 1, -r:r + 1]
    return (dx * dx + dy * dy <= r * r).astype(np.float64)


class Peer:
    def __init__(self, w, h, r, density, boundary, seed=1, diffusion=0.5, sweeps=2, decay=0.01,
                 deposit=1.0, noise=0.3):
        self.w, self.h, self.r = w, h, r
        self.boundary = boundary
        self.diffusion, self.sweeps, self.decay = diffusion, sweeps, decay
        self.deposit, self.noise = deposit, noise
        self.rng = np.random.default_rng(seed)
        self.field = self.rng.random((h, w), dtype=np.float32)
        n = int(density * w * h)
        self.pos = self.rng.choice(w * h, size=n, replace=False).astype(np.int64)
        self.occ = np.zeros(w * h, dtype=bool)
        self.occ[self.pos] = True
        # The disk's transfer function, computed once. Periodic: the kernel wrapped onto the
        # torus (a disk wider than the grid counts cells more than once, as Horizon does).
        # Bounded: linear convolution through zero padding of r on every side.
        k = disk_kernel(r)
        if boundary == "periodic":
            self.fh, self.fw = h, w
            kt = np.zeros((h, w))
            dy, dx = np.nonzero(k)
            np.add.at(kt, ((dy - r) % h, (dx - r) % w), 1.0)
        else:
            self.fh = scipy.fft.next_fast_len(h + 2 * r, real=True)
            self.fw = scipy.fft.next_fast_len(w + 2 * r, real=True)
            kt = np.zeros((self.fh, self.fw))
            kt[:2 * r + 1, :2 * r + 1] = k
        self.kf = scipy.fft.rfft2(kt, workers=1)
        # Candidate offsets: stay, then the 8 neighbours row by row from the upper left.
        self.cdx = np.array([0, -1, 0, 1, -1, 1, -1, 0, 1])
        self.cdy = np.array([0, -1, -1, -1, 0, 0, 1, 1, 1])

    def horizon(self):
        """Disk sums of every cell, float64, (h, w)."""
        h, w, r = self.h, self.w, self.r
        f = self.field.astype(np.float64)
        ff = scipy.fft.rfft2(f, s=(self.fh, self.fw), workers=1)
        s = scipy.fft.irfft2(ff * self.kf, s=(self.fh, self.fw), workers=1)
        if self.boundary == "periodic":
            # s[y, x] = sum of f[y - dy, x - dx] over the wrapped kernel: the disk is symmetric.
            return s
        return s[r:r + h, r:r + w]

    def step(self):
        h, w = self.h, self.w
        n = self.pos.size
        # 1. sense
        hz = self.horizon().ravel()
        x = self.pos % w
        y = self.pos // w
        cx = x[:, None] + self.cdx[None, :]
        cy = y[:, None] + self.cdy[None, :]
        if self.boundary == "periodic":
            cx %= w
            cy %= h
            valid = None
        else:
            valid = (cx >= 0) & (cx < w) & (cy >= 0) & (cy < h)
            np.clip(cx, 0, w - 1, out=cx)
            np.clip(cy, 0, h - 1, out=cy)
        cand = cy * w + cx
        sums = hz[cand]
        if valid is not None:
            sums[~valid] = -np.inf
        # 2. decide
        choice = np.argmax(sums, axis=1)
        rnd = self.rng.random(n) < self.noise
        rc = self.rng.integers(0, 9, size=n)
        if valid is not None:
            rc = np.where(valid[np.arange(n), rc], rc, 0)
        choice[rnd] = rc[rnd]
        target = cand[np.arange(n), choice]
        # 3. move: claims on cells empty at the start; the highest key wins
        claiming = np.nonzero((target != self.pos) & ~self.occ[target])[0]
        if claiming.size:
            key = self.rng.random(claiming.size)
            order = np.lexsort((-key, target[claiming]))
            t_sorted = target[claiming][order]
            _, first = np.unique(t_sorted, return_index=True)
            winners = claiming[order[first]]
            self.occ[self.pos[winners]] = False
            self.occ[target[winners]] = True
            self.pos[winners] = target[winners]
        # 4. deposit (one agent per cell: no repeated indices)
        flat = self.field.ravel()
        flat[self.pos] += np.float32(self.deposit)
        # 5. diffuse
        a = np.float32(self.diffusion)
        om = np.float32(1.0) - a
        f = self.field
        for _ in range(self.sweeps):
            if self.boundary == "periodic":
                nb = (np.roll(f, 1, 0) + np.roll(f, -1, 0)) + (np.roll(f, 1, 1) + np.roll(f, -1, 1))
            else:
                p = np.pad(f, 1, mode="edge" if self.boundary == "wall" else "constant")
                nb = (p[:-2, 1:-1] + p[2:, 1:-1]) + (p[1:-1, 2:] + p[1:-1, :-2])
            f = om * f + a * (nb * np.float32(0.25))
        f *= np.float32(1.0 - self.decay)
        self.field = f


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--height", type=int, default=0, help="default: --size")
    ap.add_argument("--radius", type=int, default=8)
    ap.add_argument("--density", type=float, default=0.1)
    ap.add_argument("--boundary", default="periodic", choices=["periodic", "wall", "fixed"])
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=2)
    args = ap.parse_args()
    p = Peer(args.size, args.height or args.size, args.radius, args.density, args.boundary)
    for _ in range(args.warmup):
        p.step()
    t0 = time.perf_counter()
    for _ in range(args.steps):
        p.step()
    dt = time.perf_counter() - t0
    print(f"steps_per_second {args.steps / dt:.3f}")


if __name__ == "__main__":
    main()
