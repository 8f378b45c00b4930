"""The methods paragraph, with the audit's numbers filled in and the methods it used cited.

A paragraph is a list of parts: plain text, or a :class:`Cite` of some works; ``latex`` and
``markdown`` write the same parts (``\\citep`` against an author-year citation), so the two
texts say the same thing.

Every sentence is read from the campaign at hand: counts from the answers (not the k setting),
pools from where the annotators came, and every method named is one that a printed number used,
taken from the tables' ``methods`` and worded by ``method_words`` (a table that prints no
interval makes the paragraph say why, not promise one).
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from prb_annotate.paper import numbers as fmt
from prb_annotate.paper import protocol
from prb_annotate.paper.method_words import ordered, words
from prb_annotate.paper.table_data import adjustments
from prb_annotate.paper.tables import AGREEMENT_KEYS, GROUP_TESTS, Table, all_tables


@dataclass(frozen=True)
class Cite:
    keys: tuple[str, ...]


Part = str | Cite


def paragraph(numbers: Mapping[str, Any]) -> list[Part]:
    audit = numbers["audit"]
    found = {table.key: table for table in all_tables(numbers)}
    parts: list[Part] = []
    parts += _study(numbers)
    parts += protocol.protocol_parts(numbers)
    agreement_tables = [found[key] for key in ("agreement", "category-agreement") if key in found]
    parts += _agreement(audit, agreement_tables, numbers["study"]["tentative_alpha"])
    parts += _verdicts(audit, found["verdicts"])
    if "sample-estimate" in found:
        parts += _sample(audit["sample_estimate"], found["sample-estimate"])
    section = audit.get("ppi")
    if "ppi" in found and section["overall"]["ppi"]["share"] is not None:
        parts += _ppi(audit, found["ppi"])
        parts += _recalibrated(section.get("recalibrated"))
    if "label-agreement" in found:
        parts += _human(numbers, found["label-agreement"], found["ratings"])
    parts += _bias(audit, found["bias"])
    if "leaderboard" in found:
        parts += _leaderboard(numbers["leaderboard"], found["leaderboard"])
    return parts


def printed_methods(numbers: Mapping[str, Any]) -> list[str]:
    """The methods of every interval and test the tables print: all the paragraph may name."""
    return ordered(method for table in all_tables(numbers) for method in table.methods)


def cited(parts: Sequence[Part]) -> list[str]:
    """The works ``parts`` cite, in the order first cited."""
    keys = [key for part in parts if isinstance(part, Cite) for key in part.keys]
    return list(dict.fromkeys(keys))


def methods_named(methods: Sequence[str], level: str) -> list[Part]:
    """ "a 95% plain Wilson score interval (Wilson, 1927)", one per interval method, joined."""
    parts: list[Part] = []
    for index, method in enumerate(ordered(methods)):
        entry = words(method)
        if index:
            parts.append(" or " if entry.kind == "interval" else " and ")
        parts.append(f"a {level}% {entry.phrase}" if entry.kind == "interval" else entry.phrase)
        if entry.cites:
            parts += [" ", Cite(entry.cites)]
    return parts


def _intervals(table: Table) -> list[str]:
    return [method for method in table.methods if words(method).kind == "interval"]


# --- who answered, and how much ---------------------------------------------------------------


def _study(numbers: Mapping[str, Any]) -> list[Part]:
    audit = numbers["audit"]
    counts = audit["counts"]
    categories = len(audit["validity"]["per_category"])
    text = (
        f"We audited {counts['pairs']} preference pairs in {categories} "
        f"{'category' if categories == 1 else 'categories'}; {_answers_per_pair(audit)} "
        f"{_count(counts['annotators'], 'annotator')} ({_pools(numbers['study']['pools'])}) "
        "gave "
        f"{counts['annotations']} answers in all ({counts['gold_items']} gold items among "
        "the pairs they saw). "
    )
    left_out = audit.get("left_out", [])
    if left_out:
        text += (
            f"{_annotators(len(left_out))} left out of the audit "
            f"({'; '.join(sorted({row['reason_label'] for row in left_out}))}), leaving "
            f"{counts['counted_annotations']} answers counted. "
        )
        text += exclusion_sentence(audit.get("exclusion_effect"))
    return [text]


def exclusion_sentence(effect: Mapping[str, Any] | None) -> str:
    """What leaving annotators out did to the verdicts (``rule.exclusion_effect``: the audit's
    verdicts against the same rule over every answer)."""
    if effect is None:
        return ""
    changed = int(effect["changed"])
    if not changed:
        return "Leaving their answers out changed no pair's verdict. "
    moves = "; ".join(
        f"{move['pairs']} from {move['from']} to {move['to']}" for move in effect["changes"]
    )
    verdicts = "verdict" if changed == 1 else "verdicts"
    return (
        f"Leaving their answers out changed the {verdicts} of {changed} of the "
        f"{effect['pairs']} pairs ({moves}). "
    )


def answers_per_pair(audit: Mapping[str, Any]) -> Counter[int]:
    """How many pairs have each number of counted answers (the answers, not the k setting)."""
    return Counter(int(row["n_annotations"]) for row in audit["verdicts"])


def _answers_per_pair(audit: Mapping[str, Any]) -> str:
    found = answers_per_pair(audit)
    if not found:
        return "no pair has a counted answer;"
    if len(found) == 1:
        (only,) = found
        return f"each pair has {only} counted {'answer' if only == 1 else 'answers'};"
    spread = ", ".join(
        f"{found[size]} {'pair' if found[size] == 1 else 'pairs'} {size}"
        for size in sorted(found, reverse=True)
    )
    return f"pairs have {min(found)} to {max(found)} counted answers ({spread});"


def _pools(pools: Sequence[Mapping[str, Any]]) -> str:
    if not pools:
        return "none counted"
    return "; ".join(f"{pool['annotators']} {pool['label']}" for pool in pools)


def _count(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _annotators(count: int) -> str:
    return "1 annotator was" if count == 1 else f"{count} annotators were"


# --- agreement --------------------------------------------------------------------------------


def _agreement(audit: Mapping[str, Any], tables: Sequence[Table], tentative: float) -> list[Part]:
    """``tables``: the agreement tables printed, for all pairs and per category; their
    intervals' methods are named, with what the method did after drawing (the centring of
    the coefficients whose printed intervals were centred, the widening to hold the
    estimate: ``table_data.adjustments``)."""
    settings = audit["settings"]
    level = fmt.confidence_level(settings["confidence"])
    parts: list[Part] = [
        "Agreement was measured per question with Krippendorff's alpha ",
        Cite(("krippendorff2011",)),
        " and Gwet's AC1, AC2 with ordinal weights for the quality ratings ",
        Cite(("gwet2008", "gwet2014")),
    ]
    intervals = ordered(method for table in tables for method in _intervals(table))
    if intervals:
        parts += [", each with ", *methods_named(intervals, level)]
        parts.append(f", {settings['resamples']} resamples, seed {settings['seed']}")
        centred = [name for table in tables for name in table.centred]
        if adjusted := adjustments(intervals, centred):
            parts.append(f"; {adjusted}")
    parts += [". ", *_missing_intervals(audit, bool(intervals))]
    fit = next((q for q in audit["agreement"] if q["question"] == "rubric_fit"), None)
    if fit is not None:
        by_key = {c["key"]: c for c in fit["coefficients"]}
        alpha_key, gwet_key = AGREEMENT_KEYS[fit["kind"]]
        parts.append(
            f"On which answer fits the user better, alpha was {fmt.estimate(by_key[alpha_key])} "
            f"and AC1 {fmt.estimate(by_key[gwet_key])} "
            f"(n = {fit['units_rated_twice']} pairs rated twice or more). "
        )
        parts.append(protocol.low_agreement(fit, alpha_key, tentative))
    return parts


def _missing_intervals(audit: Mapping[str, Any], some_printed: bool) -> list[Part]:
    """Why agreement intervals are missing from the table, when some are."""
    if not audit["settings"]["resamples"]:
        return ["No agreement interval was computed (no resamples were drawn). "]
    shown, unreliable = agreement_intervals(audit)
    if not unreliable:
        return []
    because = f": {why}" if (why := unreliable_reasons(unreliable)) else ""
    if not some_printed:
        return [f"No agreement interval is printed: each was marked unreliable{because}. "]
    return [
        f"{len(unreliable)} of the {len(shown)} agreement intervals "
        f"{'is' if len(unreliable) == 1 else 'are'} marked unreliable and not printed{because}. "
    ]


def agreement_intervals(
    audit: Mapping[str, Any],
) -> tuple[list[Mapping[str, Any]], list[Mapping[str, Any]]]:
    """The agreement coefficients the tables print, and those of them marked unreliable."""
    shown = [
        c
        for q in audit["agreement"]
        for c in q["coefficients"]
        if c["key"] in AGREEMENT_KEYS[q["kind"]]
    ]
    return shown, [c for c in shown if c.get("reliable") is False]


def unreliable_reasons(coefficients: Sequence[Mapping[str, Any]]) -> str:
    """Why intervals are unreliable, each rule once: a reason reads "<what is short>: <this
    question's figures>; <what the coefficient needs>", and the figures differ per question
    while the rule does not, so the sentence keeps the first and last parts only."""
    rules: dict[str, set[str]] = {}
    for coefficient in coefficients:
        reason = str(coefficient.get("reason") or "")
        head, _, rest = reason.partition(": ")
        head = head.split(" (")[0]
        need = rest.rpartition("; ")[2] if "; " in rest else ""
        if head:
            rules.setdefault(head, set()).update({need} - {""})
    return "; ".join(
        f"{head} ({'; '.join(sorted(needs))})" if needs else head
        for head, needs in sorted(rules.items())
    )


# --- verdicts and estimates -------------------------------------------------------------------


def _verdicts(audit: Mapping[str, Any], table: Table) -> list[Part]:
    thresholds = audit["settings"]["thresholds"]
    overall = audit["validity"]["overall"]
    share = overall["validated_share"]
    level = fmt.confidence_level(audit["settings"]["confidence"])
    parts: list[Part] = [
        protocol.rule_sentence(thresholds),
        f"{overall['validated']} of the {share['total']} decided pairs were validated, "
        f"{_percent_estimate(share)}",
    ]
    intervals = _intervals(table)
    if intervals:
        parts += [" with ", *methods_named(intervals, level)]
    parts.append(
        f"; {overall['excluded']} were excluded and {overall['undecided']} stay undecided. "
    )
    return parts


def _sample(estimate: Mapping[str, Any], table: Table) -> list[Part]:
    overall = estimate["overall"]
    level = fmt.confidence_level(estimate["confidence"])
    if estimate.get("design") == "active":
        design: list[Part] = [
            f"The {overall['sampled']} pairs were drawn from the dataset's "
            f"{overall['population']} by active sampling: each pair independently with its own "
            "probability, rising with a model annotator's uncertainty about it and never below "
            f"{fmt.percent(estimate['floor'])}% of the uniform one ",
            Cite(("zrnic2024",)),
        ]
    else:
        design = [
            f"The {overall['sampled']} pairs are a stratified random sample of the dataset's "
            f"{overall['population']}, drawn without replacement within each category ",
            Cite(("cochran1977",)),
            *_sizing(estimate["plan"]),
        ]
    if overall.get("withheld"):
        return [
            *design,
            "; the dataset's validated share is not estimated: the active estimate's coverage "
            "was measured to hold only with enough decided pairs of both verdicts drawn in "
            "every category. ",
        ]
    parts: list[Part] = [
        *design,
        f"; the dataset's validated share is estimated at {_percent_estimate(overall['share'])}",
    ]
    intervals = _intervals(table)
    if intervals:
        parts += [" with ", *methods_named(intervals, level)]
    parts.append(". ")
    return parts


def _sizing(plan: Mapping[str, Any]) -> list[Part]:
    """How the plan sized the sample, from its targets (``sampling.plan_sample``): per category
    the smallest size whose reported interval reaches the category half-width, overall the
    smallest proportional allocation whose reported interval reaches the overall one, each
    found by bisection on the interval the estimate is reported with (not a normal-theory
    formula), and the top-ups that recomputed it."""
    targets = plan["targets"]
    per_category, whole = targets["category_half_width"], targets["half_width"]
    reach = "whose interval, as the estimate reports it, reaches a half-width of"
    if per_category is not None and whole is not None:
        text = (
            f"; each category's size is the larger of the smallest {reach} "
            f"{fmt.percent(per_category)} percentage points within the category and its part "
            "of the smallest allocation in proportion to the categories' sizes whose overall "
            f"interval reaches {fmt.percent(whole)} points"
        )
    elif per_category is not None:
        text = (
            f"; each category's size is the smallest {reach} {fmt.percent(per_category)} "
            "percentage points"
        )
    else:
        text = (
            "; the sample is the smallest allocated in proportion to the categories' sizes "
            f"{reach} {fmt.percent(whole)} percentage points overall"
        )
    text += f", when {fmt.percent(targets['expected_share'])}% of the pairs are validated"
    top_ups = len(plan.get("extensions") or ())
    if top_ups:
        times = "once" if top_ups == 1 else f"{top_ups} times"
        text += (
            f" (the plan was recomputed {times} at the shares observed so far, no category "
            "shrinking)"
        )
    return [text]


def _ppi(audit: Mapping[str, Any], table: Table) -> list[Part]:
    """The prediction-powered estimate: which pairs the model judged (in counts), its
    interval at the level the section was computed at, and what it adds over the sample."""
    section = audit["ppi"]
    overall = section["overall"]
    parts: list[Part] = [
        f"A model annotator judged {protocol.model_reach(audit)}; it agreed with the "
        f"humans' verdicts on {fmt.percent(overall['agreement'])}% of the "
        f"{overall['sample_pairs']} sampled pairs they decided; combining its verdicts with "
        f"the humans' estimates the validated share at {_percent_estimate(overall['ppi'])}",
    ]
    level = fmt.confidence_level(section["confidence"])
    intervals = [m for m in _intervals(table) if m.startswith("ppi")]
    if intervals:
        parts += [" with ", *methods_named(intervals, level)]
    parts.append(
        f", an interval worth {fmt.count(round(overall['worth']))} human-annotated pairs. "
    )
    parts.append(protocol.model_gain(audit))
    return parts


def _recalibrated(section: Mapping[str, Any] | None) -> list[Part]:
    """The estimate on the model annotator's probabilities, where its run kept them, at the
    level its own section was computed at."""
    if not section or not section.get("available"):
        return []
    estimate = section["overall"]["estimate"]
    if estimate["share"] is None:
        return []
    level = fmt.confidence_level(section["confidence"])
    return [
        f"On the model's probabilities the estimate is {_percent_estimate(estimate)} (",
        *methods_named([estimate["method"]], level),
        "). ",
    ]


def _human(numbers: Mapping[str, Any], labels: Table, ratings: Table) -> list[Part]:
    """The humans against the dataset's label, and what the ratings tables rest on."""
    agreement = numbers["human"]["label_agreement"]
    overall = agreement["overall"]
    level = fmt.confidence_level(numbers["audit"]["settings"]["confidence"])
    parts: list[Part] = [
        f"Of the {overall['total']} pairs on which more than "
        f"{fmt.percent(agreement['majority_threshold'])}% of the answers agreed on the response "
        "that fits the user, the majority preferred the dataset's chosen response on "
        f"{overall['count']}, {_percent_estimate(overall)}"
    ]
    intervals = _intervals(labels)
    if intervals:
        parts += [" with ", *methods_named(intervals, level)]
    parts.append(". ")
    means = _intervals(ratings)
    if means:
        parts += ["Mean ratings per criterion have ", *methods_named(means, level), ". "]
    return parts


