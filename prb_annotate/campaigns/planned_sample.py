"""Campaigns over a planned sample: the database side of ``audit/sampling.py``.

A campaign created with sample targets holds, per category, the first pairs of a seeded order
of that category (gold pairs left out), and keeps its plan in ``Campaign.sample_plan``.
Extending the sample after a pilot replans at the shares seen so far and adds the next pairs
of the same orders, so the campaign's pairs always equal those of a campaign planned for its
current sizes with the same seed. The dataset's pairs are assumed unchanged since the plan
(datasets are imported whole, once).

An *active* sample (``audit/active_sample.py``) is drawn from the probabilities of the newest
model-annotator run over the dataset that covers every pair of the plan's population: each pair
with its own inclusion probability, recorded on its item. It cannot be extended.
"""

import random
from collections import defaultdict
from collections.abc import Collection

import numpy as np
from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from prb_annotate.audit import active_sample, sampling
from prb_annotate.audit.active_sample import SampleDesign
from prb_annotate.audit.campaign_audit import campaign_verdicts
from prb_annotate.audit.model_answers import covering_run, run_name
from prb_annotate.audit.rule import EXCLUDED, VALIDATED
from prb_annotate.audit.sampling import PlanError, PlanTargets, SamplePlan
from prb_annotate.models import Campaign, CampaignItem, Dataset


class SamplePlanError(ValueError):
    """A sample cannot be planned or extended as asked; ``field`` names the input at fault."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(message)
        self.field = field_name


def category_pools(dataset: Dataset, *, leave_out: Collection[str] = ()) -> dict[str, list[str]]:
    """The external ids of the dataset's pairs by category, without ``leave_out`` (gold)."""
    pools: dict[str, list[str]] = defaultdict(list)
    for external_id, category in dataset.pairs.values_list("external_id", "category"):
        if external_id not in leave_out:
            pools[category].append(external_id)
    return dict(pools)


def plan_for_dataset(
    dataset: Dataset,
    targets: PlanTargets,
    k: int,
    *,
    leave_out: Collection[str] = (),
    design: SampleDesign | None = None,
) -> SamplePlan:
    """The plan for ``targets`` over the dataset's categories (a preview: nothing is written);
    an active ``design`` plans on the model's probabilities (``active_inputs``)."""
    if design is not None and design.active:
        return active_inputs(dataset, targets, k, leave_out, design)[0]
    pools = category_pools(dataset, leave_out=leave_out)
    try:
        return sampling.plan_sample({c: len(ids) for c, ids in pools.items()}, targets, k)
    except PlanError as error:
        raise SamplePlanError(error.field, f"sample plan: {error}") from error


def planned_pair_ids(
    dataset: Dataset,
    targets: PlanTargets,
    k: int,
    seed: int,
    *,
    leave_out: Collection[str],
    design: SampleDesign | None = None,
) -> tuple[list[str], SamplePlan, dict[str, float]]:
    """The external ids of the planned sample (sorted), the plan they were drawn for, and the
    inclusion probability of each drawn pair (an active draw's; empty for a uniform one)."""
    if design is not None and design.active:
        plan, pools, scores = active_inputs(dataset, targets, k, leave_out, design)
        drawn, plan = active_sample.draw(plan, pools, scores, seed)
        return sorted(drawn), plan, drawn
    plan = plan_for_dataset(dataset, targets, k, leave_out=leave_out)
    drawn_ids = sampling.draw(category_pools(dataset, leave_out=leave_out), plan.sizes(), seed)
    return sorted(pair for ids in drawn_ids.values() for pair in ids), plan, {}


def no_run_reason(dataset: Dataset) -> str:
    """Why a dataset cannot have an active sample, in a sentence naming what to do."""
    return _(
        "an active sample needs a model-annotator run that kept a probability for every pair "
        "of dataset %(dataset)s (gold, practice and qualification pairs set apart); run "
        "`manage.py evaluate --campaign ID --model MODEL --judge --as-annotator "
        "--whole-dataset` on a campaign over it first"
    ) % {"dataset": repr(dataset.name)}


