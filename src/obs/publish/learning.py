"""Agent learning in a build: the learning pages, their index.json section, and the comparison with another build.

`PublishExtras` (the build plugin of `obs build` and `obs serve`) hands this feature its events:
after discovery it reads the agent-learning exports discovery found (`Discovery.learning`, read by
`obs.adapters.agent_sessions`) and analyses every learning key (`obs.analysis.learning`); with
`--compare-to` it compares them with the `learning` section of the other build's index.json
(`obs.analysis.learning_compare`); after the pages it writes `learning/index.html` and a page per key;
and it gives index.json its `learning` section. `obs summary --compare-to` writes the same comparison
as Markdown (`learning_markdown`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from obs import urls
from obs.adapters import LEARNING
from obs.agents import LearningData, Playbook, Session
from obs.analysis.learning import BASELINE_WINDOW, RECENT_WINDOW, KeyReport, key_report
from obs.analysis.learning_compare import LearningChanges, compare, key_record
from obs.diagnostics import Diagnostic, Diagnostics
from obs.numbers import num, pct, signed_num
from obs.publish.mdtext import COMMENT_LIMIT, gh_length, md_code, md_text
from obs.render.learning_pages import interval_text, key_slugs, render_learning
from obs.render.site import Renderer
from obs.write import Staging

SCHEMA = 1


@dataclass
class LearningFeature:
    """The agent-learning part of a build (see the module docstring)."""

    compare_to: Path | None = None
    windows: tuple[int, int] = (RECENT_WINDOW, BASELINE_WINDOW)  # obs.yaml trends: recent_sessions, baseline_sessions
    root: Path | None = None
    data: LearningData = field(default_factory=LearningData)
    reports: list[KeyReport] = field(default_factory=list)
    slugs: dict[str, str] = field(default_factory=dict)
    changes: LearningChanges | None = None

    def rel(self, path: Path) -> str:
        if self.root is None:
            return path.name
        try:
            return path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)

    def read(self, root: Path, files: list[Path], diags: Diagnostics, old: dict[str, Any] | None) -> None:
        """Read and analyse the exports; `old` is the compared build's `learning` section (None: not compared)."""
        self.root = root
        if not files:
            return
        self.data = LEARNING.load(files, diags)
        keys = self.data.keys()
        if not keys:
            diags.warning(
                files[0], "agent-learning files were found but no session with a learning key: no learning page"
            )
            return
        self.slugs = key_slugs(keys)

        def rel_session(s: Session) -> str:
            return self.rel(s.source)

        def rel_playbook(p: Playbook) -> str:
            return self.rel(p.source)

        recent, baseline = self.windows
        self.reports = [key_report(self.data, key, rel_session, rel_playbook, recent, baseline) for key in keys]
        if old is not None:
            self.changes = compare(old, self.records(), str(self.compare_to))

    def records(self) -> list[dict[str, Any]]:
        return [key_record(r, self.slugs[r.key], urls.learning_page(self.slugs[r.key])) for r in self.reports]

    def section(self) -> dict[str, Any]:
        """index.json's `learning`: every key's figures, the export's settings and the comparison."""
        if not self.reports:
            return {}
        doc: dict[str, Any] = {
            "schema": SCHEMA,
            "page": urls.learning_index(),
            "run_metadata": self.data.run_metadata,
            "files": sorted(self.rel(f) for f in self.data.files),
            "keys": self.records(),
        }
        if self.changes is not None:
            doc["comparison"] = self.changes.as_dict()
        return {"learning": doc}

    def write(self, staging: Staging, renderer: Renderer) -> int:
        if not self.reports:
            return 0
        pages = render_learning(
            self.reports,
            self.slugs,
            renderer,
            run_metadata=self.data.run_metadata,
            changes=self.changes,
            files=sorted(self.rel(f) for f in self.data.files),
        )
        for rel, data in sorted(pages.items()):
            staging.write(rel, data)
        return len(pages)


def windows_of(trends: dict[str, int]) -> tuple[int, int]:
    """obs.yaml's `trends: {recent_sessions, baseline_sessions}` (defaults 10 and 50)."""
    return int(trends.get("recent_sessions", RECENT_WINDOW)), int(trends.get("baseline_sessions", BASELINE_WINDOW))


def read_old_learning(path: Path) -> dict[str, Any]:
    """The `learning` section of another build's index.json ({} when it has none)."""
    target = path / urls.MANIFEST if path.is_dir() else path
    try:
        doc = json.loads(target.read_bytes())
    except (OSError, ValueError):
        return {}
    section = doc.get("learning") if isinstance(doc, dict) else None
    return section if isinstance(section, dict) else {}


def learning_markdown(feature: LearningFeature, limit: int = COMMENT_LIMIT) -> str:
    """The learning keys and their comparison with another build, as GitHub Markdown for a PR comment,
    never longer than GitHub's comment limit (whole lines left out at the end, and said so)."""
    text = _markdown(feature)
    if gh_length(text) <= limit:
        return text
    note = (
        "\n\n> **Trimmed to fit GitHub's {:,}-character comment limit:** {} lines left out; every key and "
        "delta is on the site's learning/index.html and in its index.json.\n"
    )
    lines = text.split("\n")
    kept: list[str] = []
    used = gh_length(note.format(limit, len(lines)))
    for line in lines:
        if used + gh_length(line) + 1 > limit:
            break
        kept.append(line)
        used += gh_length(line) + 1
    return "\n".join(kept) + note.format(limit, len(lines) - len(kept))


