"""Reward-model runs over a campaign's pairs, stored as EvaluationRun and PairScore rows.

The scorer is the plain-Python ``evaluation`` package. It, and torch with it, is imported only
when a run starts, so the web app never loads torch.

Each scored record carries the pair's audit subset as the label ``audit.subset`` (``validated``
or ``excluded``; an undecided pair counts as excluded, as in exports), so one run reports
accuracy on all pairs and on both subsets side by side. The subsets follow a manager's
adjudication where there is one, as exports do; the run's summary says how many pairs that was.
"""

from collections.abc import Callable
from typing import Any

from django.db import transaction

from evaluation import records
from prb_annotate.audit.campaign_audit import campaign_verdicts
from prb_annotate.audit.rule import PairVerdict
from prb_annotate.campaigns.run_names import has_random_weights, name_for_new_run
from prb_annotate.datasets.records import pair_to_record
from prb_annotate.models import Campaign, EvaluationRun, Pair, PairScore

SUBSET_LABEL = "audit.subset"
SUBSETS = ("validated", "excluded")


def audit_subset(verdict: PairVerdict) -> str:
    return subset_of(verdict.verdict)


def pairs_in_subset(
    campaign: Campaign, subset: str, verdicts: dict[int, PairVerdict]
) -> list[Pair]:
    """The campaign's regular pairs in ``subset`` (validated / excluded / all), by record id."""
    if subset not in (*SUBSETS, "all"):
        raise ValueError(f"unknown subset {subset!r}: use validated, excluded or all")
    wanted = [
        pair_id
        for pair_id, verdict in verdicts.items()
        if subset == "all" or audit_subset(verdict) == subset
    ]
    return list(Pair.objects.filter(pk__in=wanted).order_by("external_id"))


def scoring_record(pair: Pair, verdict: PairVerdict) -> dict[str, Any]:
    record = pair_to_record(pair)
    record["audit"] = {
        "subset": audit_subset(verdict),
        "verdict": verdict.verdict,
        "adjudicated": verdict.adjudicated,
    }
    return record


def audit_note(pairs: list[Pair], verdicts: dict[int, PairVerdict]) -> dict[str, Any]:
    """What the run's subsets rest on, for its summary: adjudicated verdicts where a manager
    decided, the annotators' verdict elsewhere."""
    adjudicated = sorted(pair.external_id for pair in pairs if verdicts[pair.pk].adjudicated)
    return {
        "verdicts": "adjudicated where a manager decided, else the annotators' verdict",
        "adjudicated_pairs": len(adjudicated),
        "adjudicated_ids": adjudicated,
    }


def evaluate_campaign(
    campaign: Campaign,
    *,
    model: str,
    subset: str = "all",
    name: str | None = None,
    on_stored: Callable[[EvaluationRun], None] | None = None,
    **options: Any,
) -> EvaluationRun:
    """Score the campaign's pairs in ``subset`` with ``model`` and store the run.

    ``options`` are :class:`evaluation.config.ScoreConfig` fields (``mode``, ``top_k``,
    ``judge``, ``device``, ``dtype``, ...); ``model`` may be a built-in baseline
    (``builtin:length``). ``name`` is the run's name (``run_names``: refused when taken;
    by default the model's, never a server path). Nothing is stored when scoring fails, or
    when ``on_stored``, called with the run inside the transaction that stores it, raises.
    """
    from evaluation.baselines import is_builtin, score_builtin
    from evaluation.config import ScoreConfig

    run_name = name_for_new_run(campaign, model, name)  # a taken name fails before scoring
    verdicts = campaign_verdicts(campaign)
    pairs = pairs_in_subset(campaign, subset, verdicts)
    if not pairs:
        raise ValueError(f"campaign {campaign.pk} has no {subset} pairs to score")
    config = ScoreConfig(model=model, group_by=SUBSET_LABEL, **options)
    records = [scoring_record(pair, verdicts[pair.pk]) for pair in pairs]
    if is_builtin(model):  # a baseline needs no torch: keep it out of this process
        result = score_builtin(records, config)
    else:
        from evaluation.scoring import score_records

        result = score_records(records, config)
    with transaction.atomic():
        run = store_run(campaign, subset, config.mode, result, pairs, verdicts, name=run_name)
        if has_random_weights(model):
            EvaluationRun.objects.filter(pk=run.pk).update(random_weights=True)
            run.random_weights = True
        if on_stored is not None:
            on_stored(run)
    return run


