"""The comment budget: least important sections go first, and the comment says so."""

from __future__ import annotations

from obs.publish.mdtext import COMMENT_LIMIT, gh_length
from obs.publish.summary_md import Section, assemble


def test_everything_fits_nothing_dropped() -> None:
    text = assemble("HEAD", [Section("A", "a", 1), Section("B", "b", 2)], "FOOT")
    assert "#### A" in text and "#### B" in text and "Trimmed" not in text
    assert text.index("HEAD") < text.index("#### A") < text.index("#### B") < text.index("FOOT")


def test_lowest_priority_is_dropped_first_until_it_fits() -> None:
    sections = [
        Section("Big important", "x" * 30_000, 80),
        Section("Big minor", "y" * 30_000, 10),
        Section("Small", "z", 5),
    ]
    text = assemble("HEAD", sections, "FOOT", limit=40_000)
    assert gh_length(text) <= 40_000
    assert "#### Big important" in text and "#### Big minor" not in text
    assert "#### Small" not in text  # priority 5 goes before priority 10
    assert "left out Big minor, Small" in text and text.rstrip().endswith("FOOT")


def test_head_and_foot_survive_even_when_nothing_else_does() -> None:
    text = assemble("H" * 100, [Section("S", "s" * 70_000, 99)], "FOOT")
    assert gh_length(text) <= COMMENT_LIMIT and "FOOT" in text and "left out S" in text


def test_an_oversized_head_is_cut_at_a_line_boundary() -> None:
    head = "\n".join("😀" * 100 for _ in range(400))  # 80,000 UTF-16 units
    text = assemble(head, [], "FOOT")
    assert gh_length(text) <= COMMENT_LIMIT and "**Cut**" in text
