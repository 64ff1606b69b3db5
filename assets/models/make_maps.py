#!/usr/bin/env python3
"""make_maps.py - draws the PNG maps of the model library (8-bit grayscale, each exactly its
world's size), with Python's standard library alone (zlib and struct write the PNGs).

  python3 make_maps.py [DIR]    writes the maps into DIR (default: this script's directory)

The maps are committed beside the models; run this again only to change them. Every picture is
a pure function of the constants below (the maze's random choices come from the small
generator in this file, not from Python's `random`, whose algorithms may change), so the same
bytes come out on every machine.

  foraging_capacity.png  the food's capacity: fertile patches (255 at their heart, a soft rim)
                         on barren land (0), 128x128
  maze_walls.png         a maze of 8-cell corridors and 4-cell walls, 10x10 maze cells with a
                         2x2 room at the entrance (top left) and at the exit (bottom right),
                         124x124; 255 = wall
  maze_entrance.png      the entrance room: where the agents are released (placement mask)
  maze_exit.png          a 4x4 patch in the far corner of the exit room: the food source
"""
import math
import os
import struct
import sys
import zlib


def write_png(path, width, height, pixels):
    """Writes pixels (a list of rows of ints 0..255) as an 8-bit grayscale PNG."""
    assert len(pixels) == height and all(len(row) == width for row in pixels), path

    def chunk(tag, body):
        crc = zlib.crc32(tag + body) & 0xFFFFFFFF
        return struct.pack('>I', len(body)) + tag + body + struct.pack('>I', crc)

    raw = b''.join(b'\x00' + bytes(row) for row in pixels)  # filter type 0 on every row
    data = (b'\x89PNG\r\n\x1a\n' +
            chunk(b'IHDR', struct.pack('>IIBBBBB', width, height, 8, 0, 0, 0, 0)) +
            chunk(b'IDAT', zlib.compress(raw, 9)) + chunk(b'IEND', b''))
    with open(path, 'wb') as f:
        f.write(data)


class XorShift:
    """xorshift64*: a fixed generator, so the maze never depends on Python's version."""

    def __init__(self, seed):
        self.s = seed & 0xFFFFFFFFFFFFFFFF or 1

    def below(self, n):
        s = self.s
        s ^= s >> 12
        s ^= (s << 25) & 0xFFFFFFFFFFFFFFFF
        s ^= s >> 27
        self.s = s
        return (((s * 0x2545F4914F6CDD1D) & 0xFFFFFFFFFFFFFFFF) >> 11) % n


# ---- foraging: fertile patches on barren land ----

FORAGING_SIZE = 128
# (centre x, centre y, radius of the full-capacity heart, width of the rim) in cells. The
# patches cover about a fifth of the world; the rest grows nothing.
FORAGING_PATCHES = [
    (30, 34, 14, 6),
    (96, 26, 9, 5),
    (88, 92, 17, 6),
    (26, 100, 8, 5),
    (60, 64, 5, 4),
]


def foraging_capacity():
    n = FORAGING_SIZE
    rows = []
    for y in range(n):
        row = []
        for x in range(n):
            v = 0.0
            for cx, cy, r, rim in FORAGING_PATCHES:
                d = math.hypot(x - cx, y - cy)
                if d <= r:
                    v = 1.0
                elif d < r + rim:
                    # a cosine shoulder from 1 at the heart's edge to 0 at the rim's
                    v = max(v, 0.5 + 0.5 * math.cos(math.pi * (d - r) / rim))
            row.append(int(round(255 * v)))
        rows.append(row)
    return rows


# ---- maze: corridors, an entrance room and an exit room ----

MAZE_CELLS = 10    # maze cells per side
MAZE_PITCH = 12    # world cells per maze cell: a corridor and one wall
MAZE_WALL = 4      # wall thickness in world cells (corridors are MAZE_PITCH - MAZE_WALL wide)
MAZE_SEED = 12     # chosen for a winding solution of about 250 cells
MAZE_SIZE = MAZE_CELLS * MAZE_PITCH + MAZE_WALL
ENTRANCE = [(0, 0), (1, 0), (0, 1), (1, 1)]      # maze cells merged into the entrance room
EXIT = [(8, 8), (9, 8), (8, 9), (9, 9)]          # and into the exit room
SOURCE = 4         # side of the source patch in the exit room's far corner


