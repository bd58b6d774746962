#!/usr/bin/env python3
"""png_check.py PNG WIDTH HEIGHT FIXTURE.json - checks a page screenshot:
the PNG decodes (zlib, standard library only) to WIDTH x HEIGHT, is not
blank (at least 32 colours, at least 5% non-white pixels) and shows what the
fixture should draw: a flame graph drawn whole (its root frame across
most of the page), and for a report, the flame graph's warm frames and every
thread state of the timeline (colours read from html/page.js); for a diff,
both red (growth) and blue (shrinkage) frames. Exit 0 pass, 1 fail."""
import json
import os
import re
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def decode_png(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB/RGBA PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError("unsupported PNG (depth %d, colour type %d, interlace %d)" % (depth, colour, interlace))
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        unfilter(kind, line, previous, channels)
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, channels)])
        previous = line
    return width, height, rows


def unfilter(kind, line, prev, bpp):
    for i in range(len(line)):
        a = line[i - bpp] if i >= bpp else 0
        b = prev[i]
        c = prev[i - bpp] if i >= bpp else 0
        if kind == 1:
            line[i] = (line[i] + a) & 255
        elif kind == 2:
            line[i] = (line[i] + b) & 255
        elif kind == 3:
            line[i] = (line[i] + (a + b) // 2) & 255
        elif kind == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255


def state_colours():
    """{state: (r, g, b)} from STATE_COLORS in html/page.js."""
    source = open(os.path.join(HERE, "..", "..", "html", "page.js")).read()
    table = re.search(r"STATE_COLORS = \{(.*?)\}", source, re.S).group(1)
    return {m.group(1): tuple(int(m.group(2)[i:i + 2], 16) for i in (0, 2, 4))
            for m in re.finditer(r'(\w+): "#([0-9a-fA-F]{6})"', table)}


def page_colours():
    """{name: (r, g, b)} of the --name: #rrggbb colours in html/page.css."""
    source = open(os.path.join(HERE, "..", "..", "html", "page.css")).read()
    return {m.group(1): tuple(int(m.group(2)[i:i + 2], 16) for i in (0, 2, 4))
            for m in re.finditer(r"--([\w-]+):\s*#([0-9a-fA-F]{6})\b", source)}


def main():
    path, width, height, fixture = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    data = json.load(open(os.path.join(HERE, fixture)))
    w, h, rows = decode_png(path)
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    check((w, h) == (width, height), "size %dx%d (want %dx%d)" % (w, h, width, height))
    counts = {}
    for row in rows:
        for px in row:
            counts[px] = counts.get(px, 0) + 1
    total = w * h
    non_white = total - counts.get((255, 255, 255), 0)
    check(len(counts) >= 32, "%d distinct colours" % len(counts))
    check(non_white >= total // 20, "%.1f%% non-white pixels" % (100.0 * non_white / total))

    # The flame graph's root frame holds every sample, so it is drawn the
    # graph's whole width: one colour over most of a row. Rules and panels
    # (page.css's colours) span rows too and do not count. A page caught
    # while its frames still grow has no such run.
    page = set(page_colours().values()) | {(255, 255, 255)}
    root = 0
    for row in rows:
        start = 0
        for x in range(1, w + 1):
            if x == w or row[x] != row[start]:
                run = x - start
                if run > root and row[start] not in page:
                    root = run
                start = x
    check(root >= w * 3 // 4, "flame graph root frame %d px wide (want >= %d)" % (root, w * 3 // 4))

    def pixels(test):
        return sum(n for px, n in counts.items() if test(*px))

    if data["kind"] == "report":
        warm = pixels(lambda r, g, b: r > 200 and b < 110 and g > 60)
        check(warm >= 2000, "flame graph: %d warm frame pixels" % warm)
        colours = state_colours()
        for state in sorted({s[2] for t in data["timeline"]["threads"] for s in t["spans"]}):
            n = counts.get(colours[state], 0)
            check(n >= 20, "timeline state %s: %d pixels of %s" % (state, n, colours[state]))
    else:
        red = pixels(lambda r, g, b: r > 200 and r - b > 40 and abs(g - b) < 12)
        blue = pixels(lambda r, g, b: b > 200 and b - r > 40 and abs(r - g) < 12)
        check(red >= 500, "differential flame graph: %d red (growth) pixels" % red)
        check(blue >= 500, "differential flame graph: %d blue (shrinkage) pixels" % blue)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
