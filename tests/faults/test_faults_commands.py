"""Commands stopped halfway, and disks that fill up.

Each command runs as a real process (``manage.py`` or ``python -m evaluation``) on the test's
database and is killed with SIGKILL, by its pid, while it works: an import leaves the database as
it was, an export leaves the previous export and no partial folder, an evaluation stores no run;
the same command then succeeds. An export or a scoring run onto a nearly full file system (a
small tmpfs, or a file-size limit where mounting is not allowed) fails with one line naming the
target and leaves nothing behind.
"""

import contextlib
import hashlib
import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection

from fixtures.make_synthetic import write_synthetic
from prb_annotate.models import CampaignItem, Dataset, EvaluationRun, Pair, PairScore
from tests.conftest import make_pairs
from tests.support import tiny
from tests.support.audit import add_item, make_campaign

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
POLL_S = 0.01
WAIT_LIMIT_S = 120


PAIRS_KILLED_IN_IMPORT = 15_000


def database_url() -> str:
    """The test database, for a command run as a process of its own."""
    settings = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{settings['NAME']}"
    password = f":{settings['PASSWORD']}" if settings["PASSWORD"] else ""
    return (
        f"postgres://{settings['USER']}{password}@{settings['HOST']}:{settings['PORT']}"
        f"/{settings['NAME']}"
    )


def start(*args: str, **options: object) -> subprocess.Popen[str]:
    env = dict(os.environ, DATABASE_URL=database_url())
    return subprocess.Popen(
        [sys.executable, *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **options,  # type: ignore[call-overload]
    )


def run(*args: str, **options: object) -> subprocess.CompletedProcess[str]:
    process = start(*args, **options)
    stdout, stderr = process.communicate(timeout=WAIT_LIMIT_S)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def kill_when(
    process: subprocess.Popen[str], ready: Callable[[], bool], after_s: float = 0
) -> None:
    """SIGKILL ``process`` (by its pid) once ``ready()`` holds and ``after_s`` more seconds have
    passed; it must still be working then, or the test proves nothing."""
    deadline = time.monotonic() + WAIT_LIMIT_S
    while not ready():
        assert process.poll() is None, f"finished before it could be stopped: {process.stderr}"
        assert time.monotonic() < deadline, "never reached the point to stop it"
        time.sleep(POLL_S)
    time.sleep(after_s)
    assert process.poll() is None, "finished before it could be stopped"
    os.kill(process.pid, signal.SIGKILL)
    process.communicate(timeout=WAIT_LIMIT_S)
    assert process.returncode == -signal.SIGKILL


def writing_to_database() -> bool:
    """Another connection holds an open transaction that has written (PostgreSQL) or holds
    the write lock (SQLite)."""
    if connection.vendor == "sqlite":
        probe = sqlite3.connect(connection.settings_dict["NAME"], timeout=0, isolation_level=None)
        try:
            probe.execute("BEGIN IMMEDIATE")
            probe.execute("ROLLBACK")
            return False
        except sqlite3.OperationalError:
            return True
        finally:
            probe.close()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND backend_xid IS NOT NULL AND pid <> pg_backend_pid()"
        )
        return bool(cursor.fetchone()[0])


