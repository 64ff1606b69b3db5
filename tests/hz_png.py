"""hz_png.py - PNG pixels for the shell tests, with Python's zlib alone (no ImageMagick or PIL
on every machine): 8-bit RGB or RGBA, no interlacing, the five filters.

  hz_png.py diff A.png B.png   "W H x0 y0 x1 y1 n": the bounding box of the pixels that differ
                               (x1/y1 exclusive) and their count ("W H - - - - 0" when none),
                               after checking that both images have the same size and that
                               every pixel of B is opaque
  hz_png.py pixel F.png X Y    the RGB of pixel (X, Y) as hex ("ff00ff")
  hz_png.py count F.png RRGGBB how many pixels have that RGB
  hz_png.py agent F.png        "X Y": the centre of the first 4x4 block of white (agent) pixels
                               in the middle third of the image, scanning rows; exit 1 if none
"""
import struct
import sys
import zlib


def decode(path):
    data = open(path, 'rb').read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n', path + ': not a PNG'
    pos, idat, hdr = 8, b'', None
    while pos < len(data):
        n, tag = struct.unpack('>I4s', data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if tag == b'IHDR':
            hdr = struct.unpack('>IIBBBBB', body)
        elif tag == b'IDAT':
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    assert depth == 8 and ctype in (2, 6) and interlace == 0, path + ': unsupported PNG'
    bpp = 4 if ctype == 6 else 3
    raw = zlib.decompress(idat)
    stride = w * bpp
    out, prev = [], bytearray(stride)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 255
        out.append(bytes(line))
        prev = line
    return w, h, bpp, out


def rgb(img, x, y):
    w, h, bpp, rows = img
    return rows[y][x * bpp:x * bpp + 3]


def diff(pa, pb):
    wa, ha, bpa, a = decode(pa)
    wb, hb, bpb, b = decode(pb)
    assert (wa, ha, bpa) == (wb, hb, bpb), 'sizes differ'
    if bpb == 4:
        for y in range(hb):
            assert all(v == 255 for v in b[y][3::4]), \
                '%s: a pixel of row %d is not opaque' % (pb, y)
    x0, y0, x1, y1, n = wa, ha, -1, -1, 0
    for y in range(ha):
        if a[y] == b[y]:
            continue
        for x in range(wa):
            if a[y][x * bpa:(x + 1) * bpa] != b[y][x * bpa:(x + 1) * bpa]:
                n += 1
                x0, y0, x1, y1 = min(x0, x), min(y0, y), max(x1, x + 1), max(y1, y + 1)
    print(wa, ha, *(('-',) * 4 if n == 0 else (x0, y0, x1, y1)), n)


def main(argv):
    cmd = argv[1]
    if cmd == 'diff':
        diff(argv[2], argv[3])
        return 0
    img = decode(argv[2])
    w, h = img[0], img[1]
    if cmd == 'pixel':
        print(rgb(img, int(argv[3]), int(argv[4])).hex())
        return 0
    if cmd == 'count':
        c = bytes.fromhex(argv[3])
        print(sum(rgb(img, x, y) == c for y in range(h) for x in range(w)))
        return 0
    if cmd == 'agent':
        white = b'\xff\xff\xff'
        for y in range(h // 3, h - 8):
            for x in range(w // 3, w - 8):
                if all(rgb(img, x + i, y + j) == white for i in range(4) for j in range(4)):
                    print(x + 2, y + 2)
                    return 0
        return 1
    print('hz_png.py: unknown command ' + cmd, file=sys.stderr)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
