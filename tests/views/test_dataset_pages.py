"""Dataset browser: managers only, search and filter, and model text rendered inert."""

from django.test import Client
from django.urls import reverse

from prb_annotate.models import Dataset, Job, Pair
from tests.conftest import make_pairs


def test_it_redirects_anonymous_users_to_login(dataset: Dataset) -> None:
    for url in [reverse("dataset_list"), reverse("dataset_detail", args=[dataset.pk])]:
        response = Client().get(url)
        assert response.status_code == 302
        assert response["Location"].startswith(reverse("login"))


def test_it_hides_the_dataset_browser_from_annotators(dataset: Dataset, annotator, login) -> None:
    pair = dataset.pairs.first()
    assert pair is not None
    client = login(annotator)
    for url in [
        reverse("dataset_list"),
        reverse("dataset_detail", args=[dataset.pk]),
        reverse("pair_detail", args=[dataset.pk, pair.pk]),
    ]:
        assert client.get(url).status_code == 404


def test_it_lists_datasets_with_counts_per_category(dataset: Dataset, manager, login) -> None:
    make_pairs(Dataset.objects.create(name="other"), 3, category="Art")
    Pair.objects.filter(dataset=dataset, external_id__in=["p0000", "p0001"]).update(category="Art")
    client = login(manager)
    listing = client.get(reverse("dataset_list")).content.decode()
    assert "demo" in listing
    assert "other" in listing
    detail = client.get(reverse("dataset_detail", args=[dataset.pk]))
    counts = {row["category"]: row["count"] for row in detail.context["categories"]}
    assert counts == {"Art": 2, "Lifestyle": 10}


def test_it_searches_and_filters_pairs(dataset: Dataset, manager, login) -> None:
    Pair.objects.filter(external_id="p0003").update(question="Which tent for a rainy hike?")
    Pair.objects.filter(external_id="p0004").update(category="Art")
    client = login(manager)
    url = reverse("dataset_detail", args=[dataset.pk])
    found = [p.external_id for p in client.get(url, {"q": "rainy"}).context["page"]]
    assert found == ["p0003"]
    by_id = [p.external_id for p in client.get(url, {"q": "p0007"}).context["page"]]
    assert by_id == ["p0007"]
    art = [p.external_id for p in client.get(url, {"category": "Art"}).context["page"]]
    assert art == ["p0004"]
    for nul in ({"q": "rain\x00y"}, {"category": "A\x00rt"}):
        # Refused before the view (security/request_limits.py), on both databases alike.
        page = client.get(url, nul)
        assert page.status_code == 400
        assert b"NUL" in page.content


def test_it_renders_hostile_model_text_inert(dataset: Dataset, manager, login) -> None:
    pair = dataset.pairs.get(external_id="p0000")
    pair.chosen = "Hello <script>alert('x')</script> **bold**"
    pair.rejected = '<img src=x onerror="alert(1)"> [click](javascript:alert(1))'
    pair.save()
    html = login(manager).get(reverse("pair_detail", args=[dataset.pk, pair.pk])).content.decode()
    assert "<strong>bold</strong>" in html
    assert "<script>alert" not in html
    assert "<img" not in html
    assert 'href="javascript:' not in html
    assert "&lt;script&gt;" in html


def test_it_answers_404_for_ids_beyond_any_row(dataset: Dataset, manager, login) -> None:
    """An id too long for a 64-bit column is no URL here, not a database overflow."""
    client = login(manager)
    huge = "9" * 25
    assert client.get(f"/datasets/{huge}/").status_code == 404
    assert client.get(f"/c/{huge}/").status_code == 404
    assert client.get(f"/campaigns/{huge}/").status_code == 404


def test_the_datasets_page_links_the_imports_a_worker_runs(manager, login) -> None:
    """An upload too large for one request becomes a job without a campaign: its page was
    reachable only from the redirect after the upload."""
    client = login(manager)
    assert 'id="dataset-import-jobs"' not in client.get(reverse("dataset_list")).content.decode()
    job = Job.objects.create(kind="dataset", options={"name": "big.jsonl"}, started_by=manager)
    page = client.get(reverse("dataset_list")).content.decode()
    assert f'<a href="{reverse("dataset_job", args=[job.pk])}">#{job.pk}</a>' in page
    assert "big.jsonl" in page
    assert "python manage.py db_worker" in page