def folder_digest(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


# --- commands stopped halfway -----------------------------------------------------------------


def test_it_leaves_the_database_as_it_was_when_an_import_is_killed(tmp_path: Path) -> None:
    data = tmp_path / "pairs.jsonl"
    # Large enough that the import's one transaction is still open 0.3 s after it began writing,
    # however fast the machine.
    write_synthetic(PAIRS_KILLED_IN_IMPORT, data, seed=3)
    kept = Dataset.objects.create(name="kept", source="tests")
    make_pairs(kept, 5)
    command = ("manage.py", "import_pairs", str(data), "--dataset", "big")

    kill_when(start(*command), writing_to_database, after_s=0.3)

    assert not Dataset.objects.filter(name="big").exists()
    assert Pair.objects.count() == 5
    again = run(*command)
    assert again.returncode == 0, again.stderr
    assert Pair.objects.filter(dataset__name="big").count() == PAIRS_KILLED_IN_IMPORT


def campaign_with_pairs(count: int) -> int:
    """A campaign over ``count`` new pairs, none annotated yet (all exported as undecided)."""
    dataset = Dataset.objects.create(name=f"export{count}", source="tests")
    campaign = make_campaign(dataset)
    CampaignItem.objects.bulk_create(
        CampaignItem(campaign=campaign, pair=pair, order_key=index)
        for index, pair in enumerate(make_pairs(dataset, count))
    )
    return int(campaign.pk)


def export_now(campaign: int, out: Path) -> None:
    call_command("export_split", campaign=campaign, subset="all", out=out, stdout=StringIO())


def export_command(campaign: int, out: Path, *more: str) -> tuple[str, ...]:
    return (
        "manage.py", "export_split", "--campaign", str(campaign), "--subset", "all",
        "--workers", "1", "--out", str(out), *more,
    )  # fmt: skip


def abandoned(out: Path) -> list[Path]:
    return [path for path in out.parent.iterdir() if path.name.startswith(f".{out.name}.")]


def test_it_keeps_the_previous_export_when_an_export_is_killed(tmp_path: Path) -> None:
    campaign = campaign_with_pairs(3000)
    out = tmp_path / "export"
    export_now(campaign, out)
    previous = folder_digest(out)
    command = export_command(campaign, out, "--overwrite")

    kill_when(start(*command), lambda: any(path.iterdir() for path in abandoned(out)))

    assert folder_digest(out) == previous
    again = run(*command)
    assert again.returncode == 0, again.stderr
    assert json.loads((out / "manifest.json").read_text())["counts"]["exported_pairs"] == 3000
    assert abandoned(out) == []  # what the killed export left is cleared


def test_it_puts_back_an_export_moved_aside_by_a_killed_replacement(tmp_path: Path) -> None:
    """Where the file system cannot swap two folders, the old export is renamed aside before
    the new one moves in: stopped between the two, the next export puts it back first."""
    campaign = campaign_with_pairs(3)
    out = tmp_path / "export"
    export_now(campaign, out)
    previous = folder_digest(out)
    gone = start("-c", "pass")
    gone.communicate()
    out.rename(tmp_path / f".export.old-{gone.pid}-0123456789ab")

    refused = run(*export_command(campaign, out))

    assert refused.returncode != 0
    assert "already exists" in refused.stderr
    assert folder_digest(out) == previous
    assert abandoned(out) == []


def test_it_stores_no_run_when_an_evaluation_is_killed(tmp_path: Path, dataset: Dataset) -> None:
    tokenizer = tiny.make_tokenizer(pad_is_eos=True, template=tiny.EOS_TEMPLATE)
    model = tiny.save(tiny.feature_reward_model(tokenizer), tokenizer, tmp_path / "rm")
    campaign = make_campaign(dataset)
    for pair in dataset.pairs.all():
        add_item(campaign, pair)
    command = ("manage.py", "evaluate", "--campaign", str(campaign.pk), "--model", str(model))
    process = start(*command)

    kill_when(process, lambda: has_loaded(process.pid, "libtorch"))

    assert not EvaluationRun.objects.exists()
    assert not PairScore.objects.exists()
    again = run(*command)
    assert again.returncode == 0, again.stderr
    assert EvaluationRun.objects.count() == 1
    assert PairScore.objects.count() == dataset.pairs.count()


def has_loaded(pid: int, library: str) -> bool:
    with contextlib.suppress(OSError):
        return library in Path(f"/proc/{pid}/maps").read_text()
    return False


# --- full disks -------------------------------------------------------------------------------


@pytest.fixture
def nearly_full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 1 MiB tmpfs with all but 16 KiB taken by a filler file."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)],
        capture_output=True,
        text=True,
        check=False,
    )
    if mounted.returncode != 0:
        pytest.skip(
            f"cannot mount a small tmpfs here ({mounted.stderr.strip()}); "
            "the file-size limit test covers a write that fails"
        )
    try:
        space = os.statvfs(disk)
        (disk / "filler").write_bytes(b"\0" * (space.f_bavail * space.f_frsize - 16 * 1024))
        yield disk
    finally:
        subprocess.run(["umount", str(disk)], check=True)