def _bias(audit: Mapping[str, Any], table: Table) -> list[Part]:
    position = audit["bias"]["position"]
    length = audit["bias"]["length"]
    tests = [m for m in table.methods if words(m).kind == "test"]
    test: list[Part] = [*methods_named(tests, ""), ", "] if tests else []
    return [
        "Annotators named the answer shown first in "
        f"{fmt.percent(position['share_a']['share'])}% of {position['share_a']['total']} "
        "non-tie answers (",
        *test,
        f"{_p(position['p_value'])}), and picked the longer answer in "
        f"{fmt.percent(length['answers_pick_longer']['share'])}% of "
        f"{length['answers_pick_longer']['total']} ({_p(length['answers_pick_longer_p_value'])}).",
    ]


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


# --- reward models ----------------------------------------------------------------------------


def _leaderboard(board: Mapping[str, Any], table: Table) -> list[Part]:
    settings = board["settings"]
    level = fmt.confidence_level(settings["confidence"])
    parts: list[Part] = [
        f" We scored {len(board['models'])} reward models on the {board['pairs']} pairs."
    ]
    intervals = _intervals(table)
    if intervals:
        parts += [" Accuracies have ", *methods_named(intervals, level), "."]
    if all(test in table.methods for test in GROUP_TESTS):
        # The procedure's own words say how the groups were formed (evaluation.significance).
        parts += [
            " Models are grouped with the ",
            *methods_named(GROUP_TESTS, level),
            f": {settings['grouping']['words']}.",
        ]
    return parts
