"""What the paper says about the study itself, read from the campaign's rows: who answered and
how they came, consent, how the answers' A/B order fell, practice and qualification, and how
much of the dataset the campaign covered.

Only facts the rows hold: the pay is the campaign's pay settings, stated only when all three
are set (``campaigns/editing.py`` keeps them together).
"""

import statistics
from collections import Counter
from collections.abc import Mapping
from typing import Any

from prb_annotate.models import (
    Assignment,
    Campaign,
    CampaignItem,
    ExternalAnnotator,
    Membership,
    QualificationItem,
)
from prb_annotate.paper.protocol import TENTATIVE_ALPHA

# Where an audited annotator came from, in the order the paper lists them.
POOLS = {
    "study": "joined by the study link",
    "accounts": "invited or added by a manager",
    "imported": "whose answers were imported from files collected elsewhere",
}


def study_figures(campaign: Campaign, audit: Mapping[str, Any]) -> dict[str, Any]:
    """The audit's annotators by how they came, the median over annotators of their median
    time per answer, and the study's design as its rows record it."""
    names = {row["annotator"] for row in audit["annotators"]}
    counted = names - set(audit.get("excluded_annotators", []))
    times = [row["median_time_ms"] for row in audit["annotators"] if row["median_time_ms"]]
    return {
        "pools": _pools(campaign, names),
        "median_time_ms": statistics.median(times) if times else None,
        "dataset_pairs": campaign.dataset.pairs.count(),
        "external": campaign.external,
        "recruited_on_prolific": bool(campaign.prolific_study_id),
        "consent": _consent(campaign, names),
        "chosen_shown": _positions(campaign, counted),
        "qualification_items": _qualification_items(campaign),
        "tentative_alpha": TENTATIVE_ALPHA,
        "pay": _pay(campaign),
    }


def _pay(campaign: Campaign) -> dict[str, str] | None:
    """The pay as the campaign's settings hold it (amount to the cent, ISO currency, "study"
    or "hour"); None when it is not set."""
    if campaign.pay_amount is None or not campaign.pay_currency or not campaign.pay_per:
        return None
    return {
        "amount": f"{campaign.pay_amount:.2f}",
        "currency": campaign.pay_currency,
        "per": campaign.pay_per,
    }


def _pools(campaign: Campaign, names: set[str]) -> list[dict[str, Any]]:
    imported = set(
        ExternalAnnotator.objects.filter(campaign=campaign, user__username__in=names).values_list(
            "user__username", flat=True
        )
    )
    by_study_link = (
        set(
            Membership.objects.filter(campaign=campaign, user__username__in=names)
            .exclude(participant_id="")
            .values_list("user__username", flat=True)
        )
        - imported
    )
    counts = {
        "study": len(by_study_link),
        "imported": len(imported),
        "accounts": len(names - imported - by_study_link),
    }
    return [
        {"pool": pool, "label": label, "annotators": counts[pool]}
        for pool, label in POOLS.items()
        if counts[pool]
    ]


def _consent(campaign: Campaign, names: set[str]) -> dict[str, Any]:
    """Whether a consent text was shown, and how many audited annotators accepted it."""
    given = Membership.objects.filter(
        campaign=campaign, user__username__in=names, consent_given_at__isnull=False
    ).count()
    return {"asked": bool(campaign.consent_text.strip()), "given": given}


def _positions(campaign: Campaign, counted: set[str]) -> dict[str, int]:
    """On which side the chosen answer was shown, over the counted answers to regular pairs
    (``unknown``: an imported answer whose file did not say)."""
    sides = Counter(
        Assignment.objects.filter(
            campaign=campaign,
            status=Assignment.Status.SUBMITTED,
            item__kind=CampaignItem.Kind.REGULAR,
            annotator__username__in=counted,
        ).values_list("chosen_position", flat=True)
    )
    return {"A": sides["A"], "B": sides["B"], "unknown": sides[""]}


def _qualification_items(campaign: Campaign) -> dict[str, int]:
    phases = Counter(
        QualificationItem.objects.filter(campaign=campaign).values_list("phase", flat=True)
    )
    return {phase: phases[phase] for phase in QualificationItem.Phase.values}
