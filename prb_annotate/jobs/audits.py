"""The audit of a large campaign, computed by a worker instead of inside the audit page's request.

A campaign with more pairs than ``PRB_BACKGROUND_AUDIT_PAIRS`` has its audit recomputed as a job:
the worker reads the answers, audits them and writes the report (``campaign_audit_cached``'s
path, as the page and ``manage.py audit`` take it) with the change stamp read before the answers,
as ``audit.cache`` keeps it. The audit page then shows the newest finished job's report, kept
in memory like any other, while its stamp is the campaign's: never a stale one. A smaller
campaign's page computes its audit in the request, as before."""

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db.models import Q

from prb_annotate.audit.cache import Stamp, cached, campaign_audit_cached, change_stamp
from prb_annotate.audit.campaign_audit import CampaignAudit
from prb_annotate.formats.strictjson import dumps
from prb_annotate.jobs.progress import campaign_of, log, step
from prb_annotate.models import Campaign, Job

AUDIT_DEFAULTS: dict[str, Any] = {"resamples": 1000}
# Beside the result file: the stamp and the report for the page to read back (strict JSON, as
# the download: an undefined figure is null, which the page shows as it shows a missing one).
KEPT_REPORT = "report-kept.json"


def in_background(campaign: Campaign) -> bool:
    """Whether the campaign is large enough for its audit page to recompute in a job."""
    return bool(campaign.items.count() > settings.PRB_BACKGROUND_AUDIT_PAIRS)


def check_audit_options(options: dict[str, Any]) -> None:
    unknown = set(options) - set(AUDIT_DEFAULTS)
    if unknown:
        raise ValueError(f"Unknown audit option(s): {', '.join(sorted(unknown))}.")
    resamples = options.get("resamples", AUDIT_DEFAULTS["resamples"])
    if (
        isinstance(resamples, bool)
        or not isinstance(resamples, int)
        or not 0 <= resamples <= 10_000
    ):
        raise ValueError(f"resamples must be a whole number from 0 to 10000, not {resamples!r}.")


def audit_job(job: Job, folder: Path) -> Path:
    """The campaign's audit report, as ``/audit.json`` gives it, and kept for the page."""
    resamples = int({**AUDIT_DEFAULTS, **job.options}["resamples"])
    campaign = campaign_of(job)
    stamp, report = audited(job, campaign, resamples)
    step(job, 3, 4, "writing the report's files")
    folder.mkdir(parents=True, exist_ok=True)
    kept = {"stamp": stamp_inputs(stamp), "report": report}
    (folder / KEPT_REPORT).write_text(dumps(kept, cls=DjangoJSONEncoder), encoding="utf-8")
    target = folder / f"audit-campaign-{campaign.pk}.json"
    target.write_text(dumps(report, cls=DjangoJSONEncoder) + "\n", encoding="utf-8")
    step(job, 4, 4, f"wrote {target.name}")
    return target


def audited(job: Job, campaign: Campaign, resamples: int) -> tuple[Stamp, dict[str, Any]]:
    """The report with the change stamp read before the answers. A recompute may raise or
    withdraw replacement slots, which moves the stamp, and answers may come in meanwhile: then
    the campaign is audited once more, so the report kept is one the page may show."""
    for _ in range(2):
        stamp = change_stamp(campaign)  # before the answers: a later change moves the stamp
        step(job, 0, 4, "reading the campaign's answers")
        audit = CampaignAudit(campaign)
        audit.answers  # noqa: B018 - read here, so the step's time is the read's
        step(job, 1, 4, f"auditing {len(audit.items)} pairs")
        audit.verdicts  # noqa: B018
        step(job, 2, 4, f"writing the report ({resamples} resamples for each interval)")
        report = campaign_audit_cached(campaign, resamples=resamples, audit=audit)
        if stamp_inputs(change_stamp(campaign)) == stamp_inputs(stamp):
            break
        log(job, "the campaign changed while it was audited (replacement slots, answers)")
    return stamp, report


def stamp_inputs(stamp: Stamp) -> dict[str, Any]:
    """The stamp as JSON gives it back, less what ``Stamp.same_inputs`` leaves out."""
    inputs = {**asdict(stamp), "annotations_anywhere": None}
    return dict(json.loads(dumps(inputs, cls=DjangoJSONEncoder)))


class NoCurrentReport(Exception):
    """No finished audit job holds the campaign's audit as it stands."""


def background_report(campaign: Campaign, resamples: int) -> dict[str, Any] | None:
    """The newest finished audit job's report while it is the campaign's audit as it stands
    (its change stamp unmoved); None when there is none, or it is out of date."""
    asked = Q(options__resamples=resamples)
    if resamples == AUDIT_DEFAULTS["resamples"]:
        asked |= ~Q(options__has_key="resamples")
    newest = (
        campaign.jobs.filter(asked, kind="audit", status=Job.Status.DONE)
        .order_by("-finished_at", "-pk")
        .first()
    )
    if newest is None:
        return None

    def load() -> dict[str, Any]:
        kept = Path(newest.result_file).parent / KEPT_REPORT
        if not kept.is_file():
            raise NoCurrentReport()
        found = json.loads(kept.read_text(encoding="utf-8"))
        if found["stamp"] != stamp_inputs(change_stamp(campaign)):
            raise NoCurrentReport()
        return dict(found["report"])

    try:
        # Keyed by the job: a newer job's report replaces what the page kept.
        return cached(campaign, f"report:{resamples}:{campaign.seed}:job{newest.pk}", load)
    except NoCurrentReport:
        return None
