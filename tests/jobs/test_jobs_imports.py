"""Answer and dataset files above ``PRB_BACKGROUND_IMPORT_BYTES`` imported by a real worker: from
the pages (redirected to the job's page) and the API (202 with the job's URL), all or nothing as
in the request (a bad row fails the job naming its line and field, and nothing is written), the
kept upload removed once the import is over; a cancelled one never runs; a smaller file is
still imported in the request. A dataset import's job has no campaign: staff alone see it."""

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile

from fixtures.make_synthetic import write_synthetic
from prb_annotate.models import Annotation, Campaign, Dataset, Job
from tests.external.test_files import external_campaign, good_row
from tests.jobs.test_jobs_worker import WAIT_LIMIT_S, worker

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

THRESHOLD = 1000  # bytes: the many-row files are above it, a one-row file below


@pytest.fixture
def background(settings, tmp_path: Path) -> Path:
    """Imports above THRESHOLD go to the worker, which shares this test's job folder."""
    settings.PRB_BACKGROUND_IMPORT_BYTES = THRESHOLD
    settings.PRB_JOB_DIR = tmp_path / "jobs"
    return tmp_path


def run_worker(data_dir: Path) -> None:
    process = worker(data_dir, "--batch")
    _, stderr = process.communicate(timeout=WAIT_LIMIT_S)
    assert process.returncode == 0, stderr


def kept_uploads(data_dir: Path) -> list[Path]:
    folder = data_dir / "jobs" / "uploads"
    return sorted(path for path in folder.rglob("*") if path.is_file()) if folder.exists() else []


def answers_csv(rows: list[dict[str, Any]]) -> SimpleUploadedFile:
    return SimpleUploadedFile("answers.csv", pd.DataFrame(rows).to_csv(index=False).encode())


@pytest.fixture
def external(dataset: Dataset, manager: User) -> Campaign:
    return external_campaign(dataset, manager)


def test_a_large_answer_file_is_imported_by_a_worker(
    background: Path, external: Campaign, manager: User, login
) -> None:
    client = login(manager)
    pairs = sorted(external.items.values_list("pair__external_id", flat=True))
    rows = [good_row(pair, rater) for pair in pairs for rater in ("r1", "r2")]
    upload = answers_csv(rows)
    assert (upload.size or 0) > THRESHOLD
    page = client.post(f"/campaigns/{external.pk}/answers/import/", {"file": upload})
    job = Job.objects.get()
    assert page.url == f"/campaigns/{external.pk}/jobs/{job.pk}/"
    assert (job.kind, job.status, job.options["name"]) == ("answers", "queued", "answers.csv")
    assert len(kept_uploads(background)) == 1
    assert not Annotation.objects.exists()

    # A bad row in another large file: its job fails naming the line and field.
    bad = [good_row(pair, rater) for pair in pairs for rater in ("r3", "r4")]
    bad[4]["confidence"] = "sure"
    url = f"/api/campaigns/{external.pk}/answers/import/"
    accepted = client.post(url, {"file": answers_csv(bad)})
    assert accepted.status_code == 202, accepted.content
    failing = accepted.json()
    assert accepted["Location"] == failing["url"]

    run_worker(background)
    job.refresh_from_db()
    assert (job.status, job.done, job.total) == ("done", 3, 3), job.log
    assert f"read {len(rows)} answers; writing them" in job.log
    assert Annotation.objects.count() == len(rows)
    result = client.get(f"/campaigns/{external.pk}/jobs/{job.pk}/file/")
    assert b'"answers": 24' in b"".join(result.streaming_content)
    failed = client.get(failing["url"]).json()
    assert failed["status"] == "failed"
    assert 'answers.csv line 6, field "confidence"' in failed["error"]
    assert Annotation.objects.count() == len(rows)  # nothing of the bad file
    assert kept_uploads(background) == []

    # A small file is imported in the request, as before.
    small = client.post(url, {"file": answers_csv([good_row(pairs[0], "r5")])})
    assert small.status_code == 201, small.content
    assert Job.objects.count() == 2


def test_a_large_dataset_file_is_imported_by_a_worker(
    background: Path, manager: User, annotator: User, login
) -> None:
    staff = login(manager)
    data = background / "big.jsonl"
    write_synthetic(30, data)
    with data.open("rb") as stream:
        accepted = staff.post("/api/datasets/", {"file": stream, "name": "big"})
    assert accepted.status_code == 202, accepted.content
    job = accepted.json()
    assert (job["kind"], job["campaign"]) == ("dataset", None)
    assert login(annotator).get(job["url"]).status_code == 404  # staff alone

    # The same file from the datasets page, then cancelled from its job's page.
    with data.open("rb") as stream:
        page = staff.post("/datasets/upload/", {"file": stream, "name": "cancelled"})
    second = Job.objects.exclude(pk=job["id"]).get()
    assert page.url == f"/datasets/jobs/{second.pk}/"
    assert f"Job {second.pk}: dataset" in staff.get(page.url).content.decode()
    assert staff.post(f"/datasets/jobs/{second.pk}/cancel/").status_code == 302
    assert login(annotator).get(page.url).status_code == 404

    run_worker(background)
    done = staff.get(job["url"]).json()
    assert (done["status"], done["done"], done["total"]) == ("done", 2, 2), done
    assert Dataset.objects.get(name="big").pairs.count() == 30
    assert not Dataset.objects.filter(name="cancelled").exists()
    report = b"".join(staff.get(done["file"]).streaming_content)
    assert b'"created": 30' in report
    assert staff.post(f"/datasets/jobs/{second.pk}/remove/").url == "/datasets/"
    assert kept_uploads(background) == []
