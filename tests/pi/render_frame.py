"""Renders a terminal frame (the ANSI a pi-tui TUI wrote, saved by clients/pi/test/picker.test.ts
with PIES_PICKER_FRAME) to a PNG: pyte (a VT100/xterm emulator) replays the escape sequences,
Pillow draws its cells in a monospace font. Not a test; makes docs/images/pi-events-picker.png:

    python -m venv /tmp/shot && /tmp/shot/bin/pip install pyte pillow
    (cd clients/pi && PIES_PICKER_FRAME=/tmp/frame.ans node --import jiti/register --test test/picker.test.ts)
    /tmp/shot/bin/python tests/pi/render_frame.py /tmp/frame.ans docs/images/pi-events-picker.png
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pyte  # type: ignore[import-not-found]
from PIL import Image, ImageDraw, ImageFont  # type: ignore[import-not-found]

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
BACKGROUND = (30, 30, 36)
FOREGROUND = (212, 212, 212)
PAD = 14


def colour(value: str, default: tuple[int, int, int]) -> tuple[int, int, int]:
    if value == "default":
        return default
    if len(value) == 6:
        return (int(value[0:2], 16), int(value[2:4], 16), int(value[4:6], 16))
    named = {"black": (0, 0, 0), "red": (205, 49, 49), "green": (13, 188, 121),
             "yellow": (229, 229, 16), "blue": (36, 114, 200), "magenta": (188, 63, 188),
             "cyan": (17, 168, 205), "white": (229, 229, 229)}
    return named.get(value, default)


def render(frame: str, columns: int, rows: int, size: int) -> Image.Image:
    screen = pyte.Screen(columns, rows)
    pyte.Stream(screen).feed(frame.replace("\r\n", "\n").replace("\n", "\r\n"))
    used = max((y for y in range(rows) if screen.display[y].strip()), default=0) + 1
    font, bold = ImageFont.truetype(FONT, size), ImageFont.truetype(BOLD, size)
    cell_w = round(font.getlength("M"))
    cell_h = round(size * 1.35)
    image = Image.new("RGB", (columns * cell_w + 2 * PAD, used * cell_h + 2 * PAD), BACKGROUND)
    draw = ImageDraw.Draw(image)
    for y in range(used):
        line = screen.buffer[y]
        for x in range(columns):
            ch = line[x]
            fg, bg = colour(ch.fg, FOREGROUND), colour(ch.bg, BACKGROUND)
            if ch.reverse:
                fg, bg = bg, fg
            left, top = PAD + x * cell_w, PAD + y * cell_h
            if bg != BACKGROUND:
                draw.rectangle([left, top, left + cell_w, top + cell_h], fill=bg)
            if ch.data.strip():
                draw.text((left, top + (cell_h - size) // 2), ch.data, font=bold if ch.bold else font,
                          fill=fg)
    return image


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("frame", type=Path)
    ap.add_argument("png", type=Path)
    ap.add_argument("--columns", type=int, default=118)  # the test's terminal
    ap.add_argument("--rows", type=int, default=22)
    ap.add_argument("--size", type=int, default=15)
    args = ap.parse_args()
    image = render(args.frame.read_text(encoding="utf-8"), args.columns, args.rows, args.size)
    args.png.parent.mkdir(parents=True, exist_ok=True)
    image.save(args.png, optimize=True)
    print(f"{args.png}: {image.width}x{image.height}")


if __name__ == "__main__":
    main()
