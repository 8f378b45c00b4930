"""A campaign's audit is read once per request and handed to every reader.

Counted with Django's CaptureQueriesContext: a query *reads the answers* when it selects what
an annotator answered (the rubric-fit column); the change stamp's counts of rows do not.
Every reader added to a request (the gold-accuracy and position-bias exclusions, more export
formats, the long table, the report) must take the answers from the one read.
"""

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from prb_annotate.audit import quality
from prb_annotate.audit.cache import forget_audits
from prb_annotate.audit.campaign_audit import CampaignAudit
from prb_annotate.audit.exclusions import (
    frame_position_counts,
    left_out_annotators,
    left_out_from_frames,
    position_counts,
)
from prb_annotate.exports.export import export_split
from prb_annotate.exports.long_table import long_table
from prb_annotate.models import AnnotatorExclusion, Campaign, CampaignItem, Dataset
from tests.support.audit import add_item, annotate, make_campaign
from tests.support.audit import annotators as make_annotators
from tests.support.exports import annotated_campaign, import_dataset

ANSWERS = '"prb_annotate_annotation"."rubric_fit"'
# The tables a campaign's audit rests on besides the items.
AUDIT_TABLES = (
    '"prb_annotate_annotation"',
    '"prb_annotate_adjudication"',
    '"prb_annotate_annotatorexclusion"',
)


def answer_reads(captured: CaptureQueriesContext) -> int:
    return sum(ANSWERS in query["sql"] for query in captured.captured_queries)


def audit_reads(captured: CaptureQueriesContext) -> list[str]:
    """The queries of the audit's own tables (answers, adjudications, exclusions), with
    PostgreSQL's cursor names, new for every cursor, left out."""
    return [
        re.sub(r"_django_curs_\w+", "cursor", query["sql"])
        for query in captured.captured_queries
        if any(table in query["sql"] for table in AUDIT_TABLES)
    ]


def queries_of(call: Callable[[], object]) -> CaptureQueriesContext:
    with CaptureQueriesContext(connection) as captured:
        call()
    return captured


@pytest.fixture
def campaign(db: None) -> Campaign:
    """The export tests' campaign: three annotators, a gold item, validated, excluded and
    undecided pairs."""
    users = [User.objects.create(username=name) for name in ("alice", "bob", "carol")]
    return annotated_campaign(import_dataset(), users)


@pytest.fixture
def manager_client(campaign: Campaign) -> Client:
    manager = User.objects.create(username="boss", is_staff=True)
    client = Client()
    client.force_login(manager)
    return client


def with_every_exclusion(campaign: Campaign) -> Campaign:
    """The gold-accuracy and position-bias tests switched on: two more readers of the
    answers, which leave nobody out here (so no replacement slot is written)."""
    Campaign.objects.filter(pk=campaign.pk).update(min_gold_accuracy=0.0, position_bias_max_p=1e-9)
    campaign.refresh_from_db()
    return campaign


def get(client: Client, url: str) -> int:
    response = client.get(url)
    if hasattr(response, "streaming_content"):
        b"".join(response.streaming_content)
    return response.status_code


def test_it_finds_the_same_annotators_left_out_from_the_frames_as_from_the_database(
    dataset: Dataset,
) -> None:
    campaign = make_campaign(
        dataset, annotations_per_pair=2, min_gold_accuracy=0.75, position_bias_max_p=0.01, seed=1
    )
    biased, wrong_on_gold, fair, excluded = make_annotators(4)
    pairs = list(dataset.pairs.order_by("external_id"))
    gold = add_item(
        campaign, pairs[0], kind=CampaignItem.Kind.GOLD, gold_answers={"rubric_fit": "chosen"}
    )
    annotate(gold, biased)
    annotate(gold, wrong_on_gold, fit="rejected")
    annotate(gold, fair)
    for index, pair in enumerate(pairs[1:]):
        item = add_item(campaign, pair)
        # "A" every time for the first: 11 of 11, p = 2 / 2048.
        annotate(item, biased, position="A")
        annotate(item, wrong_on_gold, position="AB"[index % 2])
        annotate(item, fair, position="BA"[index % 2])
        annotate(item, excluded, position="AB"[index % 2])
    AnnotatorExclusion.objects.create(campaign=campaign, annotator=excluded, reason="bot")

    audit = CampaignAudit(campaign, lengths=False)
    from_frames = left_out_from_frames(campaign, audit.answers, audit.items)

    assert from_frames == left_out_annotators(campaign)
    assert from_frames == {
        biased.username: quality.POSITION_BIAS,
        wrong_on_gold.username: quality.LOW_GOLD_ACCURACY,
        excluded.username: quality.MANAGER_EXCLUDED,
    }
    assert audit.left_out == from_frames
    assert CampaignAudit(campaign, lengths=False, sliced=True).left_out == from_frames


