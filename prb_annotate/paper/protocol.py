"""The study's protocol in the methods paragraph: coverage, recruitment and consent, the
questions and their scale, the A/B order, gold, practice and qualification, and the whole
validation rule. Each sentence is read from the ``numbers`` dict (``study.py`` gathers the
rows' facts); a fact the rows do not hold is not stated.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from prb_annotate.audit import rule
from prb_annotate.audit.report import ModelCoverage, model_coverage
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


@dataclass(frozen=True)
class RuleCondition:
    """One condition of the validation rule in the paper's words, with the reason codes
    (``rule.REASONS``) a pair that does not meet it gets."""

    reasons: tuple[str, ...]
    words: str


def rule_conditions(thresholds: Mapping[str, Any]) -> list[RuleCondition]:
    """The conditions of ``audit/rule.py``'s docstring, 1 to 5 (k plus the split votes' extra
    annotators, the medians, the three majority votes, the unusable flag among them), from
    the campaign's thresholds."""
    most = _majority(float(thresholds["majority_threshold"]))
    return [
        RuleCondition(
            (rule.TOO_FEW_ANNOTATIONS,),
            "it has the answers it requires from annotators not left out of the audit "
            f"(k = {fmt.count(thresholds['annotations_per_pair'])}, plus one for each time a "
            "split vote asked for another annotator)",
        ),
        RuleCondition(
            (rule.LOW_QUALITY_CHOSEN, rule.LOW_QUALITY_REJECTED, rule.MISSING_RATING),
            "both responses reach a median rating of "
            f"{fmt.setting(thresholds['quality_threshold'])} on every criterion",
        ),
        RuleCondition(
            (rule.DIFFERENTIATOR_NOT_PREFERENCE, rule.DIFFERENTIATOR_BOTH),
            f"{most} of the answers name personal preference as the main difference",
        ),
        RuleCondition(
            (rule.LABEL_DISAGREES, rule.LABEL_TIE), f"{most} prefer the dataset's chosen response"
        ),
        RuleCondition((rule.FLAGGED,), f"{most} do not flag it as unusable"),
    ]


# The reasons the sentence's last clause states: a vote no side of which has its majority.
SPLIT_REASONS = (rule.UNDECIDED_SPLIT_VOTE,)


def rule_sentence(thresholds: Mapping[str, Any]) -> str:
    """The whole validation rule (every condition of :func:`rule_conditions`, then what
    excludes a pair and what leaves it undecided), from the campaign's thresholds."""
    most = _majority(float(thresholds["majority_threshold"]))
    *first, last = [condition.words for condition in rule_conditions(thresholds)]
    return (
        f"A pair is validated when {', '.join(first)}, and {last}. It is excluded when a median "
        f"falls short or {most} votes against one of these; a split vote on the main "
        f"difference, the preferred response or the unusable flag (neither side with {most}) "
        "leaves it undecided, as do answers or ratings still missing (unless the pair is "
        "already certain to be excluded). "
    )


def _majority(threshold: float) -> str:
    """How the paper names a share above ``majority_threshold`` (never below 0.5)."""
    return "a majority" if threshold == 0.5 else f"more than {fmt.percent(threshold)}%"


def model_reach(audit: Mapping[str, Any]) -> str:
    """The pairs the prediction-powered estimate's model annotator judged, in counts
    (``report.model_coverage``): "all 300 pairs of the dataset", "40 of the dataset's 300
    pairs, no more than the humans' sample of 40 holds"..."""
    coverage = _coverage_of(audit)
    population = fmt.count(coverage.population)
    if coverage.reach == "all":
        return f"all {population} pairs of the dataset"
    if coverage.reach == "decided":
        decided = fmt.count(coverage.decided)
        return f"only the {decided} pairs the humans decided, of the dataset's {population}"
    found = f"{fmt.count(coverage.model_pairs)} of the dataset's {population} pairs"
    if coverage.reach == "sample":
        found += f", no more than the humans' sample of {fmt.count(coverage.sampled)} holds"
    return found


def model_gain(audit: Mapping[str, Any]) -> str:
    """What the model's verdicts add over the humans' sample, where its pairs leave it
    nothing (or next to nothing) to add; "" where it judged pairs beyond the sample."""
    coverage = _coverage_of(audit)
    if coverage.reach == "decided":
        return (
            "With no model verdict beyond the pairs the humans decided, the prediction-powered "
            "estimate is the humans-only one: it adds nothing over the sample. "
        )
    if coverage.reach == "sample":
        return (
            f"Beyond the {fmt.count(coverage.decided)} pairs the humans decided, the model's "
            "verdicts cover no more pairs than the humans left undecided, so the "
            "prediction-powered estimate adds next to nothing over the humans-only one. "
        )
    return ""


def _coverage_of(audit: Mapping[str, Any]) -> ModelCoverage:
    coverage = model_coverage(audit)
    if coverage is None:
        raise ValueError("the audit has no prediction-powered estimate to describe")
    return coverage


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
