"""Markdown for PR comments: hostile text stays text, tables keep their shape, sparklines read right."""

from __future__ import annotations

import re

import markdown
import pytest
from hypothesis import given
from hypothesis import strategies as st

from obs.publish.mdtext import SPARK_CHARS, WORD_JOINER, gh_length, md_code, md_obs, md_text, sparkline, table
from obs.sanitize import visible

HOSTILE = [
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "a | b | c",
    "`code` and ``more``",
    "[click](javascript:alert(1))",
    "![img](http://evil.example/x.png)",
    "**bold** _em_ ~~strike~~",
    "&lt;b&gt; &amp;",
    "# heading\n---\n| x |",
    "<details><summary>x</summary>",
]


def render(md: str) -> str:
    return markdown.markdown(md, extensions=["tables"])


PUNCT = set("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")


def unescaped_punctuation(md: str) -> list[str]:
    """ASCII punctuation not preceded by a backslash escape. CommonMark (and so GitHub) reads a
    backslash-escaped punctuation character as that literal character, whatever it is."""
    out, i = [], 0
    while i < len(md):
        if md[i] == "\\" and i + 1 < len(md) and md[i + 1] in PUNCT:
            i += 2
            continue
        if md[i] in PUNCT:
            out.append(md[i])
        i += 1
    return out


@pytest.mark.parametrize("text", HOSTILE)
def test_every_markup_character_of_hostile_text_is_escaped(text: str) -> None:
    out = md_text(text)
    assert unescaped_punctuation(out) == []
    # and nothing but the escapes and word joiners was added: the reader sees the same text, its newlines and
    # control characters written as escapes (issue 31)
    assert re.sub(r"\\(.)", r"\1", out).replace(WORD_JOINER, "") == re.sub(r"\s+", " ", visible(text)).strip()


def test_control_characters_are_shown_as_escapes_on_one_line() -> None:
    """Issue 31: a title holding ESC or a newline cannot recolour a log or start a Markdown block."""
    out = md_text("a\x1b[31mred\nsrc/x:1: error: forged\u2028b")
    assert "\n" not in out and "\x1b" not in out and "\u2028" not in out
    assert re.sub(r"\\(.)", r"\1", out) == "a\\x1b[31mred\\nsrc/x:1: error: forged\\u2028b"


def test_the_escaping_check_can_fail() -> None:
    assert unescaped_punctuation("<img>") == ["<", ">"]
    assert unescaped_punctuation("\\<img\\>") == []


@pytest.mark.parametrize("text", HOSTILE)
def test_a_hostile_cell_stays_one_cell(text: str) -> None:
    md = table(["A", "B", "C"], [[md_text(text), md_code(text), "end"]])
    html = render(md)
    body = html.split("<tbody>")[1]
    assert body.count("<td") == 3, html
    assert ">end<" in body
    assert "<img" not in html and "<script" not in html


def test_mentions_references_and_bare_urls_are_broken() -> None:
    out = md_text("ping @org/team about #12, see https://evil.example and www.evil.example")
    assert "@" + WORD_JOINER in out
    assert "#" + WORD_JOINER in out
    assert "://" not in out.replace("\\", "")
    assert "www." not in out.replace("\\", "")


def test_newlines_and_controls_become_spaces_and_long_text_is_cut() -> None:
    out = md_text("line1\nline2\r\n\x00\u202eend", limit=100)
    assert "\n" not in out and "\x00" not in out and "\u202e" not in out
    assert md_text("x" * 500, limit=50).endswith("…")
    assert len(md_text("x" * 500, limit=50)) == 50


def test_code_span_fence_is_longer_than_any_backtick_run() -> None:
    assert md_code("a``b") == "```a``b```"
    assert md_code("`x") == "`` `x ``"
    html = render(md_code("a``b", in_table=False))
    assert "<code>a``b</code>" in html


def test_github_counts_utf16_units() -> None:
    assert gh_length("abc") == 3
    assert gh_length("😀") == 2
    assert gh_length("é") == 1


def test_sparkline_follows_the_curve() -> None:
    up = sparkline(list(range(100)), width=8)
    assert len(up) == 8
    assert up[0] == SPARK_CHARS[0] and up[-1] == SPARK_CHARS[-1]
    assert [SPARK_CHARS.index(c) for c in up] == sorted(SPARK_CHARS.index(c) for c in up)
    down = sparkline([10.0, 5.0, float("nan"), 1.0], width=3)
    assert down[0] == SPARK_CHARS[-1] and down[-1] == SPARK_CHARS[0]
    assert sparkline([2.0] * 10, width=5) == SPARK_CHARS[3] * 5
    assert sparkline([]) == "" and sparkline([float("nan")]) == ""


@given(st.text(max_size=200))
def test_any_text_is_one_inert_line(text: str) -> None:
    out = md_text(text)
    assert "\n" not in out
    assert unescaped_punctuation(out) == []


def test_obs_own_code_spans_stay_code_and_the_rest_is_escaped() -> None:
    """A reason obs wrote ("set `baseline:`") reads as GitHub shows code, not as backslashes and backticks."""
    out = md_obs("no baseline to compare with: promotion is judged against a frozen baseline (set `baseline:`)")
    assert out.endswith("\\(set `baseline:`\\)")
    assert "<code>baseline:</code>" in render(out)


@pytest.mark.parametrize("value", HOSTILE)
def test_a_run_value_quoted_in_an_obs_sentence_stays_inert(value: str) -> None:
    """Quoted in a code span, or bare with its own backticks: never a tag, a link or an image."""
    for sentence in (f"family `{value}` fell", f"family {value} fell", f"`a` then {value} then `b`"):
        for in_table in (False, True):
            out = md_obs(sentence, in_table=in_table)
            html = render(table(["A", "B"], [[out, "end"]]) if in_table else out)
            assert "<img" not in html and "<script" not in html and "<a " not in html and "<details" not in html
            assert "\n" not in out
            if in_table:
                assert html.split("<tbody>")[1].count("<td") == 2, html


@given(st.text(max_size=200))
def test_any_obs_sentence_is_one_inert_line(text: str) -> None:
    out = md_obs(text)
    assert "\n" not in out
    outside = re.sub(r"(`+) .*? \1|(`+)[^`]*?\2", "", out)  # what is left outside the code spans md_code made
    assert unescaped_punctuation(outside) == []
