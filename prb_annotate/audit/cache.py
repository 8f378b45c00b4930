"""The computed audit, kept per campaign until what it rests on changes.

Computing the audit reads every annotation of the campaign and bootstraps every coefficient:
seconds for a large campaign. A manager reloading the page, or the dashboard refreshing
itself, must not pay that each time, so the result is kept in the process's memory (the few
most recently used) with a *change stamp*: a few counts and maxima that move whenever
something the audit reads changes. A kept result is used only while the stamp is the same, so
it is never stale (each web process computes a campaign's audit once, then reuses it):

- annotations: how many rows and the largest id (a submit or a revision adds a row);
- items: how many, and the sums of their extra and replacement slots (split votes, answers
  that left the audit) and the largest id;
- adjudications: how many and the largest id (each decision adds a row);
- annotator exclusions: how many, the largest id, and the latest lift;
- model annotators: how many runs and model answers, and their largest ids (a run and its
  answers are written in one transaction);
- the campaign's thresholds and planned sample (the report's sample estimate), read from its
  row.

Not covered: edits of the pairs' text or of gold items' expected answers made outside the app
(the admin); the audit page's "Recompute" button drops the kept results for those.
"""

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from django.core.cache import cache
from django.db.models import Count, Max, Sum

from prb_annotate.audit.campaign_audit import CampaignAudit
from prb_annotate.audit.exclusions import sync_slots_for
from prb_annotate.audit.model_answers import ANNOTATOR_MODE
from prb_annotate.models import (
    Adjudication,
    Annotation,
    AnnotatorExclusion,
    Campaign,
    CampaignItem,
    EvaluationRun,
)

T = TypeVar("T")

# Campaign fields the audit and quality control read.
STAMPED_FIELDS = (
    "annotations_per_pair",
    "quality_threshold",
    "majority_threshold",
    "quality_criteria",
    "rating_scale_max",
    "min_gold_accuracy",
    "position_bias_max_p",
    "fast_answer_seconds",
    "seed",
    "status",
    "sample_plan",
)
# Long enough to outlive any reload pattern; the stamp, not the timeout, keeps it right.
TIMEOUT_S = 24 * 3600


@dataclass(frozen=True)
class Stamp:
    """What a kept result was computed from (see the module docstring).

    ``annotations_anywhere`` (count and largest id of every annotation, of every campaign) is
    read first because it costs an index lookup: while it has not moved, neither has the
    campaign's own ``annotations``, and the query that counts those (a join over the
    campaign's assignments, the costliest part of the stamp) is skipped.
    """

    campaign: tuple[str, ...]
    annotations_anywhere: tuple[Any, ...]
    annotations: tuple[Any, ...] | None  # None: not read, as annotations_anywhere is unchanged
    items: tuple[Any, ...]
    adjudications: tuple[Any, ...]
    exclusions: tuple[str, ...]
    model_annotators: tuple[Any, ...]

    def same_inputs(self, other: "Stamp") -> bool:
        """Whether both stamps describe the same audit inputs (annotations elsewhere may
        differ)."""
        return replace(self, annotations_anywhere=()) == replace(other, annotations_anywhere=())


def change_stamp(campaign: Campaign, previous: Stamp | None = None) -> Stamp:
    """What the audit rests on, in a few cheap aggregate queries. With the ``previous`` stamp,
    the campaign's own annotations are counted only if annotations moved anywhere."""
    stored = Campaign.objects.filter(pk=campaign.pk).values(*STAMPED_FIELDS).first() or {}
    anywhere = Annotation.objects.aggregate(n=Count("pk"), last=Max("pk"))
    items = CampaignItem.objects.filter(campaign_id=campaign.pk).aggregate(
        n=Count("pk"),
        last=Max("pk"),
        extra=Sum("extra_annotations"),
        replacements=Sum("replacement_annotations"),
    )
    adjudications = Adjudication.objects.filter(item__campaign_id=campaign.pk).aggregate(
        n=Count("pk"), last=Max("pk")
    )
    exclusions = AnnotatorExclusion.objects.filter(campaign_id=campaign.pk).aggregate(
        n=Count("pk"), last=Max("pk"), lifted=Max("lifted_at")
    )
    # Runs and their answers in one query (a run with no answers still counts once).
    models = EvaluationRun.objects.filter(campaign_id=campaign.pk, mode=ANNOTATOR_MODE).aggregate(
        runs=Count("pk", distinct=True),
        last_run=Max("pk"),
        answers=Count("model_answers"),
        last_answer=Max("model_answers"),
    )
    stamp = Stamp(
        campaign=tuple(str(stored.get(name)) for name in STAMPED_FIELDS),
        annotations_anywhere=tuple(anywhere.values()),
        annotations=None,
        items=tuple(items.values()),
        adjudications=tuple(adjudications.values()),
        exclusions=tuple(str(value) for value in exclusions.values()),
        model_annotators=tuple(models.values()),
    )
    if previous is not None and previous.annotations_anywhere == stamp.annotations_anywhere:
        return replace(stamp, annotations=previous.annotations)
    own = Annotation.objects.filter(assignment__campaign_id=campaign.pk).aggregate(
        n=Count("pk"), last=Max("pk")
    )
    return replace(stamp, annotations=tuple(own.values()))


