"""The study's protocol in the methods paragraph: coverage, recruitment and consent, the
questions and their scale, the A/B order, gold, practice and qualification, and the whole
validation rule. Each sentence is read from the ``numbers`` dict (``study.py`` gathers the
rows' facts); a fact the rows do not hold is not stated.
"""

from collections.abc import Mapping
from typing import Any

from prb_annotate.paper import numbers as fmt

# Krippendorff's lowest acceptable alpha for tentative conclusions (Krippendorff 2004, p. 241).
TENTATIVE_ALPHA = 0.667


def protocol_parts(numbers: Mapping[str, Any]) -> list[str]:
    study = numbers["study"]
    audit = numbers["audit"]
    return [
        _coverage(audit["counts"]["pairs"], study),
        _recruitment(study),
        _questions(audit["settings"]["thresholds"], study["external"]),
        _order(study),
        _checks(audit["counts"]["gold_items"], study["qualification_items"]),
    ]


def _coverage(pairs: int, study: Mapping[str, Any]) -> str:
    total = study["dataset_pairs"]
    if pairs >= total:
        return f"The campaign covers all {total} pairs of the dataset. "
    return f"The campaign covers {pairs} of the dataset's {total} pairs. "


def _recruitment(study: Mapping[str, Any]) -> str:
    if study["external"]:
        return (
            "The answers were collected outside this tool and imported; recruitment, pay and "
            "consent are as the original study reports them. "
        )
    text = "Annotators who joined by the study link were recruited on Prolific. " * bool(
        study["recruited_on_prolific"] and any(pool["pool"] == "study" for pool in study["pools"])
    )
    text += _pay(study.get("pay"))
    consent = study["consent"]
    if consent["asked"]:
        text += (
            f"{consent['given']} annotators accepted the study's consent text before their "
            "first item. "
        )
    else:
        text += "No consent text was shown in the annotation tool. "
    return text


# How the paper words what the pay was for (``setting_fields.CAMPAIGN["pay_per"]``'s codes).
PAY_FOR = {"study": "for the study", "hour": "per hour"}


def _pay(pay: Mapping[str, str] | None) -> str:
    """ "Participants were paid 9.00 GBP per hour.", or nothing when the pay is not set (the
    author adds it: docs/paper.md)."""
    if pay is None:
        return ""
    return f"Participants were paid {pay['amount']} {pay['currency']} {PAY_FOR[pay['per']]}. "


def _questions(thresholds: Mapping[str, Any], external: bool) -> str:
    criteria = ", ".join(str(name) for name in thresholds["quality_criteria"])
    verb = "Each imported answer gives" if external else "For each pair, annotators gave"
    return (
        f"{verb} a rating of each response's general quality, ignoring the user's preferences "
        f"({criteria}; 1 to {fmt.count(thresholds['rating_scale_max'])}), the response that "
        "better fits the user's rubric and profile (or a tie), and what mainly separates the "
        "two (personal preference, general quality, both, or no real difference). "
    )


def _order(study: Mapping[str, Any]) -> str:
    shown = study["chosen_shown"]
    known = shown["A"] + shown["B"]
    text = ""
    if known:
        how = "" if study["external"] else " (the order is counterbalanced per pair)"
        text = (
            f"The dataset's chosen response was shown first in {shown['A']} of {known} "
            f"counted answers{how}. "
        )
    if shown["unknown"]:
        text += f"{shown['unknown']} imported answers do not record the order. "
    return text


def _checks(gold: int, qualification: Mapping[str, int]) -> str:
    text = ""
    if gold:
        text += f"{gold} gold pairs with known answers were mixed into the items. "
    practice, qualifying = qualification.get("practice", 0), qualification.get("qualification", 0)
    if practice or qualifying:
        text += (
            f"Before their first item, annotators answered {practice} practice and "
            f"{qualifying} qualification pairs, which no statistic counts. "
        )
    return text


def rule_sentence(thresholds: Mapping[str, Any]) -> str:
    """The whole validation rule, from the campaign's thresholds."""
    majority = float(thresholds["majority_threshold"])
    most = "a majority" if majority == 0.5 else f"more than {fmt.percent(majority)}%"
    return (
        f"A pair is validated when it has its {fmt.count(thresholds['annotations_per_pair'])} "
        "required answers from annotators not left out of the audit, both responses reach a "
        f"median rating of {fmt.setting(thresholds['quality_threshold'])} on every criterion, "
        f"{most} of the answers name personal preference as the main difference, and {most} "
        "prefer the dataset's chosen response; a split vote leaves a pair undecided. "
    )


def low_agreement(fit: Mapping[str, Any], alpha_key: str, tentative: float) -> str:
    """A warning when agreement on which response fits the user is below ``tentative``
    (:data:`TENTATIVE_ALPHA`, carried in ``numbers.json``)."""
    value = next((c["value"] for c in fit["coefficients"] if c["key"] == alpha_key), None)
    if value is None or value >= tentative:
        return ""
    return (
        f"Alpha on this key question is below {fmt.real(tentative)}, the lowest value "
        "Krippendorff accepts even for tentative conclusions, so the verdicts that rest on it "
        "should be read with care. "
    )
