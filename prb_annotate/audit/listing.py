"""A campaign's pairs as a manager lists them: verdicts with what is worth filtering on (flags,
split votes, adjudications, a reward model's outcome), filtered and sorted the same way for the
"Pairs" page and the API's ``/verdicts/``.

Record ids sort naturally (``x-2`` before ``x-10``). Filters:

- ``verdict``, ``reason`` (a reason code of the final verdict or of the annotators'),
  ``category``;
- ``flagged``: some current annotation flags the pair; ``split``: the annotators' vote is
  split; ``adjudicated``: a manager decided it (each ``yes`` or ``no``);
- gold items are no verdict's pairs: ``gold_rows`` lists them apart, with their answers;
- ``run`` (an evaluation run of the campaign) adds its scores; with ``disagrees=yes`` only the
  pairs where the reward model picks the answer the annotators' majority did not.
"""

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import Count

from prb_annotate.audit import rule
from prb_annotate.audit.rule import PairVerdict
from prb_annotate.models import (
    Annotation,
    Assignment,
    Campaign,
    CampaignItem,
    EvaluationRun,
    PairScore,
)

YES_NO = {"yes": True, "no": False}
SORTS = ("id", "category", "verdict", "reasons", "annotations", "flagged", "adjudicated", "margin")


@dataclass(frozen=True)
class Score:
    """A pair's result in one evaluation run."""

    chosen: float | None
    rejected: float | None
    outcome: str

    @property
    def margin(self) -> float | None:
        if self.chosen is None or self.rejected is None:
            return None
        return self.chosen - self.rejected


@dataclass(frozen=True)
class PairRow:
    verdict: PairVerdict
    flagged: int
    score: Score | None = None

    @property
    def split(self) -> bool:
        return rule.UNDECIDED_SPLIT_VOTE in self.verdict.by_annotators()[1]

    @property
    def model_disagrees(self) -> bool | None:
        """Whether the model picks the answer the annotators' majority did not (None: no
        score, or no chosen / rejected majority to disagree with)."""
        majority = self.verdict.majority.get("rubric_fit")
        if self.score is None or majority not in ("chosen", "rejected"):
            return None
        if self.score.outcome not in ("correct", "wrong"):
            return None
        return (self.score.outcome == "correct") != (majority == "chosen")


@dataclass(frozen=True)
class PairFilters:
    verdict: str | None = None
    reason: str | None = None
    category: str | None = None
    flagged: bool | None = None
    split: bool | None = None
    adjudicated: bool | None = None
    run: int | None = None
    disagrees: bool | None = None
    sort: str = "id"
    descending: bool = False

    def matches(self, row: PairRow) -> bool:
        verdict = row.verdict
        checks: list[tuple[Any, Callable[[], bool]]] = [
            (self.verdict, lambda: verdict.verdict == self.verdict),
            (
                self.reason,
                lambda: self.reason in (*verdict.reasons, *verdict.by_annotators()[1]),
            ),
            (self.category, lambda: verdict.category == self.category),
            (self.flagged, lambda: (row.flagged > 0) == self.flagged),
            (self.split, lambda: row.split == self.split),
            (self.adjudicated, lambda: verdict.adjudicated == self.adjudicated),
            (self.disagrees, lambda: (row.model_disagrees is True) == self.disagrees),
        ]
        return all(wanted is None or test() for wanted, test in checks)


def filters_from(values: Mapping[str, Any], campaign: Campaign) -> PairFilters:
    """Filters from already-typed values (a form's or a serializer's), checked against the
    campaign: the run must be one of its runs, and ``disagrees`` needs a run."""
    run = values.get("run")
    errors: dict[str, str] = {}
    if run is not None and not EvaluationRun.objects.filter(pk=run, campaign=campaign).exists():
        errors["run"] = f"Campaign {campaign.pk} has no evaluation run {run}."
    if values.get("disagrees") is not None and run is None:
        errors["disagrees"] = "Choose the evaluation run (run) whose model is compared."
    if errors:
        raise ValidationError({field: [message] for field, message in errors.items()})
    sort = values.get("sort") or "id"
    return PairFilters(
        verdict=values.get("verdict") or None,
        reason=values.get("reason") or None,
        category=values.get("category"),
        flagged=values.get("flagged"),
        split=values.get("split"),
        adjudicated=values.get("adjudicated"),
        run=run,
        disagrees=values.get("disagrees"),
        sort=sort.removeprefix("-"),
        descending=sort.startswith("-"),
    )


