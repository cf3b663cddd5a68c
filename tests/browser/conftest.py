"""Browser fixtures: Debian's Chromium driven by Playwright, the demo site served under a sub-path.

One browser for the whole session (pytest-playwright's `browser` fixture, launched from
/usr/bin/chromium: `playwright install` cannot download its own build here and must never be run).
Each test gets a fresh context. The whole browser suite is skipped, with the reason, only when
Chromium is missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browserkit import (
    CHROMIUM,
    CHROMIUM_ARGS,
    DESKTOP,
    HERE,
    TIMEOUT_MS,
    PageWatch,
    ServedSite,
    chromium_available,
    serve,
)
from playwright.sync_api import BrowserContext


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if chromium_available():
        return
    skip = pytest.mark.skip(reason=f"{CHROMIUM} not found: install Debian's chromium (make system-deps)")
    for item in items:
        if HERE in item.path.resolve().parents:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict[str, Any]) -> dict[str, Any]:
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args: dict[str, Any]) -> dict[str, Any]:
    """Everything that changes pixels is pinned: viewport, pixel ratio, locale, time zone, motion."""
    return {
        **browser_context_args,
        "viewport": DESKTOP,
        "device_scale_factor": 1,
        "locale": "en-US",
        "timezone_id": "UTC",
        "reduced_motion": "reduce",
        "color_scheme": "light",
    }


@pytest.fixture(scope="session")
def served_demo(demo_site: Path) -> Iterator[ServedSite]:
    """The demo site on 127.0.0.1, only below /obs-demo/ (a root-relative URL would 404)."""
    site = serve(demo_site)
    yield site
    site.close()


@pytest.fixture
def watch(context: BrowserContext, served_demo: ServedSite) -> Iterator[PageWatch]:
    """Routes the test's context: only the served demo site (and data: URLs) may be loaded; any
    other request, console error, uncaught exception or failed request fails the test."""
    context.set_default_timeout(TIMEOUT_MS)
    w = PageWatch(allowed=(served_demo.base, "data:"))
    w.attach(context)
    yield w
    w.assert_clean("after the test")
