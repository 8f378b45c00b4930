"""A campaign's pairs as a manager audits them: the "Pairs" list with its filters (and its gold
items, listed apart), one pair with every annotation, its verdict explained, gold answers and
model scores, the adjudication panel (both answers and what differs between them beside the
form), and the queue of pairs waiting for a decision (or the validated, excluded or all pairs).

Every view calls ``managed_campaign_or_404`` first: whoever may not see the audit gets a 404.
The list's query string (filters and sort) travels to the pair page, whose previous / next
links walk the same list.
"""

from collections.abc import Collection
from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import path, reverse
from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _

from prb_annotate.audit import decisions, explain, listing, rule
from prb_annotate.audit.campaign_audit import CampaignAudit, campaign_verdicts
from prb_annotate.audit.listing import PairFilters
from prb_annotate.models import (
    Annotation,
    Assignment,
    Campaign,
    CampaignItem,
    ModelAnswer,
    PairScore,
)
from prb_annotate.security.access import managed_campaign_or_404, manager_action
from prb_annotate.web import textdiff
from prb_annotate.web.forms import AdjudicationForm, PairFilterForm

PAIRS_PER_PAGE = 50
QUEUE_SHOWN = 200
DIFFERENTIATOR_LABELS = dict(Annotation.Differentiator.choices)


def _filters(request: HttpRequest, campaign: Campaign) -> tuple[PairFilterForm, PairFilters]:
    """The list's filters from the query string; on a bad value, the form with its errors and
    no filter at all."""
    form = PairFilterForm(request.GET)
    if not form.is_valid():
        return form, PairFilters()
    try:
        return form, listing.filters_from(form.cleaned_data, campaign)
    except ValidationError as error:
        for field, problems in error.message_dict.items():
            form.add_error(field, problems)
        return form, PairFilters()


def _list_query(request: HttpRequest, **changes: str) -> str:
    """The query string of the list the manager came from, without its page number."""
    query = cast(QueryDict, request.GET.copy())
    query.pop("page", None)
    for key, value in changes.items():
        query[key] = value
    return query.urlencode()


