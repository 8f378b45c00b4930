"""Links that commands print use the address the site is served at: ``PRB_SITE_URL``, else the
address ``make demo PORT=...`` set the demo up for, so a newcomer's printed links connect."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import override_settings

from prb_annotate import settings as project_settings
from prb_annotate.management.commands.demo_setup import record_site_url

ROOT = Path(__file__).resolve().parents[2]


def manage(data_dir: Path, *arguments: str, **env: str) -> str:
    environment = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    environment.pop("PYTEST_VERSION", None)
    environment.update(PRB_DATA_DIR=str(data_dir), **env)
    result = subprocess.run(
        [sys.executable, "manage.py", *arguments],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


def test_it_reads_the_site_address_from_the_environment_then_the_demo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("PRB_SITE_URL", raising=False)
    assert project_settings.site_url(tmp_path) == "http://127.0.0.1:8000"
    with override_settings(DATA_DIR=tmp_path):
        record_site_url("http://127.0.0.1:8123")
    assert project_settings.site_url(tmp_path) == "http://127.0.0.1:8123"
    monkeypatch.setenv("PRB_SITE_URL", "https://annotate.example.org/")
    assert project_settings.site_url(tmp_path) == "https://annotate.example.org"


@pytest.mark.slow
def test_commands_print_links_on_the_port_the_demo_serves(tmp_path: Path) -> None:
    """As after ``make demo PORT=8123``: create_campaign and add_annotators print links on
    8123, and ``--base-url`` still wins."""
    with override_settings(DATA_DIR=tmp_path):
        record_site_url("http://127.0.0.1:8123")
    manage(tmp_path, "migrate", "--noinput")
    manage(tmp_path, "import_pairs", "fixtures/prb_demo.jsonl", "--dataset", "mine")
    created = manage(tmp_path, "create_campaign", "--dataset", "mine", "--name", "pilot")
    assert "study link (Prolific): http://127.0.0.1:8123/join/" in created
    assert "sign-up invite: http://127.0.0.1:8123/signup/" in created
    added = manage(tmp_path, "add_annotators", "--campaign", "1", "dave")
    assert "http://127.0.0.1:8123/" in added
    assert ":8000" not in created + added
    elsewhere = manage(
        tmp_path, "create_campaign", "--dataset", "mine", "--name", "two", "--base-url",
        "https://annotate.example.org",
    )  # fmt: skip
    assert "https://annotate.example.org/join/" in elsewhere
    from_env = manage(
        tmp_path, "create_campaign", "--dataset", "mine", "--name", "three",
        PRB_SITE_URL="https://env.example.org",
    )  # fmt: skip
    assert "https://env.example.org/join/" in from_env
