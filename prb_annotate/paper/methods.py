"""The methods paragraph, with the audit's numbers filled in and the methods it used cited.

A paragraph is a list of parts: plain text, or a :class:`Cite` of some works; ``latex`` and
``markdown`` write the same parts (``\\citep`` against an author-year citation), so the two
texts say the same thing.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prb_annotate.paper import numbers as fmt
from prb_annotate.paper.tables import AGREEMENT_KEYS


@dataclass(frozen=True)
class Cite:
    keys: tuple[str, ...]


Part = str | Cite


def paragraph(numbers: Mapping[str, Any]) -> list[Part]:
    audit = numbers["audit"]
    parts: list[Part] = []
    parts += _study(audit)
    parts += _agreement(audit)
    parts += _verdicts(audit)
    if audit.get("sample_estimate"):
        parts += _sample(audit["sample_estimate"])
    section = audit.get("ppi")
    if section and section.get("covers_sample") and section["overall"]["ppi"]["share"] is not None:
        parts += _ppi(section["overall"])
    parts += _bias(audit)
    board = numbers.get("leaderboard")
    if board and board["models"]:
        parts += _leaderboard(board)
    return parts


def cited(parts: Sequence[Part]) -> list[str]:
    """The works ``parts`` cite, in the order first cited."""
    keys = [key for part in parts if isinstance(part, Cite) for key in part.keys]
    return list(dict.fromkeys(keys))


def _study(audit: Mapping[str, Any]) -> list[Part]:
    counts = audit["counts"]
    categories = len(audit["validity"]["per_category"])
    text = (
        f"We audited {counts['pairs']} preference pairs in {categories} categories; each pair "
        f"was annotated by {audit['campaign']['annotations_per_pair']} annotators, "
        f"{counts['annotators']} annotators in all, who gave {counts['annotations']} "
        f"annotations ({counts['gold_items']} gold items among the pairs they saw). "
    )
    left_out = audit.get("left_out", [])
    if left_out:
        text += (
            f"{_annotators(len(left_out))} left out of the audit "
            f"({'; '.join(sorted({row['reason_label'] for row in left_out}))}), leaving "
            f"{counts['counted_annotations']} annotations counted. "
        )
    return [text]


def _agreement(audit: Mapping[str, Any]) -> list[Part]:
    settings = audit["settings"]
    level = fmt.confidence_level(settings["confidence"])
    parts: list[Part] = [
        "Agreement was measured per question with Krippendorff's alpha ",
        Cite(("krippendorff2011",)),
        " and Gwet's AC1, AC2 with ordinal weights for the quality ratings ",
        Cite(("gwet2008", "gwet2014")),
        f", each with a {level}% percentile bootstrap interval over pairs ",
        Cite(("efron1979",)),
        f" ({settings['resamples']} resamples, seed {settings['seed']}). ",
    ]
    fit = next((q for q in audit["agreement"] if q["question"] == "rubric_fit"), None)
    if fit is not None:
        by_key = {c["key"]: c for c in fit["coefficients"]}
        alpha_key, gwet_key = AGREEMENT_KEYS[fit["kind"]]
        parts.append(
            f"On which answer fits the user better, alpha was {fmt.estimate(by_key[alpha_key])} "
            f"and AC1 {fmt.estimate(by_key[gwet_key])} (n = {fit['units']} pairs). "
        )
    return parts


def _verdicts(audit: Mapping[str, Any]) -> list[Part]:
    thresholds = audit["settings"]["thresholds"]
    overall = audit["validity"]["overall"]
    share = overall["validated_share"]
    return [
        "A pair was validated when both answers reach a median rating of "
        f"{fmt.setting(thresholds['quality_threshold'])} on every criterion, a majority names "
        "personal preference as the main difference, and a majority prefers the dataset's "
        f"chosen answer. {overall['validated']} of the {share['total']} decided pairs were "
        f"validated ({_percent_estimate(share)}, Wilson interval ",
        Cite(("wilson1927",)),
        f"); {overall['excluded']} were excluded and {overall['undecided']} stay undecided. ",
    ]


def _sample(estimate: Mapping[str, Any]) -> list[Part]:
    overall = estimate["overall"]
    return [
        f"The {overall['sampled']} pairs are a stratified sample of the dataset's "
        f"{overall['population']}, each category sized so that its Wilson interval with a "
        "continuity correction under the finite-population correction ",
        Cite(("wilson1927", "cochran1977")),
        " reaches the planned half-width",
        f"; the dataset's validated share is estimated at {_percent_estimate(overall['share'])}. ",
    ]


def _ppi(overall: Mapping[str, Any]) -> list[Part]:
    return [
        f"A model annotator judged all {overall['model_pairs']} pairs and agreed with the "
        f"humans' verdicts on {fmt.percent(overall['agreement'])}% of the "
        f"{overall['sample_pairs']} sampled ones; combining its verdicts with the humans' by "
        "prediction-powered inference with a power-tuned weight ",
        Cite(("angelopoulos2023", "angelopoulos2024")),
        f" estimates the validated share at {_percent_estimate(overall['ppi'])}, an interval "
        f"worth {fmt.count(round(overall['worth']))} human-annotated pairs. ",
    ]


def _bias(audit: Mapping[str, Any]) -> list[Part]:
    position = audit["bias"]["position"]
    length = audit["bias"]["length"]
    return [
        f"Annotators named the answer shown first in "
        f"{fmt.percent(position['share_a']['share'])}% of {position['share_a']['total']} "
        f"non-tie answers (binomial {_p(position['p_value'])}), and picked the "
        f"longer answer in {fmt.percent(length['answers_pick_longer']['share'])}% of "
        f"{length['answers_pick_longer']['total']} ("
        f"{_p(length['answers_pick_longer_p_value'])})."
    ]


def _annotators(count: int) -> str:
    return "1 annotator was" if count == 1 else f"{count} annotators were"


def _percent_estimate(entry: Mapping[str, Any]) -> str:
    """ "78.8% [62.2, 89.3]": the percent sign once, after the point estimate."""
    value = fmt.value_of(entry)
    if value is None:
        return fmt.DASH
    interval = fmt.bounds(entry, fmt.percent)
    text = f"{fmt.percent(value)}%"
    return text if interval == fmt.DASH else f"{text} {interval}"


def _p(value: float | None) -> str:
    """ "p = 0.170", or "p < 0.001"."""
    text = fmt.p_value(value)
    return f"p < {text[1:]}" if text.startswith("<") else f"p = {text}"


def _leaderboard(board: Mapping[str, Any]) -> list[Part]:
    settings = board["settings"]
    return [
        f" We scored {len(board['models'])} reward models on the {board['pairs']} pairs. "
        "Accuracies have Wilson intervals ",
        Cite(("wilson1927",)),
        "; each model is compared with the best by the exact McNemar test ",
        Cite(("mcnemar1947",)),
        ", Holm-adjusted ",
        Cite(("holm1979",)),
        f", with a paired bootstrap interval for the difference ({settings['resamples']} "
        f"resamples) ",
        Cite(("efron1979",)),
        "; models not significantly worse than the best share its group.",
    ]
