"""The measured profile drawn on the fusion plan (``dnnf-run OUT --profile --profile-svg FILE``).

A profiled artifact keeps its plan (``fusion.plan_graph.FUSION_PLAN``), whose box
``i`` is launch ``i``: each box gets the numbers of that launch's row of the table
(median time, share of the run, roofline fraction), is filled on a heat scale by its
share of the run (white: none, red: the largest share), and shows the row in full as
its tooltip. A box whose ops are not its launch's means that plan and library differ:
an error, never a picture of the wrong numbers.
"""

from __future__ import annotations

import json

from ..fusion.picture import BoxNote, plan_svg
from ..fusion.plan_graph import FUSION_PLAN, PlanGraph
from ..roofline import limit_name
from .report import KernelProfile, ProfileError, launches_of

COLD, HOT = (255, 255, 255), (222, 45, 38)  # the heat scale's ends: no share of the run, the largest


def heat(fraction: float) -> str:
    """The fill of a box with ``fraction`` (0..1) of the largest share of the run."""
    fraction = min(max(fraction, 0.0), 1.0)
    return "#" + "".join(f"{round(c + (h - c) * fraction):02x}" for c, h in zip(COLD, HOT))


def plan_of(artifact) -> PlanGraph:
    """The fusion plan a profiled ``artifact`` keeps, checked against its launches."""
    launches = launches_of(artifact)
    try:
        graph = PlanGraph.from_json(json.loads((artifact.path / FUSION_PLAN).read_text()))
    except OSError:
        raise ProfileError(f"{artifact.path} has no fusion plan ({FUSION_PLAN}): compile it again with "
                           "dnnf-compile --profile-kernels") from None
    if len(graph.boxes) != len(launches):
        raise ProfileError(f"{artifact.path}: the fusion plan has {len(graph.boxes)} kernels, the library "
                           f"{len(launches)} launches")
    for index, launch in enumerate(launches):
        if "ops" in launch and graph.box_ops(index) != launch["ops"]:
            raise ProfileError(f"{artifact.path}: launch {index} ({launch['kernel']}) runs {launch['ops']}, "
                               f"the plan's kernel #{index} {graph.box_ops(index)}")
    return graph


def box_notes(rows: list) -> dict:
    """Launch -> ``BoxNote`` of the table's ``rows`` (``KernelProfile.rows``)."""
    largest = max((row.share for row in rows), default=0.0) or 1.0
    notes = {}
    for row in rows:
        limit = limit_name(row.bound, short=True)
        notes[row.launch] = BoxNote(
            (f"{1e3 * row.seconds:.3f} ms, {100 * row.share:.1f}%", f"{100 * row.roofline_fraction:.0f}% of {limit}"),
            heat(row.share / largest),
            f"{row.kernel}: {row.ops} [{row.shapes}] {row.gflops:.2f} GFLOP/s {row.gbs:.2f} GB/s",
        )
    return notes


def profile_svg(graph: PlanGraph, model: str, profile: KernelProfile, roofline) -> bytes:
    """The SVG of the plan ``graph`` (``plan_of``) of ``model`` annotated with
    ``profile``'s rows against ``roofline``."""
    rows = profile.rows(roofline)
    kernels = sum(row.seconds for row in rows)
    title = (f"{model}: {len(rows)} kernels {1e3 * kernels:.3f} ms of "
             f"{1e3 * profile.total_seconds():.3f} ms (medians over {len(profile.runs)} runs)\n"
             f"fill: share of the run, white 0% to red {100 * max(row.share for row in rows):.1f}%\n"
             f"roofline {roofline.peak_gflops(profile.threads):.1f} GFLOP/s, "
             f"{roofline.bandwidth_gbs(profile.threads):.1f} GB/s")
    return plan_svg(graph, box_notes(rows), title)


__all__ = ["box_notes", "heat", "plan_of", "profile_svg"]
