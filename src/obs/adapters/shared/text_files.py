"""Text files (notes, tags, the head of a file a claim sniffs): read bounded, decoded with bad bytes named,
made safe for a page; Markdown cut to what a page renders."""

from __future__ import annotations

import re
from pathlib import Path

from obs.diagnostics import Diagnostics
from obs.sanitize import CLEANED, UNSAFE_TEXT, clean_text
from obs.textbounds import MAX_CHARS, bound_markdown


def read_head(path: Path, size: int = 65536) -> bytes:
    try:
        with path.open("rb") as fh:
            return fh.read(size)
    except OSError:
        return b""


def decode_text(raw: bytes, path: Path, diags: Diagnostics) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        diags.warning(path, f"not valid UTF-8 (byte {exc.start}); bad bytes were replaced", line)
        return raw.decode("utf-8", errors="replace")


MAX_TEXT_BYTES = 4 * MAX_CHARS  # a Markdown file is read this far: more than a page shows (obs.textbounds)


def read_text_file(path: Path, diags: Diagnostics, max_bytes: int = MAX_TEXT_BYTES) -> str | None:
    """A text file (notes, MLflow tags) as safe text: at most `max_bytes` read (a larger file is cut at a line
    end, and said so), bad UTF-8 replaced, characters a page cannot hold replaced (`obs.sanitize`)."""
    try:
        size = path.stat().st_size
        with path.open("rb") as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as exc:
        diags.unreadable(path, exc)
        return None
    if len(raw) > max_bytes:
        end = raw.rfind(b"\n", 0, max_bytes)
        raw = raw[: end if end > 0 else max_bytes]
        line = raw.count(b"\n") + 1
        diags.warning(path, f"file is {size:,} bytes; only its first {len(raw):,} bytes were read", line)
        while raw and raw[-1] & 0xC0 == 0x80:  # do not end inside a UTF-8 character
            raw = raw[:-1]
        if raw and raw[-1] >= 0xC0:
            raw = raw[:-1]
    text = decode_text(raw, path, diags)
    bad = UNSAFE_TEXT.search(text)
    if bad:
        line = text.count("\n", 0, bad.start()) + 1
        diags.warning(
            path,
            f"text holds characters that cannot be written in a page (control characters); {CLEANED}",
            line,
        )
        text = clean_text(text)
    return text


def bounded_markdown(text: str, path: Path, diags: Diagnostics, first_line: int = 1) -> str:
    """Markdown cut to what a page renders (`obs.textbounds`), each cut a warning at its line of `path`."""
    bounded, cuts = bound_markdown(text)
    for line, message in cuts:
        diags.warning(path, message, line + first_line - 1)
    images = _IMAGE.findall(bounded) if ("![" in bounded or "<img" in bounded.lower()) else []
    if images:
        first = bounded[: bounded.find(images[0])].count("\n") + first_line
        diags.info(
            path,
            f"{len(images)} image{'s' if len(images) > 1 else ''} not shown: pages show no image from Markdown "
            "(one could load from another host); the text around "
            f"{'them' if len(images) > 1 else 'it'} is kept",
            first,
        )
    return bounded


_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)|<img\b[^>]*>", re.IGNORECASE)
