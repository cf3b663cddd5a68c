"""Walk the source tree once and find runs, spec folders and campaign folders.

Discovery reads only small metadata files (spec.yaml, campaign.yaml) and asks the adapters which
folders they recognise; the runs themselves are read later, one by one, so a tree of hundreds
of runs never sits in memory at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from obs.adapters import ADAPTERS
from obs.adapters.base import RunSource, is_inside
from obs.diagnostics import Diagnostics
from obs.fields import FieldReader
from obs.model import Campaign, Condition, Spec
from obs.safeyaml import YamlError, load_yaml_file

SPEC_FILE = "spec.yaml"
CAMPAIGN_FILE = "campaign.yaml"


@dataclass
class FolderClaim:
    """For `obs check`: which adapter took which folder, and how many runs it found there."""

    folder: Path
    adapter: str
    runs: int
    notes: tuple[str, ...] = ()


@dataclass
class Discovery:
    root: Path
    runs: list[RunSource] = field(default_factory=list)
    specs: dict[str, Spec] = field(default_factory=dict)
    campaigns: dict[str, Campaign] = field(default_factory=dict)
    claims: list[FolderClaim] = field(default_factory=list)
    diags: Diagnostics = field(default_factory=Diagnostics)


def discover(root: Path, *, exclude: tuple[Path, ...] = ()) -> Discovery:
    root = root.resolve()
    found = Discovery(root=root, diags=Diagnostics(root=root))
    excluded = {p.resolve() for p in exclude}
    visited: set[Path] = set()

    def walk(folder: Path, spec: str | None, campaign: str | None) -> None:
        real = folder.resolve()
        if real in visited or real in excluded:
            return
        visited.add(real)
        if (folder / SPEC_FILE).is_file():
            parsed_spec = read_spec(folder, found.diags)
            if parsed_spec is not None:
                if parsed_spec.id in found.specs:
                    found.diags.error(
                        folder / SPEC_FILE,
                        f"spec id '{parsed_spec.id}' is already used by "
                        f"{found.specs[parsed_spec.id].source_dir}; this spec folder was ignored",
                    )
                else:
                    found.specs[parsed_spec.id] = parsed_spec
                    spec = parsed_spec.id
        if (folder / CAMPAIGN_FILE).is_file():
            parsed_campaign = read_campaign(folder, found.diags)
            if parsed_campaign is not None:
                if parsed_campaign.id in found.campaigns:
                    found.diags.error(
                        folder / CAMPAIGN_FILE,
                        f"campaign id '{parsed_campaign.id}' is already used; this campaign folder was ignored",
                    )
                else:
                    found.campaigns[parsed_campaign.id] = parsed_campaign
                    campaign = parsed_campaign.id
        for adapter in ADAPTERS:
            claim = adapter.claim(folder, root)
            if claim is None:
                continue
            for source in claim.runs:
                found.runs.append(replace(source, spec=source.spec or spec, campaign=source.campaign or campaign))
            found.claims.append(FolderClaim(folder, adapter.name, len(claim.runs), claim.notes))
            if folder in claim.owned_dirs:
                return
            for owned in claim.owned_dirs:
                visited.add(owned.resolve())
            break
        try:
            children = sorted(p for p in folder.iterdir() if p.is_dir())
        except OSError as exc:
            found.diags.warning(folder, f"cannot list folder: {exc.strerror}")
            return
        for child in children:
            if child.name.startswith(".") or child.name == "__pycache__":
                continue
            if child.is_symlink() and not is_inside(child, root):
                found.diags.info(child, "symbolic link leaves the source tree; not followed")
                continue
            walk(child, spec, campaign)

    walk(root, None, None)
    return found


def _read_mapping(path: Path, diags: Diagnostics) -> FieldReader | None:
    try:
        doc = load_yaml_file(path)
    except YamlError as exc:
        diags.error(path, str(exc), exc.line)
        return None
    if doc.data is None:
        doc.data = {}
    if not isinstance(doc.data, dict):
        diags.error(path, "expected a mapping at the top level", 1)
        return None
    return FieldReader(doc, path, diags)


def read_spec(folder: Path, diags: Diagnostics) -> Spec | None:
    f = _read_mapping(folder / SPEC_FILE, diags)
    if f is None:
        return None
    return Spec(
        id=f.text("id") or folder.name,
        source_dir=folder,
        title=f.text("title") or "",
        question=f.markdown("question"),
        contract=f.mapping("contract"),
        baseline=f.text("baseline"),
        primary_metric=f.text("primary_metric"),
    )


def read_campaign(folder: Path, diags: Diagnostics) -> Campaign | None:
    path = folder / CAMPAIGN_FILE
    f = _read_mapping(path, diags)
    if f is None:
        return None
    conditions: list[Condition] = []
    raw_conditions = f.data.get("conditions")
    if isinstance(raw_conditions, list):
        for item in raw_conditions:
            if isinstance(item, str | int | float) and not isinstance(item, bool):
                conditions.append(Condition(name=str(item)))
            elif isinstance(item, dict) and "name" in item:
                conditions.append(
                    Condition(
                        name=str(item["name"]),
                        label=str(item.get("label") or ""),
                        description=str(item.get("description") or ""),
                    )
                )
            else:
                diags.warning(
                    path,
                    "each condition is a name or a mapping with 'name'; one was skipped",
                    f.line("conditions"),
                )
    elif raw_conditions is not None:
        diags.warning(path, "'conditions' should be a list", f.line("conditions"))
    seeds = []
    for s in f.data.get("seeds") or []:
        if isinstance(s, int) and not isinstance(s, bool):
            seeds.append(s)
        else:
            diags.warning(path, f"seed {s!r} is not an integer; skipped", f.line("seeds"))
    campaign = Campaign(
        id=f.text("id") or folder.name,
        source_dir=folder,
        title=f.text("title") or "",
        question=f.markdown("question"),
        conditions=conditions,
        baseline_condition=f.text("baseline_condition"),
        primary_metric=f.text("primary_metric"),
        seeds=seeds,
        extra={k: v for k, v in f.data.items() if k not in _CAMPAIGN_KEYS},
    )
    hib = f.data.get("higher_is_better")
    if isinstance(hib, bool):
        campaign.higher_is_better = hib
    window = f.integer("final_window")
    if window is not None and window > 0:
        campaign.final_window = window
    alpha = f.data.get("alpha")
    if isinstance(alpha, int | float) and not isinstance(alpha, bool) and 0 < alpha < 1:
        campaign.alpha = float(alpha)
    elif alpha is not None:
        diags.warning(path, "'alpha' should be a number between 0 and 1; 0.05 used", f.line("alpha"))
    for key in ("evidence", "litmus"):
        values = {
            k: float(v) for k, v in f.mapping(key).items() if isinstance(v, int | float) and not isinstance(v, bool)
        }
        setattr(campaign, key, values)
    names = {c.name for c in conditions}
    if campaign.baseline_condition and names and campaign.baseline_condition not in names:
        diags.warning(
            path,
            f"baseline_condition '{campaign.baseline_condition}' is not one of the conditions",
            f.line("baseline_condition"),
        )
    return campaign


_CAMPAIGN_KEYS = {
    "id",
    "title",
    "question",
    "conditions",
    "baseline_condition",
    "primary_metric",
    "higher_is_better",
    "seeds",
    "final_window",
    "alpha",
    "evidence",
    "litmus",
}
