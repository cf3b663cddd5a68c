"""Snapshots: what the reader sees on the main page kinds, at a desktop and a phone size, compared
with the images committed in tests/browser/snapshots/.

The comparison (imagediff.py) ignores anti-aliasing noise but fails on a moved, missing or restyled
element; test_a_changed_css_rule_fails_the_comparison shows it. On a failure the actual, expected
and diff images are written to tests/browser/output/snapshots/. Pages change on purpose: then run
`make snapshots` (OBS_UPDATE_SNAPSHOTS=1), look at the new images and commit them. The Chromium that
made the images is recorded in snapshots/chromium-version.txt; another version renders text a little
differently, so a failure says so, and a pass under another version warns.
"""

from __future__ import annotations

import io
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from browserkit import (
    CHROMIUM_ARGS,
    DESKTOP,
    HERE,
    OUTPUT,
    PHONE,
    ServedSite,
    add_css_rule,
    new_watched_context,
    settle,
)
from imagediff import compare, diff_image, load_rgb
from PIL import Image
from playwright.sync_api import Browser, BrowserContext, Page, Playwright

SNAPSHOTS = HERE / "snapshots"
VERSION_FILE = SNAPSHOTS / "chromium-version.txt"
UPDATE = os.environ.get("OBS_UPDATE_SNAPSHOTS") == "1"
SIZES = {"1366x768": DESKTOP, "390x844": PHONE}
RUN = "runs/spec03-r2/index.html"
TARGETS = {  # name: (page, element id to scroll to the top, or None for the top of the page)
    "index": ("index.html", None),
    "spec": ("specs/spec03.html", None),
    "run-top": (RUN, None),
    "run-failures": (RUN, "failures"),
    "campaign": ("campaigns/sepa-campaign/index.html", None),
}


@pytest.fixture(scope="module")
def contexts(
    browser: Browser, browser_context_args: dict[str, Any], served_demo: ServedSite
) -> Iterator[dict[str, BrowserContext]]:
    """One context per screen size for the module; every request still routed and watched."""
    made = {}
    watches = []
    for size, viewport in SIZES.items():
        context, watch = new_watched_context(
            browser, browser_context_args, (served_demo.base, "data:"), viewport=viewport
        )
        made[size] = context
        watches.append(watch)
    yield made
    for context in made.values():
        context.close()
    for watch in watches:
        watch.assert_clean("snapshot pages")