def test_it_counts_the_positions_named_alike_in_the_database_and_in_the_frames(
    dataset: Dataset,
) -> None:
    """An answer names A when it says the answer shown at A fits: the chosen one shown at A,
    or the rejected one with the chosen shown at B. Ties and gold items name neither."""
    campaign = make_campaign(dataset, annotations_per_pair=2, seed=1)
    first, second = make_annotators(2)
    pairs = list(dataset.pairs.order_by("external_id"))
    gold = add_item(
        campaign, pairs[0], kind=CampaignItem.Kind.GOLD, gold_answers={"rubric_fit": "chosen"}
    )
    annotate(gold, first, position="A")
    answers = [("chosen", "A"), ("rejected", "B"), ("rejected", "A"), ("tie", "A")]
    for pair, (fit, shown) in zip(pairs[1:], answers, strict=False):
        item = add_item(campaign, pair)
        annotate(item, first, fit=fit, position=shown)
        annotate(item, second, fit="chosen", position="B")

    frame = CampaignAudit(campaign, lengths=False).answers

    assert position_counts(campaign) == {first.username: (2, 1), second.username: (0, 4)}
    assert frame_position_counts(frame) == position_counts(campaign)


def test_an_export_request_reads_the_answers_once_however_many_readers(
    campaign: Campaign, manager_client: Client
) -> None:
    url = reverse("api_campaign_export", args=[campaign.pk]) + "?subset=all&format=jsonl"
    # On PostgreSQL the first export analyzes the tables never analyzed, once.
    get(manager_client, url)
    one_reader = queries_of(lambda: get(manager_client, url))
    # The exclusions read the answers too, and the subset writes every file.
    with_every_exclusion(campaign)
    readers = queries_of(lambda: get(manager_client, url))

    assert answer_reads(one_reader) == 1
    assert answer_reads(readers) == 1
    assert len(readers) == len(one_reader)


def test_the_audit_page_reads_the_answers_once_however_many_readers(
    campaign: Campaign, manager_client: Client
) -> None:
    url = reverse("campaign_audit", args=[campaign.pk]) + "?resamples=10"

    def cold_page() -> None:
        forget_audits(campaign)
        get(manager_client, url)

    one_reader = queries_of(cold_page)
    # Now the gold-accuracy and position-bias tests read the answers as well.
    with_every_exclusion(campaign)
    readers = queries_of(cold_page)

    assert answer_reads(one_reader) == 1
    assert answer_reads(readers) == 1
    assert len(readers) == len(one_reader)


def test_one_audit_serves_the_long_table_every_export_and_the_report(
    campaign: Campaign, tmp_path: Path
) -> None:
    with_every_exclusion(campaign)
    one = CampaignAudit(campaign)
    one_reader = queries_of(
        lambda: export_split(campaign, tmp_path / "one", subset="all", audit=one)
    )

    shared = CampaignAudit(campaign)

    def every_reader() -> None:
        long_table(campaign, audit=shared)
        for fmt, subset in (("jsonl", "validated"), ("parquet", "excluded"), ("csv", "all")):
            export_split(campaign, tmp_path / fmt, subset=subset, fmt=fmt, audit=shared)
        shared.report(resamples=10)

    readers = queries_of(every_reader)

    assert answer_reads(one_reader) == answer_reads(readers) == 1
    # The answers, the adjudications and the exclusions: read once for all the readers.
    assert audit_reads(readers) == audit_reads(one_reader)
    assert long_table(campaign, audit=shared).equals(long_table(campaign))


def test_the_command_export_reads_each_slice_of_answers_once(
    campaign: Campaign, tmp_path: Path
) -> None:
    """Without an audit held by the caller the slices read their own answers: the same
    files, and no slice's answers are read twice (one slice here, one read, besides the
    exclusions' own small reads)."""
    with_every_exclusion(campaign)
    sliced = queries_of(lambda: export_split(campaign, tmp_path / "sliced", subset="all"))
    whole = queries_of(
        lambda: export_split(
            campaign, tmp_path / "whole", subset="all", audit=CampaignAudit(campaign, lengths=False)
        )
    )

    # The gold items' answers, the answers' positions counted, the one slice.
    assert answer_reads(sliced) == 3
    assert answer_reads(whole) == 1
    for path in sorted((tmp_path / "whole").rglob("*")):
        if path.is_file():
            assert (
                path.read_bytes()
                == (tmp_path / "sliced" / path.relative_to(tmp_path / "whole")).read_bytes()
            ), path.name


def test_the_dashboard_reads_the_answers_once_for_its_figures_and_the_exclusions(
    campaign: Campaign, manager_client: Client
) -> None:
    url = reverse("campaign_detail", args=[campaign.pk])

    def cold_page() -> None:
        forget_audits(campaign)
        get(manager_client, url)

    one_reader = queries_of(cold_page)
    with_every_exclusion(campaign)
    readers = queries_of(cold_page)

    assert answer_reads(readers) == answer_reads(one_reader)
    assert len(readers) == len(one_reader)