@transaction.atomic
def store_run(
    campaign: Campaign,
    subset: str,
    mode: str,
    result: Any,
    pairs: list[Pair],
    verdicts: dict[int, PairVerdict],
    name: str | None = None,
) -> EvaluationRun:
    summary = {**result.summary_dict(), "audit": audit_note(pairs, verdicts)}
    model = summary["settings"]["model"]
    run = EvaluationRun.objects.create(
        campaign=campaign,
        model_name=model,
        # Checked again under the transaction: another run may have taken it while scoring.
        name=name_for_new_run(campaign, model, name),
        mode=mode,
        subset=subset,
        settings=summary["settings"],
        summary=summary,
    )
    # The scorer returns pairs in input order, so position i is pairs[i].
    PairScore.objects.bulk_create(
        PairScore(
            run=run,
            pair=pair,
            score_chosen=score.chosen_score,
            score_rejected=score.rejected_score,
            outcome=score.outcome,
            verdict=verdicts[pair.pk].verdict,
            details=score.as_dict(),
        )
        for pair, score in zip(pairs, result.pairs, strict=True)
    )
    return run


def accuracy_rows(run: EvaluationRun) -> list[dict[str, Any]]:
    """Accuracy on all scored pairs, then on each subset the run covered, for display.

    The intervals are worked out again from the stored counts, so a run stored when the
    scorer reported bootstrap intervals shows the same interval as a new one."""
    accuracy = run.summary.get("accuracy", {})
    rows = [{"subset": "all scored", **accuracy.get("overall", {})}]
    by_group = accuracy.get("by_group", {})
    rows += [{"subset": name, **by_group[name]} for name in SUBSETS if name in by_group]
    return [with_intervals(row) for row in rows]


def with_intervals(row: dict[str, Any]) -> dict[str, Any]:
    """``row`` with both accuracy intervals from its counts (Wilson with continuity
    correction, the scorer's), at the row's confidence."""
    from evaluation.metrics import ACCURACY_INTERVAL, ACCURACY_INTERVAL_WORDS
    from evaluation.significance import corrected_wilson_interval

    if "correct" not in row:
        return row
    correct, wrong, ties = (int(row.get(name, 0)) for name in ("correct", "wrong", "ties"))
    confidence = float(row.get("confidence", 0.95))
    left_out = corrected_wilson_interval(correct, correct + wrong, confidence)
    as_wrong = corrected_wilson_interval(correct, correct + wrong + ties, confidence)
    return {
        **row,
        "ci_low": left_out[0] if left_out else None,
        "ci_high": left_out[1] if left_out else None,
        "accuracy_ties_as_wrong_ci_low": as_wrong[0] if as_wrong else None,
        "accuracy_ties_as_wrong_ci_high": as_wrong[1] if as_wrong else None,
        "interval": ACCURACY_INTERVAL,
        "interval_words": ACCURACY_INTERVAL_WORDS,
        "confidence": confidence,
    }


def subset_of(verdict: str) -> str:
    """A stored verdict's subset, as ``audit_subset`` gives a live one (the definition the
    evaluation commands read: ``evaluation.records.audit_subset``)."""
    return records.audit_subset(verdict) or "excluded"


def run_staleness(run: EvaluationRun, verdicts: dict[int, PairVerdict]) -> dict[str, Any] | None:
    """How the audit moved since the run: the pairs whose subset (validated or excluded) is not
    the one they were scored under, and the run's pairs per subset now; None when none moved.
    A pair no longer in the audit counts as moved, in no subset now."""
    moved = 0
    now = dict.fromkeys(SUBSETS, 0)
    for pair_id, stored in run.scores.values_list("pair_id", "verdict"):
        current = verdicts.get(pair_id)
        if current is not None:
            now[audit_subset(current)] += 1
        if current is None or audit_subset(current) != subset_of(stored):
            moved += 1
    return {"moved": moved, "now": now} if moved else None


def run_notes(run: EvaluationRun, verdicts: dict[int, PairVerdict]) -> dict[str, Any]:
    """What the evaluations page says about a run beside its figures: whether it is a
    built-in baseline (its throughput means nothing), and whether the audit has changed since
    it was scored."""
    from evaluation.baselines import is_builtin  # plain Python, no torch

    return {
        "builtin": is_builtin(run.model_name),
        "stale": run_staleness(run, verdicts),
    }
