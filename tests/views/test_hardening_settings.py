"""Hardening: a server on its own database refuses to start without SECRET_KEY (the demo and
the tests keep working), ``Cache-Control: no-store`` on what only its reader may see, and API
tokens that their owner revokes or replaces from the pages, and that expire when configured."""

import os
import re
import stat
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client, override_settings
from django.urls import reverse
from rest_framework.authtoken.models import Token

from prb_annotate.settings import TEST_SECRET_KEY
from tests.conftest import PASSWORD
from tests.support.pages import active_campaign

ROOT = Path(__file__).resolve().parents[2]
PRINT_KEY = "from django.conf import settings; print(settings.SECRET_KEY)"


def start(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Load the settings the way a server starts, with only ``env`` (no pytest marker)."""
    script = f"import django; django.setup(); {PRINT_KEY}"
    return subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env={"PATH": os.environ["PATH"], "DJANGO_SETTINGS_MODULE": "prb_annotate.settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def run_refused(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``python COMMAND...`` from the repository root with only ``env`` and a free port."""
    return subprocess.run(
        [sys.executable, *command, *(["-b", "127.0.0.1:0"] if "gunicorn" in command else [])],
        cwd=ROOT,
        env={"PATH": os.environ["PATH"], "DJANGO_SETTINGS_MODULE": "prb_annotate.settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_server_on_its_own_database_refuses_to_start_without_a_secret_key(
    tmp_path: Path,
) -> None:
    env = {"DATABASE_URL": "postgres://prb@db.internal:5432/prb", "PRB_DATA_DIR": str(tmp_path)}
    refused = start(env)
    assert refused.returncode != 0
    assert "ImproperlyConfigured: SECRET_KEY is not set" in refused.stderr
    assert TEST_SECRET_KEY not in refused.stdout
    # From the command line and from gunicorn, one line to act on and no traceback.
    for command in (["manage.py", "check"], ["-m", "gunicorn", "prb_annotate.wsgi"]):
        with_command = run_refused(command, env)
        assert with_command.returncode != 0
        lines = with_command.stderr.strip().splitlines()
        told = [line for line in lines if "SECRET_KEY is not set" in line]
        assert len(told) == 1, with_command.stderr
        assert told[0].startswith("ImproperlyConfigured: SECRET_KEY is not set")
        assert "docs/deployment.md" in told[0]
        assert "Traceback" not in with_command.stderr
    assert start({**env, "SECRET_KEY": "k" * 50}).stdout.strip() == "k" * 50
    # DEBUG is a developer's machine: a key made for it, never the public one.
    debug = start({**env, "DEBUG": "true"})
    assert debug.returncode == 0, debug.stderr
    assert debug.stdout.strip() not in ("", TEST_SECRET_KEY)


def test_the_demo_database_gets_a_key_of_its_own_kept_across_starts(tmp_path: Path) -> None:
    """``make demo`` and the README's commands run on the default SQLite file: the key is made
    once for this installation (readable by its owner only) and read again on every start."""
    env = {"PRB_DATA_DIR": str(tmp_path)}
    first, second = start(env), start(env)
    assert first.returncode == 0, first.stderr
    key = first.stdout.strip()
    assert len(key) >= 50
    assert key != TEST_SECRET_KEY
    assert second.stdout.strip() == key
    assert (tmp_path / "secret_key").read_text().strip() == key
    assert stat.S_IMODE((tmp_path / "secret_key").stat().st_mode) == 0o600
    assert [path.name for path in tmp_path.iterdir() if path.name.startswith(".secret")] == []


# A value of the wrong kind for each kind of variable, and what the start says of it.
NOT_OF_ITS_KIND = {
    "PRB_JOIN_SHARE_PER_ADDRESS": ("abc", "must be a finite number, not 'abc'"),
    "PRB_SLOT_SHARE_PER_NETWORK": ("5", "must be from 0.0 to 1.0, not '5'"),
    "PRB_SQLITE_BUSY_TIMEOUT_S": ("nan", "must be a finite number, not 'nan'"),
    "SESSION_COOKIE_SECURE": ("ture", "must be true or false (or 1/0, yes/no, on/off)"),
    "LOGIN_FAILURES_PER_USERNAME": ("0", "must be at least 1, not '0'"),
    "EMAIL_PORT": ("70000", "must be from 1 to 65535, not '70000'"),
    "PRB_UPLOAD_MAX_BYTES": ("50MB", "must be a whole number, not '50MB'"),
    "LOG_LEVEL": ("verbose", "must be one of DEBUG, INFO, WARNING, ERROR, CRITICAL"),
}
PRINT_READ = (
    "import django; django.setup(); from django.conf import settings as s; "
    "print(s.SESSION_COOKIE_SECURE, s.EMAIL_USE_TLS, s.EMAIL_PORT, s.PRB_SLOT_SHARE_PER_NETWORK)"
)


def test_a_variable_not_of_its_kind_stops_the_start_naming_itself(tmp_path: Path) -> None:
    """A typo in a setting neither crashes with a bare traceback nor reads as "off": the start
    stops with one line that names the variable and what it must be."""
    env = {"PRB_DATA_DIR": str(tmp_path)}
    for name, (value, words) in NOT_OF_ITS_KIND.items():
        refused = run_refused(["manage.py", "check"], {**env, name: value})
        assert refused.returncode != 0, name
        assert f"ImproperlyConfigured: {name} {words}" in refused.stderr
        assert "Traceback" not in refused.stderr
    # Case and spaces do not matter, and an empty value is the default.
    read = run_refused(
        ["-c", PRINT_READ],
        {**env, "SESSION_COOKIE_SECURE": " Yes ", "EMAIL_USE_TLS": "", "EMAIL_PORT": "25"},
    )
    assert read.returncode == 0, read.stderr
    assert read.stdout.split() == ["True", "True", "25", "0.1"]


def test_the_tests_run_with_the_test_key() -> None:
    assert settings.SECRET_KEY == TEST_SECRET_KEY


def test_it_sends_no_store_to_logged_in_users_the_api_and_exports(
    dataset, annotator, manager, login
) -> None:
    campaign = active_campaign(dataset, annotator)
    manager_client = login(manager)
    private = [
        (login(annotator), reverse("home")),
        (login(annotator), reverse("annotate", args=[campaign.pk])),
        (manager_client, reverse("campaign_detail", args=[campaign.pk])),
        (manager_client, reverse("campaign_audit", args=[campaign.pk])),
        (manager_client, f"/api/campaigns/{campaign.pk}/progress/"),
        (manager_client, f"/api/campaigns/{campaign.pk}/export/?subset=all"),
        (manager_client, reverse("campaign_export", args=[campaign.pk]) + "?subset=all"),
        (Client(), "/api/campaigns/"),  # 401, still an API answer
        (Client(), "/api/schema/"),
    ]
    for client, url in private:
        response = client.get(url)
        assert response.status_code < 500, url
        assert "no-store" in response.get("Cache-Control", ""), url
    token = Token.objects.create(user=manager)
    api = Client().get("/api/campaigns/", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert api["Cache-Control"] == "no-store"
    # Static files keep their own caching.
    static = Client().get("/static/prb_annotate/app.css")
    assert "no-store" not in static.get("Cache-Control", "")


def test_an_owner_revokes_and_replaces_their_token_from_the_pages(annotator: User) -> None:
    client = Client()
    client.force_login(annotator)
    home = client.get(reverse("home")).content.decode()
    assert f'href="{reverse("account_token")}"' in home  # the header's link
    page = client.get(reverse("account_token")).content.decode()
    assert "You have no API token" in page
    made = client.post(reverse("account_token"), {"action": "new"})
    first = made.context["new_key"]
    assert first in made.content.decode()
    assert made["Cache-Control"] == "no-store"
    api = Client(HTTP_AUTHORIZATION=f"Token {first}")
    assert api.get("/api/campaigns/").status_code == 200
    replaced = client.post(reverse("account_token"), {"action": "new"}).context["new_key"]
    assert replaced != first
    assert api.get("/api/campaigns/").status_code == 403
    assert Client(HTTP_AUTHORIZATION=f"Token {replaced}").get("/api/campaigns/").status_code == 200
    assert "You have an API token, made on" in client.get(reverse("account_token")).content.decode()
    revoked = client.post(reverse("account_token"), {"action": "revoke"}, follow=True)
    assert "Your API token is revoked" in revoked.content.decode()
    assert Client(HTTP_AUTHORIZATION=f"Token {replaced}").get("/api/campaigns/").status_code == 403
    assert not Token.objects.exists()


def test_an_account_made_by_an_invite_link_has_no_token_page(dataset) -> None:
    campaign = active_campaign(dataset)
    client = Client()
    client.post(
        reverse("join", args=[campaign.invite_token]),
        {"PROLIFIC_PID": "P1", "STUDY_ID": "s", "SESSION_ID": "t"},
    )
    assert client.get(reverse("account_token")).status_code == 404
    page = client.get(reverse("annotate", args=[campaign.pk])).content.decode()
    assert reverse("account_token") not in page


@override_settings(API_TOKEN_MAX_AGE_DAYS=30)
def test_a_token_expires_and_the_token_endpoint_gives_a_new_one(annotator: User) -> None:
    token = Token.objects.create(user=annotator)
    Token.objects.filter(pk=token.pk).update(created=token.created - timedelta(days=31))
    refused = Client(HTTP_AUTHORIZATION=f"Token {token.key}").get("/api/campaigns/")
    assert refused.status_code == 403
    assert refused.json()["detail"].startswith("Token has expired")
    fresh = Client().post(
        reverse("api_token"),
        {"username": annotator.username, "password": PASSWORD},
        content_type="application/json",
    )
    assert fresh.status_code == 200
    assert fresh.json()["token"] != token.key
    assert (
        Client(HTTP_AUTHORIZATION=f"Token {fresh.json()['token']}")
        .get("/api/campaigns/")
        .status_code
        == 200
    )
    client = Client()
    client.force_login(annotator)
    assert "it expires on" in client.get(reverse("account_token")).content.decode()


# Read by the settings for the test runner alone, never set on a server.
TEST_ONLY_VARIABLES = {"PRB_TEST_DB_SUFFIX", "PYTEST_VERSION"}
READ_VARIABLE = re.compile(r'(?:env\w*\(|environ\.get\(|environ\[)"([A-Z][A-Z0-9_]+)"')


def test_the_deployment_guide_lists_every_variable_the_settings_read() -> None:
    """docs/deployment.md says "Everything is an environment variable" above its table: each
    variable settings.py reads has a row there."""
    read = set(READ_VARIABLE.findall((ROOT / "prb_annotate" / "settings.py").read_text()))
    guide = (ROOT / "docs" / "deployment.md").read_text()
    table = guide[guide.index("Everything is an environment variable") :]
    table = table[: table.index("\n## ")]
    first_cells = re.findall(r"^\| ([^|]+) \|", table, flags=re.MULTILINE)
    rows = {name for cell in first_cells for name in re.findall(r"`([A-Z][A-Z0-9_]+)`", cell)}
    assert "DATABASE_URL" in read
    assert "EMAIL_PORT" in rows
    assert sorted(read - TEST_ONLY_VARIABLES - rows) == []