def shoot(page: Page, url: str, anchor: str | None) -> np.ndarray:
    """A viewport screenshot once fonts and images are in, animations and the caret frozen."""
    page.goto(url)
    settle(page)
    if anchor:
        page.evaluate("id => document.getElementById(id).scrollIntoView({block: 'start'})", anchor)
    else:
        page.evaluate("scrollTo(0, 0)")
    page.evaluate("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
    png = page.screenshot(animations="disabled", caret="hide", scale="css")
    with Image.open(io.BytesIO(png)) as im:
        return np.asarray(im.convert("RGB"), dtype=np.int16)


def recorded_version() -> str | None:
    if not VERSION_FILE.is_file():
        return None
    lines = [ln.strip() for ln in VERSION_FILE.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    return lines[0] if lines else None


def save(image: np.ndarray, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(image.astype(np.uint8)).save(path, optimize=True)


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("name", list(TARGETS))
def test_snapshot(
    contexts: dict[str, BrowserContext], browser: Browser, served_demo: ServedSite, name: str, size: str
) -> None:
    rel, anchor = TARGETS[name]
    page = contexts[size].new_page()
    try:
        actual = shoot(page, served_demo.url(rel), anchor)
    finally:
        page.close()
    expected_path = SNAPSHOTS / f"{name}-{size}.png"
    if UPDATE:
        save(actual, expected_path)
        VERSION_FILE.write_text(
            f"# The Chromium that made the snapshots in this folder (written by `make snapshots`).\n{browser.version}\n"
        )
        return
    version = recorded_version()
    version_note = ""
    if version != browser.version:
        version_note = (
            f"\nNOTE: the snapshots were made with Chromium {version}, this is Chromium {browser.version}; "
            "text may render a little differently. "
        )
    if not expected_path.is_file():
        pytest.fail(f"no snapshot {expected_path.relative_to(HERE)}: run `make snapshots` and commit the images")
    expected = load_rgb(expected_path)
    result = compare(actual, expected)
    if not result.ok:
        out = OUTPUT / "snapshots" / f"{name}-{size}"
        save(actual, out / "actual.png")
        save(expected, out / "expected.png")
        diff_image(actual, expected, result).save(out / "diff.png")
        pytest.fail(
            f"{name} at {size} ({rel}{'#' + anchor if anchor else ''}) looks different: {result.describe()}.\n"
            f"See {out}/actual.png, expected.png and diff.png (differences in red).{version_note}\n"
            "If the change is intended, run `make snapshots` and commit the new images."
        )
    if version_note:
        warnings.warn(UserWarning(version_note.strip() + " The images still match."), stacklevel=1)


MUTATIONS = {  # one CSS rule each, the kind of change a snapshot must not let through
    "moved 3 px": "#headline-delta { position: relative; top: 3px; }",
    "missing": "#failures-link .go { visibility: hidden; }",
    "restyled": ".tile .label { text-transform: none; }",
    "recoloured": ".badge.finished { color: #1f2933; }",
}


def test_a_changed_css_rule_fails_the_comparison(contexts: dict[str, BrowserContext], served_demo: ServedSite) -> None:
    """Live shots, so this holds even while the committed images are stale: the same page shot twice
    compares equal, and one changed CSS rule makes it compare different."""
    url = served_demo.url(RUN)
    page = contexts["1366x768"].new_page()
    try:
        first = shoot(page, url, None)
        second = shoot(page, url, None)
        assert compare(second, first).diff_pixels == 0, "the same page must give the same picture"
        for what, rule in MUTATIONS.items():
            mutated = contexts["1366x768"].new_page()
            try:
                add_css_rule(mutated, rule)
                changed = shoot(mutated, url, None)
            finally:
                mutated.close()
            result = compare(changed, first)
            assert not result.ok, f"{what} ({rule}) was not caught: {result.describe()}"
    finally:
        page.close()


def test_rendering_noise_is_tolerated(
    playwright: Playwright,
    browser_type_launch_args: dict[str, Any],
    browser_context_args: dict[str, Any],
    contexts: dict[str, BrowserContext],
    served_demo: ServedSite,
) -> None:
    """Glyphs placed on whole pixels instead of sub-pixel positions: thousands of pixels change (the
    kind of difference another machine or Chromium build makes), and the comparison lets it pass."""
    url = served_demo.url(RUN)
    page = contexts["1366x768"].new_page()
    try:
        reference = shoot(page, url, None)
    finally:
        page.close()
    args = {**browser_type_launch_args, "args": [*CHROMIUM_ARGS, "--disable-font-subpixel-positioning"]}
    other = playwright.chromium.launch(**args)
    try:
        noisy = shoot(other.new_page(**browser_context_args), url, None)
    finally:
        other.close()
    changed = int((np.abs(noisy - reference).max(axis=2) > 0).sum())
    assert changed > 5000, f"the two renderings should differ in many pixels, not {changed}"
    result = compare(noisy, reference)
    assert result.ok, result.describe()


def test_failure_images_mark_the_difference(tmp_path: Path) -> None:
    expected = np.full((40, 60, 3), 255, dtype=np.int16)
    actual = expected.copy()
    actual[10:20, 30:50] = (180, 30, 30)  # an element that was not there
    result = compare(actual, expected)
    assert not result.ok and result.diff_pixels == 200 and result.bbox == (30, 10, 50, 20)
    diff = np.asarray(diff_image(actual, expected, result))
    assert tuple(diff[15, 40]) == (230, 0, 0) and tuple(diff[5, 5]) != (230, 0, 0)
    assert not compare(actual[:, :50], expected).ok, "a different size is a difference"
