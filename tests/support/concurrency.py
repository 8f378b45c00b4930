"""Threads against the real database: started together, each on a connection of its own, and
the invariants that concurrent annotators must leave intact."""

import threading
import traceback
from collections.abc import Callable

from django.db import connection
from django.db.models import Count, Q

from prb_annotate.models import Annotation, Assignment, Campaign, CampaignItem

K = 3


def run_threads(count: int, work: Callable[[int], None]) -> list[str]:
    """Run ``work(index)`` in ``count`` threads started together; the tracebacks they raised."""
    errors: list[str] = []
    start = threading.Barrier(count)

    def runner(index: int) -> None:
        try:
            start.wait()
            work(index)
        except Exception:
            errors.append(traceback.format_exc())
        finally:
            connection.close()  # this thread's own connection

    threads = [threading.Thread(target=runner, args=(index,)) for index in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def check_invariants(campaign: Campaign, accepted: dict[str, int]) -> None:
    regular = CampaignItem.objects.filter(campaign=campaign, kind=CampaignItem.Kind.REGULAR)
    counts = regular.annotate(
        submitted=Count("assignments", filter=Q(assignments__status="submitted"))
    ).values_list("submitted", flat=True)
    assert max(counts) <= K
    pairs = list(Assignment.objects.filter(campaign=campaign).values_list("item", "annotator"))
    assert len(pairs) == len(set(pairs))
    # Every accepted submit is stored exactly once, under the token that made it.
    stored = dict(
        Annotation.objects.filter(assignment__campaign=campaign).values_list("client_token", "pk")
    )
    assert stored == accepted
    submitted = Assignment.objects.filter(campaign=campaign, status="submitted")
    current = submitted.annotate(
        n=Count("annotations", filter=Q(annotations__is_current=True))
    ).values_list("n", flat=True)
    assert set(current) <= {1}
    assert not Annotation.objects.exclude(assignment__status="submitted").exists()
