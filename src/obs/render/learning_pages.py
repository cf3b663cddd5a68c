"""The agent-learning pages: `learning/index.html` (every learning key) and `learning/<slug>.html` (one key).

Numbers come from `obs.analysis.learning` (one `KeyReport` per key) and, with `--compare-to`, from
`obs.analysis.learning_compare`; this module only lays them out. The reward chart is drawn in the
browser by `assets/learning.js` with the vendored uPlot from a JSON block on the page (a key's sessions
are a few hundred points: no data file needed); a static SVG drawn here stands in for it without
JavaScript and in print. Both mark the baseline and recent windows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from obs import urls
from obs.analysis.learning import Diff, KeyReport
from obs.analysis.learning_compare import KeyChange, LearningChanges
from obs.numbers import num, pct, signed_num
from obs.render.site import Renderer

SVG_W, SVG_H, PAD = 720, 220, 28


def key_slugs(keys: Iterable[str]) -> dict[str, str]:
    """A page name per learning key; `index` is the list of keys, never a key's page."""
    return urls.unique_slugs(keys, taken=("index",))


def interval_text(d: Diff, signed: bool = True) -> str:
    """`+0.041 [−0.033, +0.115]`, or the delta and why there is no interval."""
    fmt = signed_num if signed else num
    if d.delta is None:
        return "—"
    if d.low is None or d.high is None:
        return f"{fmt(d.delta)} (no interval: {d.problem})" if d.problem else fmt(d.delta)
    return f"{fmt(d.delta)} [{fmt(d.low)}, {fmt(d.high)}]"


def interval_parts(d: Diff) -> tuple[str, str]:
    """(the signed delta, its interval or why there is none) for a table cell and its second line."""
    if d.delta is None:
        return "—", d.problem or ""
    if d.low is None or d.high is None:
        return signed_num(d.delta), f"no interval: {d.problem}" if d.problem else ""
    return signed_num(d.delta), f"[{signed_num(d.low)}, {signed_num(d.high)}]"


def chart_data(r: KeyReport) -> dict[str, Any]:
    """What learning.js draws: rewards in time order (x = session number, 1-based) and the two windows."""
    m = r.momentum
    return {
        "key": r.key,
        "x": list(range(1, len(r.series) + 1)),
        "y": [row[1] for row in r.series],
        "at": [row[0] for row in r.series],
        "ids": [row[3] for row in r.series],
        "baseline": None
        if m.baseline_first is None
        else {"from": m.baseline_first + 1, "to": m.baseline_first + m.baseline_n, "mean": m.diff.mean_b},
        "recent": None
        if m.recent_first is None
        else {"from": m.recent_first + 1, "to": m.recent_first + m.recent_n, "mean": m.diff.mean_a},
    }


