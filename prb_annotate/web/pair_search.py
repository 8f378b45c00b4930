"""The pair search of a dataset's page and of ``GET /api/datasets/<id>/pairs/``: one category,
and a text found in the record id, the question or either answer."""

from django.db.models import Q, QuerySet

from prb_annotate.models import Pair


def matching_pairs(pairs: QuerySet[Pair], *, category: str = "", query: str = "") -> QuerySet[Pair]:
    """``pairs`` in ``category`` (any when empty) that contain ``query`` (any when empty)."""
    if category:
        pairs = pairs.filter(category=category)
    if query:
        pairs = pairs.filter(
            Q(external_id__icontains=query)
            | Q(question__icontains=query)
            | Q(chosen__icontains=query)
            | Q(rejected__icontains=query)
        )
    return pairs