def stderr_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    return [line for line in lines if "staticfiles" not in line and "mw_instance" not in line]


def test_it_fails_an_export_onto_a_full_disk_in_one_line(nearly_full_disk: Path) -> None:
    campaign = campaign_with_pairs(300)
    out = nearly_full_disk / "export"

    result = run(*export_command(campaign, out))

    assert result.returncode != 0
    assert stderr_lines(result) == [
        f"CommandError: Cannot write the export to {out}: No space left on device."
    ]
    assert sorted(path.name for path in nearly_full_disk.iterdir()) == ["filler"]


def limit_file_size() -> None:
    """In the child: files may not grow beyond 256 KiB (a write past it fails with EFBIG)."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (256 * 1024, 256 * 1024))


def test_it_fails_an_export_past_a_file_size_limit_in_one_line(tmp_path: Path) -> None:
    """Where no tmpfs can be mounted, the same failure comes from a limit on file size."""
    campaign = campaign_with_pairs(3000)
    out = tmp_path / "export"

    result = run(*export_command(campaign, out), preexec_fn=limit_file_size)

    assert result.returncode != 0
    assert stderr_lines(result) == [
        f"CommandError: Cannot write the export to {out}: File too large."
    ]
    assert list(tmp_path.iterdir()) == []


def test_it_fails_a_scoring_run_onto_a_full_disk_in_one_line(
    tmp_path: Path, nearly_full_disk: Path
) -> None:
    tokenizer = tiny.make_tokenizer(pad_is_eos=True, template=tiny.EOS_TEMPLATE)
    model = tiny.save(tiny.feature_reward_model(tokenizer), tokenizer, tmp_path / "rm")
    data = tmp_path / "split.jsonl"
    records = [
        {"id": f"p{index}", "question": " ".join(tiny.PLAIN[:8]) * 20,
         "chosen": " ".join(tiny.MARKERS[:6]), "rejected": " ".join(tiny.PLAIN[:6])}
        for index in range(200)
    ]  # fmt: skip
    data.write_text("".join(json.dumps(record) + "\n" for record in records))
    out = nearly_full_disk / "run"

    result = run(
        "-m", "evaluation", "score", "--data", str(data), "--model", str(model),
        "--out", str(out), "--no-progress",
    )  # fmt: skip

    assert result.returncode != 0
    # The model loader's progress bars come first; then the one line, and no traceback.
    assert stderr_lines(result)[-1] == (
        f"error: cannot write the scores to {out}: No space left on device"
    )
    assert "Traceback" not in result.stderr
    assert sorted(path.name for path in nearly_full_disk.iterdir()) == ["filler"]


def test_it_answers_a_full_disk_on_the_web_and_api_export_without_a_500(
    nearly_full_disk: Path, manager, login, monkeypatch
) -> None:
    """The zip download builds the export in the server's temporary space: full, it is a 503
    with one line saying why, on the page and in the API's error format."""
    from django.test import Client
    from rest_framework.authtoken.models import Token

    campaign = campaign_with_pairs(300)
    monkeypatch.setattr("tempfile.tempdir", str(nearly_full_disk))
    query = "?subset=all&format=jsonl"

    page = login(manager).get(f"/campaigns/{campaign}/export/{query}")
    assert page.status_code == 503
    assert "No space left on device" in page.content.decode()

    token = Token.objects.create(user=manager)
    api = Client(HTTP_AUTHORIZATION=f"Token {token.key}").get(
        f"/api/campaigns/{campaign}/export/{query}"
    )
    assert api.status_code == 503
    assert api.json()["detail"].startswith("Cannot write the export's zip on the server")
    assert api.json()["errors"] == {}
    assert sorted(path.name for path in nearly_full_disk.iterdir()) == ["filler"]
