"""A language model as a pseudo-annotator: ``manage.py evaluate --judge --as-annotator``.

The model is asked the annotation questions about every regular pair of the campaign, or of its
whole dataset for the prediction-powered estimate of a planned sample
(``evaluation.annotator``); the run is an ``EvaluationRun`` with mode ``annotator`` and its
answers are ``ModelAnswer`` rows, never ``Annotation`` rows: the queue, the human agreement
coefficients, the verdicts and the exports cannot see them. The audit compares them with the
humans in a section of its own (``audit/model_agreement.py``).
"""

from typing import Any

from django.db import transaction

from prb_annotate.audit.model_answers import ANNOTATOR_MODE
from prb_annotate.campaigns.run_names import default_name
from prb_annotate.datasets.records import pair_to_record
from prb_annotate.models import (
    Annotation,
    Campaign,
    CampaignItem,
    EvaluationRun,
    ModelAnswer,
    Pair,
)


def campaign_pairs(campaign: Campaign) -> list[Pair]:
    """The campaign's regular pairs, by record id (gold items are not asked)."""
    return list(
        Pair.objects.filter(
            campaign_items__campaign=campaign, campaign_items__kind=CampaignItem.Kind.REGULAR
        ).order_by("external_id")
    )


def dataset_pairs(campaign: Campaign) -> list[Pair]:
    """Every pair of the campaign's dataset but its gold, practice and qualification pairs, by
    record id: the population a planned sample is drawn from, for the prediction-powered
    estimate (``audit/ppi.py``)."""
    set_apart = {
        *campaign.items.filter(kind=CampaignItem.Kind.GOLD).values_list("pair_id", flat=True),
        *campaign.qualification_items.values_list("pair_id", flat=True),
    }
    return list(campaign.dataset.pairs.exclude(pk__in=set_apart).order_by("external_id"))


def annotate_campaign(
    campaign: Campaign,
    *,
    model: str,
    template: str | None = None,
    whole_dataset: bool = False,
    **options: Any,
) -> EvaluationRun:
    """Ask ``model`` the annotation questions about the campaign's pairs (with
    ``whole_dataset``, every pair of its dataset, as ``dataset_pairs``) and store its answers.

    ``options`` are :class:`evaluation.config.ScoreConfig` fields (``mode``, ``top_k``,
    ``device``, ``dtype``, ``max_new_tokens``...). Raises ``evaluation.errors.EvaluationError``
    for a bad template or model, and ValueError for a campaign without pairs; nothing is stored
    then.
    """
    from evaluation.annotator import annotate_records, answer_summary, load_template
    from evaluation.config import ScoreConfig
    from evaluation.models import load_judge
    from evaluation.records import to_pair_record

    prompts = load_template(template)
    pairs = dataset_pairs(campaign) if whole_dataset else campaign_pairs(campaign)
    if not pairs:
        raise ValueError(f"campaign {campaign.pk} has no pairs to annotate")
    config = ScoreConfig(model=model, judge=True, both_orders=True, **options)
    # A model served elsewhere is asked over HTTP: nothing to load here.
    loaded = (
        None if config.endpoint else load_judge(model, device=config.device, dtype=config.dtype)
    )
    records = [to_pair_record(pair_to_record(pair), index=i) for i, pair in enumerate(pairs)]
    answers = annotate_records(loaded, records, prompts, config)
    settings = {
        "model": model,
        "template": prompts.source,
        "prompts": prompts.prompts,
        "mode": config.mode,
        "top_k": config.top_k,
        "max_new_tokens": config.new_tokens,
        "endpoint": config.endpoint.describe() if config.endpoint else None,
        "both_orders": True,
        "pairs": "dataset" if whole_dataset else "campaign",
    }
    return store_answers(campaign, pairs, answers, settings, answer_summary(answers))


@transaction.atomic
def store_answers(
    campaign: Campaign,
    pairs: list[Pair],
    answers: list[Any],
    settings: dict[str, Any],
    summary: dict[str, Any],
) -> EvaluationRun:
    run = EvaluationRun.objects.create(
        campaign=campaign,
        model_name=settings["model"],
        # Printed in the audit and the paper: never a server path.
        name=default_name(str(settings["model"])),
        mode=ANNOTATOR_MODE,
        subset=EvaluationRun.Subset.ALL,
        settings=settings,
        summary={"questions": summary},
    )
    by_id = {pair.external_id: pair for pair in pairs}
    ModelAnswer.objects.bulk_create(
        [
            ModelAnswer(
                run=run,
                pair=by_id[answer.pair_id],
                question=answer.question,
                chosen_position=answer.chosen_position,
                reply=answer.reply,
                answer=answer.answer or "",
                probability=answer.probability,
            )
            for answer in answers
        ],
        batch_size=1000,
    )
    return run


def answers_beside_humans(pair: Pair) -> list[dict[str, Any]]:
    """For the pair page: per campaign holding the pair, the humans' current answers and each
    model annotator's answers (both orders, with the raw reply), marked apart."""
    humans: dict[int, list[dict[str, Any]]] = {}
    current = Annotation.objects.filter(
        assignment__item__pair=pair,
        assignment__item__kind=CampaignItem.Kind.REGULAR,
        is_current=True,
    ).values_list(
        "assignment__campaign_id", "assignment__annotator__username", "rubric_fit", "differentiator"
    )
    for campaign_id, username, rubric_fit, differentiator in current.order_by(
        "assignment__annotator__username"
    ):
        humans.setdefault(campaign_id, []).append(
            {"annotator": username, "rubric_fit": rubric_fit, "differentiator": differentiator}
        )
    models: dict[int, list[ModelAnswer]] = {}
    for answer in (
        ModelAnswer.objects.filter(pair=pair)
        .select_related("run")
        .order_by("run_id", "question", "chosen_position")
    ):
        models.setdefault(answer.run.campaign_id, []).append(answer)
    names = dict(Campaign.objects.filter(pk__in={*humans, *models}).values_list("pk", "name"))
    return [
        {"campaign": names[pk], "humans": humans.get(pk, []), "models": models.get(pk, [])}
        for pk in sorted(names)
    ]
