"""Sweeps: axis choice, scales, ranks, and the chart layout's no-overlap guarantee."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from obs.analysis.held_constant import flatten
from obs.analysis.sweeps import build_sweep, build_sweeps, make_axis, run_value, tick_text, varying_keys
from obs.config import DEFAULT_SWEEPS, load_config
from obs.diagnostics import Diagnostics
from obs.render.pcp import CHAR_EM, TICK_PX, TITLE_PX, fit_key, layout
from obs.sitemodel import RunSummary
from obs.urls import slugify
from summaries import make_summary


def run(rid: str, score: float | None, config: dict[str, Any], metric: str = "exact", **kw: Any) -> RunSummary:
    return make_summary(
        id=rid,
        headline={"metric": metric, "value": score},
        rates={metric: score} if score is not None else {},
        fields=flatten({"config": config}),
        **kw,
    )


def hib(name: str) -> bool:
    return "loss" not in name


def test_varying_keys_skip_constants_seeds_unique_text_and_fold_duplicates() -> None:
    runs = [
        run(
            f"r{i}",
            0.5,
            {"lr": lr, "bs": 8, "seed": i, "commit": f"c{i}", "opt": opt, "opt_name": opt.upper()},
            condition=opt,
        )
        for i, (lr, opt) in enumerate([(1e-4, "adam"), (1e-3, "adam"), (1e-4, "sgd"), (1e-2, "sgd")])
    ]
    keys = dict(varying_keys(runs))
    assert list(keys) == ["config.lr", "config.opt"]
    assert keys["config.opt"] == ["config.opt_name", "run.condition"]  # same grouping of runs: one axis


def test_a_key_set_in_too_few_runs_is_not_an_axis() -> None:
    runs = [run("a", 0.1, {"x": 1}), run("b", 0.2, {"y": 1}), run("c", 0.3, {"y": 2}), run("d", 0.4, {"y": 3})]
    assert [k for k, _ in varying_keys(runs)] == ["config.y"]


def test_numeric_axes_use_log_scale_when_values_span_decades() -> None:
    lr = make_axis("config.lr", "setting", [1e-5, 3e-4, 1e-3])
    assert lr is not None and lr.kind == "numeric" and lr.log
    assert lr.position(1e-5) == 0.0 and lr.position(1e-3) == 1.0
    assert lr.position(1e-4) == pytest.approx(0.5)
    assert [t.text for t in lr.ticks] == ["1e-5", "3e-5", "1e-4", "3e-4", "1e-3"]  # 2 decades: 1 and 3 each
    wide = make_axis("config.lr", "setting", [1e-7, 1e-3])
    assert wide is not None and [t.text for t in wide.ticks] == ["1e-7", "1e-6", "1e-5", "1e-4", "1e-3"]
    bs = make_axis("config.bs", "setting", [8, 16, 32])
    assert bs is not None and not bs.log and bs.position(16) == pytest.approx(8 / 24)
    epochs = make_axis("config.epochs", "setting", [3, 4])
    assert epochs is not None and [t.text for t in epochs.ticks] == ["3", "4"]  # integers: no 3.25


def test_categorical_axes_order_values_naturally() -> None:
    ax = make_axis("config.opt", "setting", ["sgd", "adam", True, "10", "2"])
    assert ax is not None and ax.kind == "categorical"
    assert ax.categories == ["2", "10", "adam", "sgd", "true"]
    assert ax.position("2") == 0.0 and ax.position("true") == 1.0 and ax.position("missing") is None


def test_tick_text_is_short() -> None:
    assert [tick_text(x) for x in (0.0003, 12000, 0.25, 2.5e6, 3.0)] == ["3e-4", "12k", "0.25", "2.5M", "3"]


def test_ranks_follow_the_colour_metric_direction_and_highlight_the_best() -> None:
    runs = [run(f"r{i}", v, {"lr": 10.0**-i}) for i, v in enumerate([0.3, 0.9, 0.5, None])]
    sw = build_sweep("exact", "exact", runs, {**DEFAULT_SWEEPS, "highlight": 2}, hib, "exact")
    assert sw is not None
    ranks = {r.summary.id: r.rank for r in sw.runs}
    assert ranks == {"r0": 3, "r1": 1, "r2": 2, "r3": None}
    assert [r.summary.id for r in sw.highlighted] == ["r1", "r2"]
    assert [r.summary.id for r in sw.table_rows] == ["r1", "r2", "r0", "r3"]
    shades = {r.summary.id: r.shade for r in sw.runs}
    assert shades["r1"] == 1.0 and shades["r0"] == 0.0 and shades["r3"] is None
    loss_runs = [run(f"l{i}", v, {"lr": 10.0**-i}, metric="loss") for i, v in enumerate([0.3, 0.9, 0.5])]
    lw = build_sweep("loss", "loss", loss_runs, DEFAULT_SWEEPS, hib, "loss")
    assert lw is not None and {r.summary.id: r.rank for r in lw.runs} == {"l0": 1, "l1": 3, "l2": 2}


def test_configured_keys_and_metrics_and_the_axis_limit() -> None:
    runs = [
        run(f"r{i}", 0.1 * i, {"a": i, "b": i % 2, "c": i % 3, "d": i // 2}, finals={"loss": 1.0 / (i + 1)})
        for i in range(5)
    ]
    sw = build_sweep(
        "g", "g", runs, {**DEFAULT_SWEEPS, "keys": ["config.b", "config.zz"], "metrics": ["final.loss"]}, hib, "exact"
    )
    assert sw is not None
    assert [a.key for a in sw.axes] == ["config.b", "final.loss"]
    assert any("config.zz" in n for n in sw.notes)
    capped = build_sweep("g", "g", runs, {**DEFAULT_SWEEPS, "max_axes": 3}, hib, "exact")
    assert capped is not None and len(capped.axes) == 3
    assert any("not drawn" in n for n in capped.notes)


def test_sweeps_group_by_headline_metric_and_skip_small_groups() -> None:
    runs = [run(f"e{i}", 0.5 + i / 10, {"lr": 1e-4 * (i + 1)}) for i in range(3)]
    runs += [run(f"c{i}", 0.5, {"lr": 1e-4}, metric="correct_rate") for i in range(2)]
    sweeps, skipped = build_sweeps(runs, DEFAULT_SWEEPS, hib, slugify)
    assert [s.name for s in sweeps] == ["exact"]
    assert skipped == ["correct_rate: 2 runs (fewer than 3)"]


def test_run_value_sources() -> None:
    r = run("a", 0.7, {"lr": 1e-3}, arm="full", finals={"loss": 0.2})
    assert run_value(r, "config.lr") == 1e-3
    assert run_value(r, "run.arm") == "full"
    assert run_value(r, "rate.exact") == 0.7
    assert run_value(r, "final.loss") == 0.2
    assert run_value(r, "loss") == 0.2 and run_value(r, "exact") == 0.7
    assert run_value(r, "config.nothing") is None


def test_fit_key_keeps_the_most_telling_end() -> None:
    room = 12 * CHAR_EM * TITLE_PX
    assert fit_key("config.train.lr", room, TITLE_PX) == "…train.lr"
    assert fit_key("lr", room, TITLE_PX) == "lr"
    assert fit_key("config.a_very_long_leaf_name", room, TITLE_PX) == "a_very_long…"


def boxes(sw: Any) -> list[tuple[float, float, float, float]]:
    """Estimated boxes of every label (monospace: width = chars x 0.6 em; height one em)."""
    p = layout(sw, {})
    out = []
    for a in p.axes:
        t = a.title
        out.append((t.x, t.y - TITLE_PX, t.x + len(t.text) * CHAR_EM * TITLE_PX, t.y + 3))
        for lab in [*a.ticks, *([a.na] if a.na else [])]:
            out.append(
                (lab.x, lab.y - TICK_PX / 2 - 1, lab.x + len(lab.text) * CHAR_EM * TICK_PX, lab.y + TICK_PX / 2 + 1)
            )
    assert all(b[0] >= 0 and b[2] <= p.width for b in out), "a label leaves the chart"
    return out


def overlaps(bs: list[tuple[float, float, float, float]]) -> list[tuple[int, int]]:
    return [
        (i, j)
        for i in range(len(bs))
        for j in range(i + 1, len(bs))
        if bs[i][0] < bs[j][2] and bs[j][0] < bs[i][2] and bs[i][1] < bs[j][3] and bs[j][1] < bs[i][3]
    ]


keys = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_.", min_size=1, max_size=60).filter(
    lambda k: not k.startswith(".") and ".." not in k and not k.endswith(".")
)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(keys, min_size=2, max_size=10, unique=True),
    st.integers(3, 60),
    st.integers(2, 80),
)
def test_labels_never_overlap_whatever_the_keys_and_categories(names: list[str], n_runs: int, n_cats: int) -> None:
    runs = []
    for i in range(n_runs):
        config = {
            f"k{j}_{name}": (f"value-{(i * (j + 1)) % n_cats}-{name}" if j % 2 else 10.0 ** (-(i % 7)) * (j + 1))
            for j, name in enumerate(names)
        }
        runs.append(run(f"r{i}", math.sin(i) / 2 + 0.5, config))
    sw = build_sweep("g", "g", runs, {**DEFAULT_SWEEPS, "max_axes": 12}, hib, "exact")
    assert sw is not None
    assert overlaps(boxes(sw)) == []


def test_obs_yaml_sweeps_trends_arms_settings(tmp_path: Path) -> None:
    (tmp_path / "obs.yaml").write_text(
        "sweeps: {keys: [config.lr], max_axes: 0, group_by: nope, colour: x}\n"
        "trends: {recent_runs: 3, baseline_runs: -1}\n"
        "arms: {baseline: control, metric: 3}\n"
        "provenance_facets: [corpus_hash]\n"
    )
    diags = Diagnostics(root=tmp_path)
    cfg = load_config(tmp_path, diags)
    assert cfg.sweeps["keys"] == ["config.lr"] and cfg.sweeps["max_axes"] == DEFAULT_SWEEPS["max_axes"]
    assert cfg.sweeps["group_by"] == "metric"
    assert cfg.trends["recent_runs"] == 3 and cfg.trends["baseline_runs"] == 20
    assert cfg.arms == {"baseline": "control", "metric": None}
    assert cfg.provenance_facets == ["corpus_hash"]
    text = " ".join(d.message for d in diags.items)
    for expected in ("max_axes", "group_by", "unknown sweeps setting 'colour'", "baseline_runs", "arms.metric"):
        assert expected in text


def test_two_continuous_keys_are_two_axes_even_though_every_run_differs_on_both() -> None:
    runs = [run(f"r{i}", 0.5, {"lr": 1e-4 * (1 + i), "dropout": 0.05 * (1 + (i * 3) % 7)}) for i in range(6)]
    assert [k for k, _ in varying_keys(runs)] == ["config.dropout", "config.lr"]


def test_log_scale_only_when_values_bunch_at_the_bottom_of_a_linear_axis() -> None:
    spread = make_axis("config.warmup", "setting", [float(v) for v in range(5, 2000, 50)])
    assert spread is not None and not spread.log  # two decades, but spread evenly: linear reads better
    assert not make_axis("x", "setting", [0.0, 1e-5, 1e-1]).log  # type: ignore[union-attr]  # zero: no log