# Kept results: key -> (stamp, value), least recently used first. In this process's memory:
# a large campaign's report is tens of megabytes of Python objects, which a shared cache would
# have to unpickle on every read (longer than the rest of the page).
_kept: OrderedDict[str, tuple[Stamp, Any]] = OrderedDict()
_kept_lock = threading.Lock()
KEPT_RESULTS = 8


def _key(campaign: Campaign, variant: str) -> str:
    # The invite token is random per campaign: an id reused by another database (tests, a
    # restored backup) never finds another campaign's result.
    return f"prb-audit:{campaign.pk}:{campaign.invite_token}:{variant}"


def _result_key(campaign: Campaign, variant: str) -> str:
    generation = cache.get(_key(campaign, "generation")) or 0
    return _key(campaign, f"{variant}:{generation}")


def cached(
    campaign: Campaign,
    variant: str,
    compute: Callable[[], T],
) -> T:
    """``compute()``'s result for the campaign, recomputed only when the change stamp moved.

    The result is kept with the stamp read before ``compute`` ran, so with the stamp of the
    state it was computed from or an older one: a compute that writes what the stamp covers
    (replacement slots synced from its own read) costs one recompute more, never a stale
    result. The result is shared between requests: callers must not change it.
    """
    key = _result_key(campaign, variant)
    with _kept_lock:
        entry = _kept.get(key)
    stamp = change_stamp(campaign, entry[0] if entry is not None else None)
    if entry is not None and entry[0].same_inputs(stamp):
        with _kept_lock:
            # With the new stamp: the next read skips the campaign's count again.
            _kept[key] = (stamp, entry[1])
            _kept.move_to_end(key)
        return entry[1]
    value = compute()
    with _kept_lock:
        _kept[key] = (stamp, value)
        _kept.move_to_end(key)
        while len(_kept) > KEPT_RESULTS:
            _kept.popitem(last=False)
    return value


def forget_audits(campaign: Campaign) -> None:
    """Drop every kept result of the campaign: the next read recomputes.

    The results' keys carry a generation number, kept in Django's cache (``CACHES``; shared
    between processes when the cache is); moving it on orphans them all at once, whatever
    resamples and seeds they were kept for.
    """
    generation_key = _key(campaign, "generation")
    cache.set(generation_key, (cache.get(generation_key) or 0) + 1, TIMEOUT_S)


def campaign_audit_cached(
    campaign: Campaign,
    *,
    resamples: int = 1000,
    seed: int | None = None,
    audit: CampaignAudit | None = None,
) -> dict[str, Any]:
    """``CampaignAudit.report``, kept until the change stamp moves. A recompute first asks
    for replacement slots (and withdraws those no longer needed), so that the pairs it
    reports as waiting can be annotated; the slots follow who is left out as the report's own
    read of the answers has it (``audit``, when the caller has one, else a fresh one).

    The report is kept with the stamp read before the answers: slots the recompute raised or
    withdrew move the stamp, and cost one recompute more, never a stale report.
    """
    seed = campaign.seed if seed is None else seed
    found = audit if audit is not None else CampaignAudit(campaign)

    def compute() -> dict[str, Any]:
        sync_slots_for(campaign, found.left_out)
        return found.report(resamples=resamples, seed=seed)

    return cached(campaign, f"report:{resamples}:{seed}", compute)
