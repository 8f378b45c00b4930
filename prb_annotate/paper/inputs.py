"""What a campaign's paper shows, gathered into one JSON-ready ``numbers`` dict.

``audit``: the audit report as the page and ``manage.py audit --format json`` give it;
``leaderboard``: the reward models' leaderboard (``campaigns/leaderboard.py``, the same as the
evaluations page), or None without runs; ``correlations``: what ``python -m evaluation
correlate --out`` wrote, when given; ``study``: the annotator pools and the median time. The
renderers read nothing else, and the zip carries the dict as ``numbers.json``.
"""

import json
import statistics
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from django.utils.text import slugify

from prb_annotate.audit.assembly import jsonable
from prb_annotate.campaigns.leaderboard import campaign_leaderboard, reward_runs
from prb_annotate.models import Campaign, Membership
from prb_annotate.paper import bundle

POOLS = {
    "study": "joined by the study link",
    "accounts": "invited or added by a manager",
}


class CorrelationsError(ValueError):
    """A correlations file that is not what ``correlate --out`` writes; names file and field."""


def paper_numbers(
    campaign: Campaign, audit: Mapping[str, Any], correlations: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    board = campaign_leaderboard(campaign) if reward_runs(campaign) else None
    return jsonable(
        {
            "audit": audit,
            "leaderboard": None if board is None else board.as_dict(),
            "correlations": correlations,
            "study": study_figures(campaign, audit),
        }
    )


def study_figures(campaign: Campaign, audit: Mapping[str, Any]) -> dict[str, Any]:
    """The audit's annotators by how they came (the study link, or an account made for them),
    and the median over annotators of their median time per annotation."""
    names = {row["annotator"] for row in audit["annotators"]}
    by_study_link = set(
        Membership.objects.filter(campaign=campaign, user__username__in=names)
        .exclude(participant_id="")
        .values_list("user__username", flat=True)
    )
    counts = {"study": len(names & by_study_link), "accounts": len(names - by_study_link)}
    times = [row["median_time_ms"] for row in audit["annotators"] if row["median_time_ms"]]
    return {
        "pools": [
            {"pool": pool, "label": label, "annotators": counts[pool]}
            for pool, label in POOLS.items()
            if counts[pool]
        ],
        "median_time_ms": statistics.median(times) if times else None,
    }


def read_correlations(path: Path) -> dict[str, Any]:
    """The JSON ``python -m evaluation correlate --out`` writes, checked enough to print."""
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise CorrelationsError(f"{path}: cannot read it as JSON ({error})") from error
    if not isinstance(found, dict) or not found:
        raise CorrelationsError(f"{path}: expected an object with one entry per downstream column")
    for column, entry in found.items():
        rows = entry.get("correlations") if isinstance(entry, dict) else None
        if not isinstance(rows, list):
            raise CorrelationsError(f"{path}: {column!r}: field 'correlations' is missing")
        for index, row in enumerate(rows):
            missing = [
                key
                for key in ("method", "n", "coefficient", "p_value", "ci_low", "ci_high")
                if not isinstance(row, dict) or key not in row
            ]
            if missing:
                raise CorrelationsError(
                    f"{path}: {column!r} row {index + 1}: field {missing[0]!r} is missing"
                )
    return found


def paper_zip(campaign: Campaign, audit: Mapping[str, Any]) -> tuple[bytes, str]:
    """The "for a paper" download: every file of both formats in a zip, and its file name."""
    name = f"{slugify(campaign.name) or 'campaign'}-{campaign.pk}-paper"
    files = bundle.paper_files(paper_numbers(campaign, audit))
    return bundle.zip_bytes(files, name), f"{name}.zip"
