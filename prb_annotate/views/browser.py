"""Dataset browser for managers: datasets, their pairs, one pair in full."""

from django.core.paginator import Paginator
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import path

from prb_annotate.campaigns.model_annotator import answers_beside_humans
from prb_annotate.jobs.running import recover_stale_jobs, worker_command
from prb_annotate.models import Dataset, Job, Pair
from prb_annotate.security.access import staff_required
from prb_annotate.web.pair_search import matching_pairs

PAIRS_PER_PAGE = 50
RECENT_IMPORTS = 20


@staff_required
def dataset_list(request: HttpRequest) -> HttpResponse:
    datasets = Dataset.objects.annotate(pair_count=Count("pairs")).order_by("name")
    recover_stale_jobs()
    # Large uploads are imported by a worker: their jobs (no campaign) are reached from here.
    imports = Job.objects.filter(campaign__isnull=True).order_by("-created_at")[:RECENT_IMPORTS]
    context = {"datasets": datasets, "imports": imports, "worker_command": worker_command()}
    return render(request, "prb_annotate/dataset_list.html", context)


@staff_required
def dataset_detail(request: HttpRequest, dataset_id: int) -> HttpResponse:
    dataset = get_object_or_404(Dataset, pk=dataset_id)
    categories = dataset.pairs.values("category").annotate(count=Count("id")).order_by("category")
    pairs = dataset.pairs.only("id", "external_id", "category", "question").order_by("external_id")
    category = request.GET.get("category", "")
    query = request.GET.get("q", "").strip()
    pairs = matching_pairs(pairs, category=category, query=query)
    page = Paginator(pairs, PAIRS_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "dataset": dataset,
        "categories": categories,
        "page": page,
        "category": category,
        "query": query,
        "total": sum(row["count"] for row in categories),
    }
    return render(request, "prb_annotate/dataset_detail.html", context)


@staff_required
def pair_detail(request: HttpRequest, dataset_id: int, pair_id: int) -> HttpResponse:
    pair = get_object_or_404(
        Pair.objects.select_related("dataset"), pk=pair_id, dataset_id=dataset_id
    )
    # Staff manage every campaign: each one holding the pair links to its audit of it.
    campaign_items = pair.campaign_items.select_related("campaign").order_by("campaign__name")
    context = {
        "pair": pair,
        "campaign_items": campaign_items,
        "answers_by_campaign": answers_beside_humans(pair),
    }
    return render(request, "prb_annotate/pair_detail.html", context)


urlpatterns = [
    path("", dataset_list, name="dataset_list"),
    path("<row_id:dataset_id>/", dataset_detail, name="dataset_detail"),
    path("<row_id:dataset_id>/pairs/<row_id:pair_id>/", pair_detail, name="pair_detail"),
]
