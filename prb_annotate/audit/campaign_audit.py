"""A campaign's audit against the database: frames in, verdicts and reports out.

The one path from the rows to the report: ``frames`` reads the campaign, ``exclusions`` says
who is out of the audit, ``rule`` gives the verdicts, ``decisions`` puts the managers'
adjudications over them, and ``assembly`` builds the report (with the model annotators of
``model_answers`` and the planned sample's estimate of ``sampling`` beside it). It also writes
back the one thing the audit changes: an extra annotator for a split vote.

``CampaignAudit`` is that path as one value, made once per request or command and handed to
every reader (the page and the API, the export with its manifest, the long table, the paper,
the evaluations): each part is read or computed the first time a reader asks for it and kept,
so the campaign's answers are read once however many readers there are.
"""

from functools import cached_property
from typing import Any

import pandas as pd
from django.db import transaction
from django.db.models import F

from prb_annotate.audit import (
    active_sample,
    assembly,
    decisions,
    model_answers,
    rule,
    sampling,
)
from prb_annotate.audit.exclusions import left_out_annotators, left_out_from_frames
from prb_annotate.audit.frames import annotations_frame, items_frame, thresholds_for
from prb_annotate.audit.quality import LEFT_OUT_REASONS
from prb_annotate.audit.questions import Question, questions
from prb_annotate.audit.rule import Adjudicated, PairVerdict, Thresholds
from prb_annotate.models import Campaign, CampaignItem


class CampaignAudit:
    """A campaign's audit, read once: thresholds, frames, who is left out, adjudications,
    verdicts and the report, each read or computed when first asked for.

    ``lengths=False`` reads the items without their answers' lengths (reading every answer's
    text), which only the report's length analysis needs: enough for verdicts, exports and
    the long table, not for ``report``. ``sliced``: for a reader that takes the answers a slice
    at a time and must not hold them all (the export command): who is left out then comes from
    the few reads its reasons need, not from the answers. The value is the state of the
    campaign when its parts were read; a reader that writes (replacement slots, extra
    annotators) makes a new one.
    """

    def __init__(self, campaign: Campaign, *, lengths: bool = True, sliced: bool = False) -> None:
        self.campaign = campaign
        self.lengths = lengths
        self.sliced = sliced
        self.thresholds: Thresholds = thresholds_for(campaign)

    @property
    def questions(self) -> list[Question]:
        """The question set the agreement statistics read, in the audit's order."""
        return questions(self.thresholds)

    @cached_property
    def items(self) -> pd.DataFrame:
        """Every item of the campaign (``frames.items_frame``)."""
        return items_frame(self.campaign, lengths=self.lengths)

    @cached_property
    def answers(self) -> pd.DataFrame:
        """Every current annotation of the campaign (``frames.annotations_frame``): the one
        read of the campaign's answers."""
        return annotations_frame(self.campaign, self.items)

    @cached_property
    def left_out(self) -> dict[str, str]:
        """annotator -> why their answers are out of the audit: from the answers, or, for a
        ``sliced`` audit, from the few reads its reasons need (the same set)."""
        if self.sliced:
            return left_out_annotators(self.campaign)
        return left_out_from_frames(self.campaign, self.answers, self.items)

    @cached_property
    def adjudications(self) -> dict[int, Adjudicated]:
        return decisions.current_adjudications(self.campaign)

    @cached_property
    def verdicts(self) -> dict[int, PairVerdict]:
        """The verdict of every regular item's pair, keyed by pair id (unannotated ones
        too): annotators out of the audit left out first, then a manager's adjudication in
        place of the annotators' verdict."""
        answers, items = self.answers, self.items
        by_pair = rule.pair_verdicts(
            answers, self.thresholds, items=items, excluded_annotators=self.left_out
        )
        return rule.apply_adjudications(by_pair, self.adjudications)

    @cached_property
    def counted(self) -> pd.DataFrame:
        """The answers the verdicts and the agreement rest on (``rule.counted_annotations``)."""
        return rule.counted_annotations(self.answers, self.items, self.left_out)

    def report(
        self,
        *,
        resamples: int = 1000,
        seed: int | None = None,
        confidence: float = 0.95,
        dawid_skene: bool = True,
    ) -> dict[str, Any]:
        """The full audit report, JSON-ready (see ``assembly.audit_report``).

        ``seed`` defaults to the campaign's seed, so the page, the CLI and the export manifest
        show the same intervals for the same data.
        """
        if not self.lengths:
            raise ValueError("The report's length analysis needs an audit read with lengths.")
        campaign = self.campaign
        answers, items, left_out = self.answers, self.items, self.left_out
        report = assembly.audit_report(
            answers,
            items,
            self.thresholds,
            resamples=resamples,
            seed=campaign.seed if seed is None else seed,
            confidence=confidence,
            dawid_skene=dawid_skene,
            adjudications=self.adjudications,
            excluded_annotators=left_out,
        )
        _add_campaign_entries(campaign, report, left_out)
        _add_model_annotators(campaign, report, answers, items)
        if active_sample.is_active(campaign.sample_plan):
            # Drawn where the model was unsure: the estimate weighs each pair by the inverse of
            # its inclusion probability, and is itself the prediction-powered one.
            report["sample_estimate"] = assembly.jsonable(
                model_answers.active_estimate(campaign, report["verdicts"])
            )
        elif campaign.sample_plan is not None:
            # A planned sample speaks for the whole dataset: its estimate comes alongside.
            report["sample_estimate"] = sampling.audit_estimate(
                campaign.sample_plan, report["validity"]["per_category"]
            )
            if "model_annotators" in report:
                # The model on every pair, the humans on the sample: prediction-powered
                # inference.
                report["ppi"] = assembly.jsonable(
                    model_answers.ppi_for_campaign(campaign, report["verdicts"])
                )
        return report


def campaign_verdicts(campaign: Campaign) -> dict[int, PairVerdict]:
    """The verdict of every regular item's pair, keyed by pair id (``CampaignAudit.verdicts``)."""
    return CampaignAudit(campaign, lengths=False).verdicts


def campaign_audit(
    campaign: Campaign,
    *,
    resamples: int = 1000,
    seed: int | None = None,
    confidence: float = 0.95,
    dawid_skene: bool = True,
) -> dict[str, Any]:
    """The full audit report of a fresh ``CampaignAudit`` (see ``CampaignAudit.report``)."""
    return CampaignAudit(campaign).report(
        resamples=resamples, seed=seed, confidence=confidence, dawid_skene=dawid_skene
    )


def _add_campaign_entries(
    campaign: Campaign, report: dict[str, Any], left_out: dict[str, str]
) -> None:
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
    raise a pair once, not twice. An external or closed campaign has no queue to send the pair
    to (a raise would only turn its split vote into "too few annotations"), so its split votes
    stay split.
    """
    if campaign.external or campaign.status == Campaign.Status.CLOSED:
        return 0
    audit = CampaignAudit(campaign, lengths=False)
    items, by_pair = audit.items, audit.verdicts
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