def _markdown(feature: LearningFeature) -> str:
    lines = ["## Agent learning", ""]
    if not feature.reports:
        return "\n".join([*lines, "No agent sessions were found in the source.", ""])
    meta = feature.data.run_metadata
    if meta:
        lines += [
            "Export settings: "
            + ", ".join(f"{md_text(k)} {md_code(_plain(v), in_table=False)}" for k, v in sorted(meta.items())),
            "",
        ]
    lines += [
        "| Learning key | Sessions | Recent mean | Baseline mean | Recent − baseline [95% CI] "
        "| Negative-impact entries |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for r in feature.reports:
        m = r.momentum
        harmful = [e.entry_id for e in r.entries if e.impact is not None and e.impact < 0]
        lines.append(
            f"| {md_code(r.key)} | {r.sessions} | {num(m.diff.mean_a)} ({m.recent_n}) "
            f"| {num(m.diff.mean_b)} ({m.baseline_n}) "
            f"| {interval_text(m.diff)} | {', '.join(md_code(h) for h in harmful) or '—'} |"
        )
    lines += [
        "",
        "Windows: the last sessions of a key (recent) and the sessions just before them (baseline); "
        "one session is one observation, Welch's t interval.",
    ]
    changes = feature.changes
    if changes is None:
        return "\n".join([*lines, ""])
    lines += ["", f"### Comparison vs previous build ({md_code(changes.against, in_table=False)})", ""]
    old_meta = changes.old_metadata
    if old_meta and old_meta != meta:
        moved = [
            f"{md_text(k)} {md_code(_plain(old_meta.get(k)), in_table=False)} → "
            f"{md_code(_plain(meta.get(k)), in_table=False)}"
            for k in sorted(set(old_meta) | set(meta))
            if old_meta.get(k) != meta.get(k)
        ]
        lines += ["Export settings changed: " + ", ".join(moved), ""]
    lines += [
        "| Learning key | Recent mean | Latest score | Sessions | Cue hits | Adoption rate |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for k in changes.keys:
        if k.state != "compared":
            lines.append(f"| {md_code(k.key)} | {k.state} | | | | |")
            continue
        cells = []
        for name in ("recent mean", "latest score", "sessions", "cue hits", "adoption rate"):
            fig = k.figure(name)
            if fig is None:
                cells.append("—")
            elif name == "adoption rate":
                delta = "—" if fig.delta is None else f"{100 * fig.delta:+.1f} pp".replace("-", "−")
                cells.append(f"{pct(fig.old)} → {pct(fig.new)} ({delta})")
            else:
                cells.append(f"{num(fig.old)} → {num(fig.new)} ({signed_num(fig.delta)})")
        lines.append(f"| {md_code(k.key)} | " + " | ".join(cells) + " |")
    for title, board in (("Best deltas", changes.best), ("Worst deltas", changes.worst)):
        lines += [
            "",
            f"**{title}** (recent mean): "
            + (
                ", ".join(
                    f"{md_code(k.key, in_table=False)} {signed_num(fig.delta)}"
                    for k in board
                    if (fig := k.figure("recent mean")) is not None
                )
                or "none"
            ),
        ]
    lines += ["", "A difference between two exports that share most of their sessions is described, not tested.", ""]
    return "\n".join(lines)


def check_learning(root: Path, files: list[Path], items: list[Diagnostic]) -> str:
    """For `obs check`: read the exports as a build does, add their problems to `items`, say what was found."""
    diags = Diagnostics(root=root)
    data = LEARNING.load(files, diags)
    items.extend(diags.items)
    keys = data.keys()
    entries = sum(len(p.entries) for p in data.playbooks)
    return (
        f"agent sessions: {len(data.sessions)} session{'s' if len(data.sessions) != 1 else ''} of {len(keys)} "
        f"learning key{'s' if len(keys) != 1 else ''} ({', '.join(keys) or 'none'}), {entries} playbook entries, "
        f"in {len(files)} file{'s' if len(files) != 1 else ''}"
    )


def learning_summary(source: Path, old: Path) -> tuple[str, str | None]:
    """(Markdown, None), or ("", why) when the compared build cannot be read."""
    from obs.pipeline import SourceTree
    from obs.publish.changes import ManifestError, read_manifest

    try:
        read_manifest(old)  # an obs build, or a clear message
    except ManifestError as exc:
        return "", f"--compare-to: {exc}"
    tree = SourceTree.open(source)
    feature = LearningFeature(compare_to=old, windows=windows_of(tree.cfg.trends))
    feature.read(tree.root, tree.found.learning, tree.diags, read_old_learning(old))
    return learning_markdown(feature), None


def _plain(value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)