def maze_open_pairs():
    """Randomised depth-first search over the maze cells: the set of opened walls, each a pair
    of adjacent cells; the rooms' inner walls are opened too."""
    n = MAZE_CELLS
    rng = XorShift(MAZE_SEED)
    seen = {(0, 0)}
    stack = [(0, 0)]
    opened = set()
    while stack:
        x, y = stack[-1]
        nbrs = [(x + dx, y + dy) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))
                if 0 <= x + dx < n and 0 <= y + dy < n and (x + dx, y + dy) not in seen]
        if not nbrs:
            stack.pop()
            continue
        nxt = nbrs[rng.below(len(nbrs))]
        opened.add(frozenset(((x, y), nxt)))
        seen.add(nxt)
        stack.append(nxt)
    for room in (ENTRANCE, EXIT):
        for a in room:
            for b in room:
                if abs(a[0] - b[0]) + abs(a[1] - b[1]) == 1:
                    opened.add(frozenset((a, b)))
    return opened


def maze_walls():
    n, p, t = MAZE_CELLS, MAZE_PITCH, MAZE_WALL
    size = MAZE_SIZE
    wall = [[1] * size for _ in range(size)]
    opened = maze_open_pairs()

    def carve(x0, y0, x1, y1):
        for y in range(y0, y1):
            for x in range(x0, x1):
                wall[y][x] = 0

    for cy in range(n):
        for cx in range(n):
            x0, y0 = cx * p + t, cy * p + t
            carve(x0, y0, x0 + p - t, y0 + p - t)
            if frozenset(((cx, cy), (cx + 1, cy))) in opened:
                carve(x0 + p - t, y0, x0 + p, y0 + p - t)
            if frozenset(((cx, cy), (cx, cy + 1))) in opened:
                carve(x0, y0 + p - t, x0 + p - t, y0 + p)
    # a room is open inside, its inner wall crossings included
    for room in (ENTRANCE, EXIT):
        xs = [c[0] for c in room]
        ys = [c[1] for c in room]
        carve(min(xs) * p + t, min(ys) * p + t, (max(xs) + 1) * p, (max(ys) + 1) * p)
    return wall


def room_mask(room):
    p, t, size = MAZE_PITCH, MAZE_WALL, MAZE_SIZE
    xs = [c[0] for c in room]
    ys = [c[1] for c in room]
    x0, y0, x1, y1 = min(xs) * p + t, min(ys) * p + t, (max(xs) + 1) * p, (max(ys) + 1) * p
    return [[255 if x0 <= x < x1 and y0 <= y < y1 else 0 for x in range(size)]
            for y in range(size)]


def source_mask():
    p, size = MAZE_PITCH, MAZE_SIZE
    x1 = y1 = (max(c[0] for c in EXIT) + 1) * p  # the exit room's far corner
    return [[255 if x1 - SOURCE <= x < x1 and y1 - SOURCE <= y < y1 else 0
             for x in range(size)] for y in range(size)]


def path_length(wall):
    """The shortest path, in world cells, from the entrance room to the source patch."""
    size = MAZE_SIZE
    src = source_mask()
    start = room_mask(ENTRANCE)
    dist = [[-1] * size for _ in range(size)]
    queue = [(x, y) for y in range(size) for x in range(size) if src[y][x]]
    for x, y in queue:
        dist[y][x] = 0
    head = 0
    while head < len(queue):
        x, y = queue[head]
        head += 1
        for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
            if 0 <= nx < size and 0 <= ny < size and not wall[ny][nx] and dist[ny][nx] < 0:
                dist[ny][nx] = dist[y][x] + 1
                queue.append((nx, ny))
    return min(dist[y][x] for y in range(size) for x in range(size) if start[y][x])


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    n = FORAGING_SIZE
    write_png(os.path.join(out, 'foraging_capacity.png'), n, n, foraging_capacity())
    wall = maze_walls()
    size = MAZE_SIZE
    write_png(os.path.join(out, 'maze_walls.png'), size, size,
              [[255 * v for v in row] for row in wall])
    write_png(os.path.join(out, 'maze_entrance.png'), size, size, room_mask(ENTRANCE))
    write_png(os.path.join(out, 'maze_exit.png'), size, size, source_mask())
    print('maze: %dx%d, shortest path from the entrance room to the source %d cells'
          % (size, size, path_length(wall)))


if __name__ == '__main__':
    main()
