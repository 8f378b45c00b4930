"""Background jobs from the pages: the export page, the audit page's paper link and the
evaluations page start them; a job's page shows progress and log, reloads while the job works,
and, once a real worker has run it, gives its file."""

from pathlib import Path

import pytest
from django.contrib.auth.models import User

from prb_annotate.models import Job
from tests.conftest import make_user
from tests.jobs.test_jobs_worker import WAIT_LIMIT_S, campaign_of, worker


@pytest.mark.django_db
def test_it_starts_jobs_from_the_pages_for_managers_only(login, outsider: User) -> None:
    lead = make_user("lead")
    campaign = campaign_of(lead, 3)
    client = login(lead)
    for page, marker in (("export/", "export-background"), ("audit/", "paper-background")):
        assert marker in client.get(f"/campaigns/{campaign.pk}/{page}").content.decode()
    evaluations = client.get(f"/campaigns/{campaign.pk}/evaluations/").content.decode()
    assert 'value="builtin:length"' in evaluations

    start = f"/campaigns/{campaign.pk}/jobs/start/"
    assert login(outsider).post(start, {"kind": "export"}).status_code == 404
    response = client.post(start, {"kind": "export", "subset": "all", "format": "csv"})
    job = Job.objects.get()
    assert response.url == f"/campaigns/{campaign.pk}/jobs/{job.pk}/"
    assert job.options == {"subset": "all", "fmt": "csv", "with_validation": False}
    page = client.get(response.url).content.decode()
    assert "queued" in page
    assert 'http-equiv="refresh"' in page
    assert login(outsider).get(response.url).status_code == 404

    refused = client.post(start, {"kind": "score", "model": "/etc"}, follow=True)
    assert "no baseline and no model folder" in refused.content.decode()
    client.post(start, {"kind": "score", "model": "builtin:length"})
    busy = client.post(start, {"kind": "score", "model": "builtin:random"}, follow=True)
    assert "one score job runs at a time" in busy.content.decode()
    assert Job.objects.filter(kind="score").count() == 1


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_it_gives_the_paper_zip_a_worker_made_from_the_page(login, tmp_path: Path) -> None:
    lead = make_user("lead")
    campaign = campaign_of(lead, 4)
    client = login(lead)
    response = client.post(f"/campaigns/{campaign.pk}/jobs/start/", {"kind": "paper"})

    process = worker(tmp_path, "--batch")
    _, stderr = process.communicate(timeout=WAIT_LIMIT_S)
    assert process.returncode == 0, stderr

    page = client.get(response.url).content.decode()
    assert "done" in page
    assert 'http-equiv="refresh"' not in page
    assert "2 of 2 steps done" in page
    download = client.get(f"{response.url}file/")
    assert b"".join(download.streaming_content)[:2] == b"PK"
    client.post(f"{response.url}remove/")
    assert not Job.objects.exists()
    assert client.get(response.url).status_code == 404