@login_required
def campaign_pairs(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    form, filters = _filters(request, campaign)
    if request.GET.get("items") == "gold":
        return _gold_list(request, campaign)
    by_pair = campaign_verdicts(campaign)
    rows = listing.select_rows(campaign, by_pair, filters)
    page = Paginator(rows, PAIRS_PER_PAGE).get_page(request.GET.get("page"))
    current = ("-" if filters.descending else "") + filters.sort
    sort_links = {
        name: _list_query(request, sort=f"-{name}" if current == name else name)
        for name in listing.SORTS
    }
    context = {
        "campaign": campaign,
        "form": form,
        "filters": filters,
        "page": page,
        "total": len(rows),
        "query": _list_query(request),
        "sort_links": sort_links,
        "sort": current,
        "categories": sorted({verdict.category for verdict in by_pair.values()}),
        "runs": campaign.evaluation_runs.order_by("-created_at"),
        "gold_total": campaign.items.filter(kind=CampaignItem.Kind.GOLD).count(),
    }
    return render(request, "prb_annotate/campaign_pairs.html", context)


def _gold_list(request: HttpRequest, campaign: Campaign) -> HttpResponse:
    """The Pairs page's gold items: no verdict of their own, they check the annotators."""
    rows = listing.gold_rows(campaign)
    context = {
        "campaign": campaign,
        "gold": rows,
        "total": len(rows),
        "answers": sum(row.answers for row in rows),
        "matched": sum(row.matched for row in rows),
    }
    return render(request, "prb_annotate/campaign_gold.html", context)


def _answer_row(
    annotation: Annotation, assignment: Assignment, criteria: list[str]
) -> dict[str, Any]:
    seconds = annotation.time_on_task_ms / 1000 if annotation.time_on_task_ms else None
    return {
        "revision": annotation.revision,
        "created_at": annotation.created_at,
        "shown_as": annotation.rubric_fit_as_position(assignment.chosen_position),
        "rubric_fit": annotation.rubric_fit,
        "differentiator": DIFFERENTIATOR_LABELS.get(
            annotation.differentiator, annotation.differentiator
        ),
        "confidence": annotation.confidence,
        "chosen": [annotation.quality_chosen.get(c) for c in criteria],
        "rejected": [annotation.quality_rejected.get(c) for c in criteria],
        "seconds": seconds,
        "comment": annotation.comment,
        "flagged": annotation.flagged,
        "annotation": annotation,
    }


def _gold_matches(item: CampaignItem, annotation: Annotation) -> bool | None:
    if item.kind != CampaignItem.Kind.GOLD:
        return None
    return listing.gold_matches(item.gold_answers, annotation)


def annotation_rows(
    item: CampaignItem, criteria: list[str], left_out: Collection[str]
) -> list[dict[str, Any]]:
    """Each annotator's current answer, with earlier revisions, by annotator name."""
    assignments = (
        Assignment.objects.filter(item=item, status=Assignment.Status.SUBMITTED)
        .select_related("annotator")
        .prefetch_related("annotations")
        .order_by("annotator__username")
    )
    rows = []
    for assignment in assignments:
        revisions = sorted(assignment.annotations.all(), key=lambda a: -a.revision)
        current = next((a for a in revisions if a.is_current), None)
        if current is None:
            continue
        username = assignment.annotator.get_username()
        rows.append(
            {
                "annotator": username,
                "chosen_position": assignment.chosen_position,
                "counted": username not in left_out,
                "gold_match": _gold_matches(item, current),
                "current": _answer_row(current, assignment, criteria),
                "earlier": [
                    _answer_row(a, assignment, criteria) for a in revisions if not a.is_current
                ],
            }
        )
    return rows


def _checks(
    audit: CampaignAudit, item: CampaignItem, verdict: rule.PairVerdict
) -> list[explain.Check]:
    """The pair's conditions, from the answers the audit counted (read once for the page)."""
    counted = audit.counted
    counted = counted[counted["pair_id"] == item.pair_id].reset_index(drop=True)
    required = counted_required(audit.campaign, item)
    return explain.explain_pair(counted, required, audit.thresholds, verdict)


def counted_required(campaign: Campaign, item: CampaignItem) -> int:
    """The counted annotations the pair's verdict needs: k plus split-vote extras. Its
    replacement slots only make room for answers in place of those out of the audit."""
    return campaign.annotations_per_pair + item.extra_annotations


def answers_diff(chosen: str, rejected: str) -> dict[str, Any]:
    """The word-level difference between the chosen and the rejected answer, as the
    adjudication panel shows it (None as the HTML when the answers are too long to compare)."""
    segments = textdiff.word_diff(chosen, rejected)
    if segments is None:
        return {"html": None, "shared": None}
    # textdiff escapes every piece of text it writes.
    html = mark_safe(textdiff.diff_html(segments))  # noqa: S308
    return {"html": html, "shared": textdiff.shared_share(segments)}


def _neighbours(
    request: HttpRequest, campaign: Campaign, by_pair: dict[int, rule.PairVerdict], pair_id: int
) -> dict[str, int | None]:
    _, filters = _filters(request, campaign)
    ids = [row.verdict.pair_id for row in listing.select_rows(campaign, by_pair, filters)]
    if pair_id not in ids:
        return {"previous": None, "next": None, "position": None, "of": len(ids)}
    index = ids.index(pair_id)
    return {
        "previous": ids[index - 1] if index > 0 else None,
        "next": ids[index + 1] if index + 1 < len(ids) else None,
        "position": index + 1,
        "of": len(ids),
    }


@login_required
def campaign_pair(request: HttpRequest, campaign_id: int, pair_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    item = get_object_or_404(
        CampaignItem.objects.select_related("pair"), campaign=campaign, pair_id=pair_id
    )
    return _render_pair(request, campaign, item, AdjudicationForm())


def _render_pair(
    request: HttpRequest,
    campaign: Campaign,
    item: CampaignItem,
    form: AdjudicationForm,
    *,
    status: int = 200,
) -> HttpResponse:
    criteria = list(campaign.quality_criteria)
    audit = CampaignAudit(campaign, lengths=False)
    by_pair = audit.verdicts
    verdict = by_pair.get(item.pair_id)
    left_out = audit.left_out
    history = decisions.history(item)
    rows = annotation_rows(item, criteria, left_out)
    counted = sum(row["counted"] for row in rows)
    context = {
        "campaign": campaign,
        "item": item,
        "pair": item.pair,
        "criteria": criteria,
        "verdict": verdict,
        "checks": _checks(audit, item, verdict) if verdict else [],
        "annotations": rows,
        # One count everywhere on the page: counted annotations against what the verdict needs.
        "counted": counted,
        "left_out_answers": len(rows) - counted,
        "required": counted_required(campaign, item),
        "scores": PairScore.objects.filter(pair=item.pair, run__campaign=campaign)
        .select_related("run")
        .order_by("-run__created_at"),
        # Kept apart from the annotations above: a model annotator never counts in the verdict.
        "model_answers": ModelAnswer.objects.filter(pair=item.pair, run__campaign=campaign)
        .select_related("run")
        .order_by("run_id", "question", "chosen_position"),
        "history": history,
        "form": form,
        "diff": answers_diff(item.pair.chosen, item.pair.rejected) if verdict else None,
        "reason_labels": rule.ADJUDICATION_REASON_LABELS,
        "rule_steps": rule.RULE_STEPS,
        "thresholds": audit.thresholds,
        "query": _list_query(request),
        "neighbours": _neighbours(request, campaign, by_pair, item.pair_id),
    }
    return render(request, "prb_annotate/campaign_pair.html", context, status=status)


@manager_action
def campaign_pair_adjudicate(
    request: HttpRequest, campaign: Campaign, pair_id: int
) -> HttpResponse:
    item = get_object_or_404(
        CampaignItem.objects.select_related("pair"), campaign=campaign, pair_id=pair_id
    )
    form = AdjudicationForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            decisions.adjudicate(
                item,
                data["decision"],
                data["reason"],
                note=data["note"],
                by=cast(User, request.user),
            )
        except ValidationError as error:
            for field, problems in error.message_dict.items():
                form.add_error(field if field in form.fields else None, problems)
    if not form.is_valid():
        return _render_pair(request, campaign, item, form, status=400)
    messages.success(
        request,
        _("Pair %(external_id)s: %(data_decision)s.")
        % {"external_id": item.pair.external_id, "data_decision": data["decision"]},
    )
    url = reverse("campaign_pair", args=[campaign.pk, item.pair_id])
    query = _list_query(request)
    return redirect(f"{url}?{query}" if query else url)


@login_required
def campaign_adjudication_queue(request: HttpRequest, campaign_id: int) -> HttpResponse:
    campaign = managed_campaign_or_404(request.user, campaign_id)
    shown = request.GET.get("show") or "undecided"
    if shown not in decisions.QUEUE_LISTS:
        shown = "undecided"
    queue = decisions.queue_list(campaign_verdicts(campaign).values(), shown)
    # The pair page's previous / next then walk the same list.
    pair_query = {
        "undecided": "verdict=undecided&adjudicated=no",
        "all": "",
    }.get(shown, f"verdict={shown}")
    context = {
        "campaign": campaign,
        "queue": queue[:QUEUE_SHOWN],
        "total": len(queue),
        "shown": shown,
        "lists": decisions.QUEUE_LISTS,
        "pair_query": pair_query,
        "reason_labels": rule.ADJUDICATION_REASON_LABELS,
    }
    return render(request, "prb_annotate/adjudication_queue.html", context)


urlpatterns = [
    path("<row_id:campaign_id>/pairs/", campaign_pairs, name="campaign_pairs"),
    path("<row_id:campaign_id>/pairs/<row_id:pair_id>/", campaign_pair, name="campaign_pair"),
    path(
        "<row_id:campaign_id>/pairs/<row_id:pair_id>/adjudicate/",
        campaign_pair_adjudicate,
        name="campaign_pair_adjudicate",
    ),
    path(
        "<row_id:campaign_id>/adjudication/",
        campaign_adjudication_queue,
        name="campaign_adjudication_queue",
    ),
]
