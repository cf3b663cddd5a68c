"""Compare two screenshots the way a reader would notice a difference.

Anti-aliasing, sub-pixel text positioning and small rendering changes move edge pixels by a few
levels, or blend an edge pixel with its neighbour. A reader does not see that; a moved, missing or
restyled element changes a block of pixels to colours that are nowhere near them in the other image.
So a pixel of one image is "explained" by the other when its colour lies, channel by channel, within
the range of colours of the 3x3 neighbourhood around the same place in the other image, widened by
`channel_tolerance`. A blend of two neighbouring colours (anti-aliasing) is explained; an element
moved by two pixels or more, one that is missing or appears, and a changed colour are not. Both
directions are checked. The images differ when more than `max_diff_pixels` pixels are unexplained.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

CHANNEL_TOLERANCE = 24  # of 255, beyond the neighbourhood's range: rendering noise stays inside it
MAX_DIFF_PIXELS = 40  # of ~1 M pixels: tolerates a stray glyph edge, not a moved 10x10 icon


@dataclass(frozen=True)
class Comparison:
    """What differs between an actual and an expected image; `mask` marks the different pixels."""

    same_size: bool
    diff_pixels: int
    max_diff_pixels: int
    mask: np.ndarray | None
    bbox: tuple[int, int, int, int] | None  # left, top, right, bottom of the different region

    @property
    def ok(self) -> bool:
        return self.same_size and self.diff_pixels <= self.max_diff_pixels

    def describe(self) -> str:
        if not self.same_size:
            return "the images have different sizes"
        where = f" in the box (left, top, right, bottom) = {self.bbox}" if self.bbox else ""
        return f"{self.diff_pixels} pixels differ (at most {self.max_diff_pixels} allowed){where}"


def load_rgb(path: Path) -> np.ndarray:
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"), dtype=np.int16)


def _unexplained(a: np.ndarray, b: np.ndarray, tolerance: int) -> np.ndarray:
    """Pixels of `a` whose colour is outside the (widened) colour range of b's 3x3 neighbourhood."""
    h, w, _ = a.shape
    padded = np.pad(b, ((1, 1), (1, 1), (0, 0)), mode="edge")
    low = b.copy()
    high = b.copy()
    for dy in range(3):
        for dx in range(3):
            shifted = padded[dy : dy + h, dx : dx + w]
            np.minimum(low, shifted, out=low)
            np.maximum(high, shifted, out=high)
    outside = (a < low - tolerance) | (a > high + tolerance)
    return np.asarray(outside.any(axis=2))


def compare(
    actual: np.ndarray,
    expected: np.ndarray,
    channel_tolerance: int = CHANNEL_TOLERANCE,
    max_diff_pixels: int = MAX_DIFF_PIXELS,
) -> Comparison:
    if actual.shape != expected.shape:
        return Comparison(False, -1, max_diff_pixels, None, None)
    exact = np.abs(actual - expected).max(axis=2) > channel_tolerance
    if not exact.any():
        return Comparison(True, 0, max_diff_pixels, exact, None)
    mask = exact & (
        _unexplained(actual, expected, channel_tolerance) | _unexplained(expected, actual, channel_tolerance)
    )
    n = int(mask.sum())
    bbox = None
    if n:
        ys, xs = np.nonzero(mask)
        bbox = (int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1)
    return Comparison(True, n, max_diff_pixels, mask, bbox)


def diff_image(actual: np.ndarray, expected: np.ndarray, result: Comparison) -> Image.Image:
    """The expected image faded to grey, with the different pixels in red: easy to see at a glance."""
    if not result.same_size or result.mask is None:
        h = max(actual.shape[0], expected.shape[0])
        w = actual.shape[1] + expected.shape[1]
        canvas = Image.new("RGB", (w, h), "white")
        canvas.paste(Image.fromarray(expected.astype(np.uint8)), (0, 0))
        canvas.paste(Image.fromarray(actual.astype(np.uint8)), (expected.shape[1], 0))
        return canvas
    grey = expected.mean(axis=2, keepdims=True)
    faded = (255 - (255 - grey) * 0.25).repeat(3, axis=2)
    faded[result.mask] = (230, 0, 0)
    return Image.fromarray(faded.astype(np.uint8))
