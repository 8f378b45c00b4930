"""A campaign's audit against the database: frames in, verdicts and reports out.

The one path from the rows to the report: ``frames`` reads the campaign, ``exclusions`` says
who is out of the audit, ``rule`` gives the verdicts, ``decisions`` puts the managers'
adjudications over them, and ``assembly`` builds the report (with the model annotators of
``model_answers`` and the planned sample's estimate of ``sampling`` beside it). It also writes
back the one thing the audit changes: an extra annotator for a split vote.
"""

from typing import Any

import pandas as pd
from django.db import transaction
from django.db.models import F

from prb_annotate.audit import assembly, decisions, model_answers, rule, sampling
from prb_annotate.audit.exclusions import left_out_annotators
from prb_annotate.audit.frames import annotations_frame, items_frame, thresholds_for
from prb_annotate.audit.quality import LEFT_OUT_REASONS
from prb_annotate.audit.rule import PairVerdict
from prb_annotate.models import Campaign, CampaignItem


def campaign_verdicts(campaign: Campaign) -> dict[int, PairVerdict]:
    """The verdict of every regular item's pair, keyed by pair id (unannotated ones too).

    Annotators out of the audit (``exclusions.left_out_annotators``) are left out first; a
    manager's adjudication replaces the annotators' verdict (``decisions``).
    """
    return _verdicts(campaign, items_frame(campaign, lengths=False))


def _verdicts(campaign: Campaign, items: pd.DataFrame) -> dict[int, PairVerdict]:
    frame = annotations_frame(campaign, items)
    thresholds = thresholds_for(campaign)
    excluded = left_out_annotators(campaign)
    by_pair = rule.pair_verdicts(frame, thresholds, items=items, excluded_annotators=excluded)
    return decisions.with_adjudications(campaign, by_pair)


def campaign_audit(
    campaign: Campaign,
    *,
    resamples: int = 1000,
    seed: int | None = None,
    confidence: float = 0.95,
    dawid_skene: bool = True,
) -> dict[str, Any]:
    """The full audit report, JSON-ready (see ``assembly.audit_report``).

    ``seed`` defaults to the campaign's seed, so the page, the CLI and the export manifest show
    the same intervals for the same data.
    """
    items = items_frame(campaign)
    frame = annotations_frame(campaign, items)
    left_out = left_out_annotators(campaign)
    report = assembly.audit_report(
        frame,
        items,
        thresholds_for(campaign),
        resamples=resamples,
        seed=campaign.seed if seed is None else seed,
        confidence=confidence,
        dawid_skene=dawid_skene,
        adjudications=decisions.current_adjudications(campaign),
        excluded_annotators=left_out,
    )
    report["left_out"] = [
        {"annotator": name, "reason": reason, "reason_label": LEFT_OUT_REASONS[reason]}
        for name, reason in left_out.items()
    ]
    report["settings"]["thresholds"]["position_bias_max_p"] = campaign.position_bias_max_p
    report["campaign"] = {
        "id": campaign.pk,
        "name": campaign.name,
        "dataset": campaign.dataset.name,
        "annotations_per_pair": campaign.annotations_per_pair,
    }
    _add_model_annotators(campaign, report, frame, items)
    if campaign.sample_plan is not None:
        # A planned sample speaks for the whole dataset: its estimate comes alongside.
        report["sample_estimate"] = sampling.audit_estimate(
            campaign.sample_plan, report["validity"]["per_category"]
        )
        if "model_annotators" in report:
            # The model on every pair, the humans on the sample: prediction-powered inference.
            report["ppi"] = assembly.jsonable(
                model_answers.ppi_for_campaign(campaign, report["verdicts"])
            )
    return report


def _add_model_annotators(
    campaign: Campaign, report: dict[str, Any], frame: pd.DataFrame, items: pd.DataFrame
) -> None:
    """Model annotators beside the humans, compared with the annotations the verdicts rest on;
    their answers are separate rows that none of the human statistics above ever read."""
    if not campaign.evaluation_runs.filter(mode=model_answers.ANNOTATOR_MODE).exists():
        return
    humans = rule.counted_annotations(frame, items, report["excluded_annotators"])
    found = model_answers.comparisons(campaign, humans, campaign.majority_threshold)
    report["model_annotators"] = assembly.jsonable(found)


def request_extra_annotations(campaign: Campaign) -> int:
    """Ask for one more annotator on every pair whose vote is split; returns how many.

    Idempotent per state: a split vote is only seen once a pair has all the annotations it
    requires, and raising ``extra_annotations`` makes it require one more, so the pair reads
    "too few annotations" until the new annotator has answered and a second call does nothing.
    Each raise is a conditional UPDATE on the value we read, so two managers clicking at once
    raise a pair once, not twice. An external campaign has no queue to send the pair to, so its
    split votes stay split.
    """
    if campaign.external:
        return 0
    items = items_frame(campaign, lengths=False)
    by_pair = _verdicts(campaign, items)
    # The extra count each split verdict was computed with: only that state gets raised.
    seen = {
        int(row.item_id): int(row.required) - campaign.annotations_per_pair
        for row in items.itertuples(index=False)
        if row.item_kind == CampaignItem.Kind.REGULAR
        and rule.UNDECIDED_SPLIT_VOTE in by_pair[int(row.pair_id)].reasons
    }
    raised = 0
    with transaction.atomic():
        for item_id, extra in seen.items():
            raised += CampaignItem.objects.filter(pk=item_id, extra_annotations=extra).update(
                extra_annotations=F("extra_annotations") + 1
            )
    return raised