def svg_chart(data: dict[str, Any]) -> dict[str, Any]:
    """The static chart's geometry (the template writes the SVG elements): points, window boxes, mean lines."""
    ys: list[float] = data["y"]
    n = len(ys)
    if n == 0:
        return {}
    lo, hi = min(ys), max(ys)
    if hi - lo < 1e-12:
        lo, hi = lo - 0.5, hi + 0.5
    w, h = SVG_W - 2 * PAD, SVG_H - 2 * PAD

    def sx(i: float) -> float:
        return round(PAD + (i - 1) / max(n - 1, 1) * w, 1)

    def sy(v: float) -> float:
        return round(PAD + (hi - v) / (hi - lo) * h, 1)

    def window(win: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
        if not win:
            return None
        x0, x1 = sx(win["from"] - 0.5 if win["from"] > 1 else 1), sx(win["to"] + 0.5 if win["to"] < n else n)
        return {"name": name, "x": x0, "w": round(x1 - x0, 1), "y": PAD, "h": h, "mean_y": sy(win["mean"]), "x1": x1}

    return {
        "w": SVG_W,
        "h": SVG_H,
        "points": [(sx(i + 1), sy(v)) for i, v in enumerate(ys)],
        "windows": [x for x in (window(data["baseline"], "baseline"), window(data["recent"], "recent")) if x],
        "top": num(hi),
        "bottom": num(lo),
        "pad": PAD,
        "n": n,
    }


def change_rows(change: KeyChange | None) -> dict[str, Any] | None:
    if change is None:
        return None

    def rows(ms: list[Any], rate: bool = False) -> list[dict[str, str]]:
        f = pct if rate else num
        return [
            {
                "name": m.name,
                "old": f(m.old),
                "new": f(m.new),
                "delta": signed_num(m.delta) if not rate else _pp(m.delta),
            }
            for m in ms
        ]

    figures = [
        {
            "name": m.name,
            "old": pct(m.old) if m.name == "adoption rate" else num(m.old),
            "new": pct(m.new) if m.name == "adoption rate" else num(m.new),
            "delta": _pp(m.delta) if m.name == "adoption rate" else signed_num(m.delta),
        }
        for m in change.figures
    ]
    return {
        "state": change.state,
        "figures": figures,
        "models": rows(change.models),
        "model_rewards": rows(change.model_rewards),
        "entries": rows(change.entries),
    }


def _pp(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:+.1f} pp".replace("-", "−")


def render_learning(
    reports: list[KeyReport],
    slugs: dict[str, str],
    renderer: Renderer,
    *,
    run_metadata: dict[str, Any],
    changes: LearningChanges | None,
    files: list[str],
) -> dict[str, bytes]:
    """Every learning page by site path."""
    out: dict[str, bytes] = {}
    root = urls.root_of(urls.learning_index())
    keys = [
        {
            "r": r,
            "slug": slugs[r.key],
            "momentum": interval_text(r.momentum.diff),
            "harmful": sum(1 for e in r.entries if e.impact is not None and e.impact < 0),
            "change": changes.of(r.key) if changes else None,
        }
        for r in reports
    ]
    boards = None
    if changes is not None:
        boards = {
            name: [
                {
                    "key": k.key,
                    "slug": slugs.get(k.key),
                    "old": num(m.old),
                    "new": num(m.new),
                    "delta": signed_num(m.delta),
                }
                for k in board
                if (m := k.figure("recent mean")) is not None
            ]
            for name, board in (("best", changes.best), ("worst", changes.worst))
        }
        removed = [k.key for k in changes.keys if k.state == "removed"]
    else:
        removed = []
    old_meta = changes.old_metadata if changes is not None else {}
    meta_changes = [
        (k, old_meta.get(k), run_metadata.get(k))
        for k in sorted(set(old_meta) | set(run_metadata))
        if changes is not None and old_meta.get(k) != run_metadata.get(k)
    ]
    html = renderer.render(
        "learning_index.html",
        meta_changes=meta_changes,
        root=root,
        nav="learning",
        keys=keys,
        run_metadata=sorted(run_metadata.items()),
        changes=changes,
        boards=boards,
        removed=removed,
        files=files,
    )
    out[urls.learning_index()] = html.encode("utf-8")
    for r in reports:
        data = chart_data(r)
        change = changes.of(r.key) if changes else None
        page = renderer.render(
            "learning_key.html",
            root=root,
            nav="learning",
            r=r,
            m=r.momentum,
            momentum=interval_text(r.momentum.diff),
            chart=data,
            svg=svg_chart(data),
            entries=[
                {"e": e, "reward": interval_parts(e.reward), "tokens": interval_parts(e.tokens)} for e in r.entries
            ],
            usage_reward=interval_text(r.usage.reward),
            usage_tokens=interval_text(r.usage.tokens),
            run_metadata=sorted(run_metadata.items()),
            compared=changes is not None,
            against=changes.against if changes else None,
            change=change_rows(change),
        )
        out[urls.learning_page(slugs[r.key])] = page.encode("utf-8")
    return out
