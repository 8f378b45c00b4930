"""Changing a campaign's settings after creation, with the rules that keep it sound.

The settings page and ``PATCH /api/campaigns/<id>/`` both check ``change_errors`` and call
``after_changes``:

- k (annotations per pair) takes any value in a draft; once the campaign has started it only
  goes up (lowering it would leave pairs with more answers than their target, and verdicts
  already given on fewer answers than before); on a closed campaign it is fixed.
- The question set (criteria, rating scale) is fixed once annotators have answered with it.
- A verdict threshold (quality, majority) may change at any time: the audit is recomputed from
  the new value the next time it is read (its change stamp covers the thresholds), or, for a
  campaign whose audit a worker computes, when that computation is started.
- A quality-control threshold (minimum gold accuracy, position-bias p-value) may change at any
  time; who is left out of the audit follows, and with it the replacement slots (raised for
  answers that leave, withdrawn where nobody filled them for answers that come back).
- The pay (amount, currency, what it is for) is stated in the paper all together or not at
  all, so the three are set together or left empty together.
- The status changes only through its own buttons (``lifecycle.set_status``: start, pause,
  resume, close; closing is final) and ``lifecycle.reopen_for_replacements``.
"""

from collections.abc import Collection, Mapping
from typing import Any

from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from prb_annotate.audit.exclusions import sync_replacement_slots
from prb_annotate.campaigns.setting_fields import CAMPAIGN, PAY_SETTINGS
from prb_annotate.models import Campaign

VERDICT_THRESHOLDS = frozenset({"quality_threshold", "majority_threshold"})
LEFT_OUT_THRESHOLDS = frozenset({"min_gold_accuracy", "position_bias_max_p"})
# What the settings page says of each rule, in the order it lists them.
RULES = (
    _(
        "k (annotations per pair) may take any value in a draft; once the campaign has started "
        "it only goes up, and a closed campaign keeps it."
    ),
    _(
        "After a verdict threshold change, the audit is computed again with the new value when "
        "it is next opened, or, for a campaign whose audit a worker computes (a large one), "
        "when its computation is started on the audit page."
    ),
    _(
        "A quality-control threshold change recomputes who is left out of the audit; pairs whose "
        "answers leave get replacement slots, and slots nobody filled are withdrawn when answers "
        "come back."
    ),
    _("The status changes with the campaign's buttons: start, pause, resume, and close (final)."),
)


def change_errors(campaign: Campaign, changes: Mapping[str, Any]) -> dict[str, str]:
    """field -> why ``changes`` may not be applied to ``campaign`` as stored now."""
    errors = dict(campaign.question_set_errors(dict(changes)))
    k = changes.get("annotations_per_pair")
    if k is not None and k != campaign.annotations_per_pair:
        if campaign.status == Campaign.Status.CLOSED:
            errors["annotations_per_pair"] = gettext("A closed campaign keeps its k.")
        elif campaign.status != Campaign.Status.DRAFT and k < campaign.annotations_per_pair:
            errors["annotations_per_pair"] = gettext(
                "Once a campaign has started, k only goes up (it is %(k)d)."
            ) % {"k": campaign.annotations_per_pair}
    scale = changes.get("rating_scale_max", campaign.rating_scale_max)
    threshold = changes.get("quality_threshold", campaign.quality_threshold)
    if threshold is not None and threshold > scale:
        errors["quality_threshold"] = gettext(
            "Must not exceed the rating scale maximum (%(scale)d)."
        ) % {"scale": scale}
    errors.update(
        pay_errors({name: changes.get(name, getattr(campaign, name)) for name in PAY_SETTINGS})
    )
    return errors


def pay_errors(pay: Mapping[str, Any]) -> dict[str, str]:
    """field -> why the pay settings ``pay`` (every one of ``PAY_SETTINGS``) do not go
    together: all three or none."""
    given = [name for name in PAY_SETTINGS if pay[name] not in (None, "")]
    if not given or len(given) == len(PAY_SETTINGS):
        return {}
    named = ", ".join(str(CAMPAIGN[name].label).lower() for name in given)
    needed = gettext("Needed with the %(named)s: the paper states the pay only in full.")
    return {name: needed % {"named": named} for name in PAY_SETTINGS if name not in given}


def after_changes(campaign: Campaign, changed: Collection[str]) -> list[str]:
    """What follows from the stored changes of the ``changed`` fields, done; returns a sentence
    for the manager about each consequence."""
    notes = []
    if VERDICT_THRESHOLDS & set(changed):
        notes.append(
            gettext(
                "The audit is computed again with the new thresholds when it is next opened, "
                "or, where a worker computes it, when its computation is started on the audit "
                "page."
            )
        )
    if LEFT_OUT_THRESHOLDS & set(changed):
        raised, lowered = sync_replacement_slots(campaign)
        if raised:
            notes.append(
                ngettext(
                    "Replacement slots asked for on %(count)d pair.",
                    "Replacement slots asked for on %(count)d pairs.",
                    raised,
                )
                % {"count": raised}
            )
        if lowered:
            notes.append(
                ngettext(
                    "Unfilled replacement slots withdrawn from %(count)d pair.",
                    "Unfilled replacement slots withdrawn from %(count)d pairs.",
                    lowered,
                )
                % {"count": lowered}
            )
    if "annotations_per_pair" in changed:
        k = campaign.annotations_per_pair
        notes.append(
            ngettext(
                "Every pair now asks for %(k)d annotation.",
                "Every pair now asks for %(k)d annotations.",
                k,
            )
            % {"k": k}
        )
    return notes
