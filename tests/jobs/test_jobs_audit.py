"""The audit of a campaign above ``PRB_BACKGROUND_AUDIT_PAIRS`` computed by a real worker: the
audit page offers the job instead of computing in the request, follows it, then shows the
worker's report (the same as the request would have computed) until the campaign changes; the
recompute button starts a job; the API starts one too (202). A smaller campaign's page computes
its audit in the request, as before."""

import json
import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from prb_annotate.audit.cache import campaign_audit_cached, forget_audits
from prb_annotate.formats.strictjson import dumps
from prb_annotate.models import Campaign, Dataset, Job
from tests.jobs.test_jobs_worker import WAIT_LIMIT_S, worker
from tests.support.audit import add_item

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def without_recompute_note(page: str) -> str:
    """The audit page less the line that says where its audit was computed and the forms'
    one-time tokens."""
    page = re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", page)
    return re.sub(r'<form[^>]*id="recompute".*?</form>', "", page, flags=re.S)


def run_worker(data_dir: Path) -> None:
    process = worker(data_dir, "--batch")
    _, stderr = process.communicate(timeout=WAIT_LIMIT_S)
    assert process.returncode == 0, stderr


def test_a_large_campaigns_audit_is_computed_by_a_worker(
    scored_campaign: Campaign, dataset: Dataset, manager: User, login, tmp_path: Path, settings
) -> None:
    campaign = scored_campaign
    client = login(manager)
    audit_url = f"/campaigns/{campaign.pk}/audit/"
    assert "Validated share" in client.get(audit_url).content.decode()  # 6 pairs: in the request
    settings.PRB_BACKGROUND_AUDIT_PAIRS = 5
    forget_audits(campaign)

    pending = client.get(audit_url).content.decode()
    assert "its audit is computed by a background worker" in pending
    assert 'id="audit-start"' in pending
    started = client.post(f"/campaigns/{campaign.pk}/jobs/start/", {"kind": "audit"})
    job = Job.objects.get()
    assert started.url == f"/campaigns/{campaign.pk}/jobs/{job.pk}/"
    following = client.get(audit_url).content.decode()
    assert f"#{job.pk}</a> is queued" in following
    assert 'id="audit-start"' not in following

    run_worker(tmp_path)
    job.refresh_from_db()
    assert (job.status, job.done, job.total) == ("done", 4, 4), job.log
    page = client.get(audit_url).content.decode()
    assert "by a background worker" in page
    assert "Validated share" in page
    # The worker's report is the one the request would have computed, and shown alike.
    download = b"".join(client.get(f"/api/jobs/{job.pk}/file/").streaming_content)
    forget_audits(campaign)
    computed = campaign_audit_cached(campaign, resamples=1000)
    assert json.loads(download) == json.loads(dumps(computed))
    settings.PRB_BACKGROUND_AUDIT_PAIRS = 20000
    in_the_request = client.get(audit_url).content.decode()
    assert without_recompute_note(page) == without_recompute_note(in_the_request)
    settings.PRB_BACKGROUND_AUDIT_PAIRS = 5

    # A change the audit reads: the worker's report is out of date, the page offers a new one.
    add_item(campaign, dataset.pairs.order_by("external_id")[7])
    assert 'id="audit-start"' in client.get(audit_url).content.decode()
    recompute = client.post(f"/campaigns/{campaign.pk}/audit/recompute/")
    newer = Job.objects.exclude(pk=job.pk).get()
    assert (newer.kind, newer.status) == ("audit", "queued")
    assert recompute.url == f"/campaigns/{campaign.pk}/jobs/{newer.pk}/"


def test_the_api_starts_an_audit_job_and_checks_its_options(
    scored_campaign: Campaign, manager: User, login
) -> None:
    client = login(manager)
    url = f"/api/campaigns/{scored_campaign.pk}/jobs/"
    for options, words in (({"resamples": "many"}, "resamples"), ({"seed": 1}, "seed")):
        refused = client.post(
            url, {"kind": "audit", "options": options}, content_type="application/json"
        )
        assert refused.status_code == 400
        assert words in refused.json()["errors"]["options"][0]
    started = client.post(
        url, {"kind": "audit", "options": {"resamples": 200}}, content_type="application/json"
    )
    assert started.status_code == 202
    assert started["Location"].endswith(f"/api/jobs/{started.json()['id']}/")