def flagged_counts(campaign: Campaign) -> dict[int, int]:
    """Per pair: current annotations that flag it."""
    rows = (
        Annotation.objects.filter(
            assignment__campaign=campaign,
            assignment__status=Assignment.Status.SUBMITTED,
            is_current=True,
            flagged=True,
        )
        .values("assignment__item__pair_id")
        .annotate(count=Count("id"))
        .order_by()
    )
    return {row["assignment__item__pair_id"]: row["count"] for row in rows}


def run_scores(run_id: int | None) -> dict[int, Score]:
    if run_id is None:
        return {}
    rows = PairScore.objects.filter(run_id=run_id).values_list(
        "pair_id", "score_chosen", "score_rejected", "outcome"
    )
    return {
        pair_id: Score(chosen, rejected, outcome) for pair_id, chosen, rejected, outcome in rows
    }


def _sort_key(name: str) -> Callable[[PairRow], Any]:
    def missing_last(value: float | None) -> tuple[bool, float]:
        return (value is None, value or 0.0)

    keys: dict[str, Callable[[PairRow], Any]] = {
        "category": lambda row: row.verdict.category,
        "verdict": lambda row: row.verdict.verdict,
        "reasons": lambda row: row.verdict.reasons,
        "annotations": lambda row: row.verdict.n_annotations,
        "flagged": lambda row: row.flagged,
        "adjudicated": lambda row: row.verdict.adjudicated,
        "margin": lambda row: missing_last(row.score.margin if row.score else None),
    }
    first = keys.get(name, lambda row: ())
    # Ties, and the "id" sort itself, go by natural record id.
    return lambda row: (first(row), rule.natural_key(row.verdict.external_id))


def select_rows(
    campaign: Campaign, by_pair: Mapping[int, PairVerdict], filters: PairFilters
) -> list[PairRow]:
    """The campaign's pairs that pass ``filters``, in the order asked for."""
    flags = flagged_counts(campaign)
    scores = run_scores(filters.run)
    rows: Iterable[PairRow] = (
        PairRow(verdict, flags.get(pair_id, 0), scores.get(pair_id))
        for pair_id, verdict in by_pair.items()
    )
    chosen = [row for row in rows if filters.matches(row)]
    return sorted(chosen, key=_sort_key(filters.sort), reverse=filters.descending)


@dataclass(frozen=True)
class GoldRow:
    """A gold item as the Pairs list shows it: the answers given and how many matched."""

    pair_id: int
    external_id: str
    category: str
    gold_answers: Mapping[str, Any]
    answers: int
    matched: int


def gold_matches(gold_answers: Mapping[str, Any] | None, annotation: Annotation) -> bool | None:
    """Whether an answer gives every expected gold answer (None: the item expects none)."""
    if not gold_answers:
        return None
    return all(getattr(annotation, key, None) == value for key, value in gold_answers.items())


def gold_rows(campaign: Campaign) -> list[GoldRow]:
    """The campaign's gold items by natural record id, with their current answers counted."""
    items = CampaignItem.objects.filter(campaign=campaign, kind=CampaignItem.Kind.GOLD)
    answers: dict[int, list[Annotation]] = {}
    current = Annotation.objects.filter(
        assignment__campaign=campaign,
        assignment__item__kind=CampaignItem.Kind.GOLD,
        assignment__status=Assignment.Status.SUBMITTED,
        is_current=True,
    ).select_related("assignment")
    for annotation in current:
        answers.setdefault(annotation.assignment.item_id, []).append(annotation)
    rows = [
        GoldRow(
            pair_id=item.pair_id,
            external_id=item.pair.external_id,
            category=item.pair.category,
            gold_answers=item.gold_answers or {},
            answers=len(answers.get(item.pk, [])),
            matched=sum(
                gold_matches(item.gold_answers, annotation) is True
                for annotation in answers.get(item.pk, [])
            ),
        )
        for item in items.select_related("pair")
    ]
    return sorted(rows, key=lambda row: rule.natural_key(row.external_id))
