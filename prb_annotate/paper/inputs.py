"""What a campaign's paper shows, gathered into one JSON-ready ``numbers`` dict.

``audit``: the audit report as the page and ``manage.py audit --format json`` give it;
``leaderboard``: the reward models' leaderboard (``campaigns/leaderboard.py``, the same as the
evaluations page), or None without runs; ``correlations``: what ``python -m evaluation
correlate --out`` wrote, when given; ``study``: the study's design as its rows record it
(``study.py``); ``human``: the human-evaluation tables' figures the audit does not hold
(``human.py``). The renderers read nothing else, and the zip carries the dict as ``numbers.json``.
"""

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from django.utils.text import slugify

from prb_annotate.audit.assembly import jsonable
from prb_annotate.campaigns.leaderboard import campaign_leaderboard, reward_runs
from prb_annotate.exports.pseudonyms import campaign_pseudonyms, pseudonymised
from prb_annotate.models import Campaign
from prb_annotate.paper import bundle, preview
from prb_annotate.paper.human import human_figures
from prb_annotate.paper.study import study_figures


class CorrelationsError(ValueError):
    """A correlations file that is not what ``correlate --out`` writes; names file and field."""


def paper_numbers(
    campaign: Campaign,
    audit: Mapping[str, Any],
    correlations: Mapping[str, Any] | None = None,
    run_ids: Sequence[int] | None = None,
) -> dict[str, Any]:
    """``run_ids``: the runs the leaderboard ranks (``LeaderboardError`` names one that is not
    the campaign's); by default the evaluations page's (``campaigns/leaderboard.py``)."""
    # Runs asked for are checked even where the campaign has none: never silently left out.
    ranked = bool(run_ids) or bool(reward_runs(campaign))
    board = campaign_leaderboard(campaign, run_ids=run_ids) if ranked else None
    return jsonable(
        {
            # Shared with the paper: annotators and managers as the export's pseudonyms, never
            # usernames (a study participant's holds their Prolific id).
            "audit": pseudonymised(audit, campaign_pseudonyms(campaign)),
            "leaderboard": None if board is None else board.as_dict(),
            "correlations": correlations,
            "study": study_figures(campaign, audit),
            "human": human_figures(campaign, audit),
        }
    )


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


def paper_zip(
    campaign: Campaign, audit: Mapping[str, Any], run_ids: Sequence[int] | None = None
) -> tuple[bytes, str]:
    """The "for a paper" download: every file of both formats in a zip, and its file name."""
    name = f"{slugify(campaign.name) or 'campaign'}-{campaign.pk}-paper"
    files = bundle.paper_files(paper_numbers(campaign, audit, run_ids=run_ids))
    pdf = preview.preview_pdf(files)  # only where the server has pdflatex
    if pdf is not None:
        files = {**files, preview.PREVIEW: pdf}
    return bundle.zip_bytes(files, name), f"{name}.zip"