def active_inputs(
    dataset: Dataset,
    targets: PlanTargets,
    k: int,
    leave_out: Collection[str],
    design: SampleDesign,
) -> tuple[SamplePlan, dict[str, list[str]], dict[str, np.ndarray]]:
    """The active plan, each category's record ids (sorted, in Python) and the model's
    probabilities in the same order, from the newest run that covers them all
    (``model_answers.covering_run``); a ``SamplePlanError`` on ``design`` when none does."""
    try:
        design.check()
    except PlanError as error:
        raise SamplePlanError(error.field, f"sample plan: {error}") from error
    rows = [
        (pk, external_id, category)
        for pk, external_id, category in dataset.pairs.values_list("pk", "external_id", "category")
        if external_id not in leave_out
    ]
    if not rows:
        raise SamplePlanError("dataset", "sample plan: dataset: has no pairs to sample")
    found = covering_run(dataset, [row[0] for row in rows])
    if found is None:
        raise SamplePlanError("design", f"sample plan: design: {no_run_reason(dataset)}")
    run, probabilities = found
    by_id = {external_id: probabilities[pk] for pk, external_id, _category in rows}
    pools: dict[str, list[str]] = defaultdict(list)
    for _pk, external_id, category in rows:
        pools[category].append(external_id)
    pools = {c: sorted(ids) for c, ids in sorted(pools.items())}
    scores = {c: np.array([by_id[i] for i in ids], dtype=float) for c, ids in pools.items()}
    try:
        plan = active_sample.active_plan(
            scores, targets, k, design, active_sample.ModelRun(run.pk, run_name(run))
        )
    except PlanError as error:
        raise SamplePlanError(error.field, f"sample plan: {error}") from error
    return plan, pools, scores


def observed_shares(campaign: Campaign) -> dict[str, tuple[int, int]]:
    """(validated, decided) pairs per category, from the campaign's current verdicts."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for verdict in campaign_verdicts(campaign).values():
        if verdict.verdict in (VALIDATED, EXCLUDED):
            counts[verdict.category][0] += verdict.verdict == VALIDATED
            counts[verdict.category][1] += 1
    return {category: (validated, decided) for category, (validated, decided) in counts.items()}


def extend_sample(campaign: Campaign) -> dict[str, int]:
    """Add just enough pairs per category to reach the plan's targets at the shares seen so far.

    Returns the pairs added per category (all zero when the sample already suffices; the plan
    then stays as it was). The campaign row is locked while the plan is replaced, so two
    managers extending at once add the pairs once: the second sees the first's plan and finds
    nothing more to add.
    """
    if campaign.sample_plan is None:
        raise SamplePlanError("sample_plan", f"campaign {campaign.name!r} has no sample plan")
    if campaign.status == Campaign.Status.CLOSED:
        raise SamplePlanError("status", "a closed campaign cannot be extended")
    if active_sample.is_active(campaign.sample_plan):
        raise SamplePlanError(
            "design",
            _(
                "an actively drawn sample cannot be extended: each pair's weight is the "
                "probability it had when the sample was drawn, which a second draw would change; "
                "create a new campaign with smaller target half-widths instead"
            ),
        )
    observed = observed_shares(campaign)
    with transaction.atomic():
        locked = Campaign.objects.select_for_update().select_related("dataset").get(pk=campaign.pk)
        assert locked.sample_plan is not None  # a plan is never removed
        extended = sampling.extended_plan(SamplePlan.from_json(locked.sample_plan), observed)
        added: dict[str, int] = extended.extensions[-1]["added"]
        if any(added.values()):
            _add_items(locked, extended, round_number=len(extended.extensions))
            locked.sample_plan = extended.as_json()
            locked.save(update_fields=["sample_plan"])
    campaign.sample_plan = locked.sample_plan
    return added


def describe_extension(added: dict[str, int]) -> str:
    """What ``extend_sample`` did, in a sentence for the page, the API and the command."""
    if not any(added.values()):
        return (
            "The sample already reaches the targets at the shares seen so far (the expected "
            "share where none is seen yet); nothing added."
        )
    parts = ", ".join(f"{n} in {c or '(no category)'}" for c, n in sorted(added.items()) if n)
    return f"Added {sum(added.values())} pair(s) to the sample: {parts}."


def _add_items(campaign: Campaign, plan: SamplePlan, *, round_number: int) -> None:
    items = campaign.items.all()
    gold = set(
        items.filter(kind=CampaignItem.Kind.GOLD).values_list("pair__external_id", flat=True)
    )
    present = set(items.values_list("pair__external_id", flat=True))
    # Practice and qualification pairs are set apart like gold ones.
    gold |= set(campaign.qualification_items.values_list("pair__external_id", flat=True))
    drawn = sampling.draw(
        category_pools(campaign.dataset, leave_out=gold), plan.sizes(), campaign.seed
    )
    new_ids = sorted(pair for ids in drawn.values() for pair in ids if pair not in present)
    pks = dict(
        campaign.dataset.pairs.filter(external_id__in=new_ids).values_list("external_id", "pk")
    )
    # New items join the end of the queue in a seeded order of their own.
    start = (items.aggregate(last=Max("order_key"))["last"] or 0) + 1
    order = list(range(start, start + len(new_ids)))
    random.Random(f"prb-extend/{campaign.seed}/{round_number}").shuffle(order)
    CampaignItem.objects.bulk_create(
        [
            CampaignItem(campaign=campaign, pair_id=pks[external_id], order_key=order_key)
            for external_id, order_key in zip(new_ids, order, strict=True)
        ],
        batch_size=500,
    )
