"""Headers and production settings: a Content-Security-Policy on every response (refusals
included) and ``Cache-Control: no-store`` on every logged-in page and API answer, templates that
need no inline code, HTTPS settings from the environment (``check --deploy`` is clean with the
production variables of docs/deployment.md), and manager pages that answer an annotator 404 in
one log line.
"""

import logging
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from prb_annotate.campaigns.lifecycle import add_member
from tests.support.pages import active_campaign

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT / "prb_annotate" / "templates"
# A file opened from disk, not a served page: its styles and script must travel inside it.
STANDALONE = {"audit_standalone.html"}
INLINE_CODE = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>|<style\b|\bstyle=|\son[a-z]+=", re.I)


def test_it_sends_the_policy_on_every_kind_of_response(dataset, annotator, manager, login) -> None:
    campaign = active_campaign(dataset, annotator)
    pages = [
        (Client(), reverse("login")),
        (Client(), "/api/schema/"),
        (Client(), "/api/docs/"),
        (Client(), "/no-such-page/"),
        (login(annotator), reverse("home")),
        (login(annotator), reverse("annotate", args=[campaign.pk])),
        (login(manager), reverse("campaign_detail", args=[campaign.pk])),
        (login(manager), reverse("campaign_audit", args=[campaign.pk])),
        (login(manager), "/api/campaigns/"),
        (login(manager), "/admin/"),
        (login(manager), reverse("account_token")),
        # Refused before any view: a NUL in the query (400) on a page and in the API.
        (Client(), reverse("login") + "?next=%00"),
        (Client(), "/api/campaigns/?page=%00"),
    ]
    for client, url in pages:
        response = client.get(url)
        policy = response["Content-Security-Policy"]
        directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
        assert directives["script-src"] == "'self'", url
        assert directives["style-src"] == "'self'", url
        assert directives["default-src"] == "'self'", url
        assert "unsafe-inline" not in policy, url
        assert "http" not in policy, url
        # Nothing a logged-in user or the API is sent may be kept by a cache.
        if url.startswith("/api/") or client.session.get("_auth_user_id"):
            assert "no-store" in response["Cache-Control"], url


def test_no_served_template_holds_inline_code() -> None:
    offenders = []
    for path in TEMPLATES.rglob("*.html"):
        if path.name in STANDALONE:
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if INLINE_CODE.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def readme_production_variables() -> dict[str, str]:
    """The ``export`` lines of the production block of docs/deployment.md, as an environment."""
    readme = (ROOT / "docs" / "deployment.md").read_text()
    block = readme[readme.index("export DATABASE_URL=postgres") :].split("```")[0]
    variables = {}
    for line in block.splitlines():
        if line.startswith("export "):
            for word in shlex.split(line)[1:]:
                name, _, value = word.partition("=")
                variables[name] = value
    return variables


def test_check_deploy_is_clean_with_the_documented_production_variables(tmp_path: Path) -> None:
    variables = readme_production_variables()
    assert {"SECURE_HSTS_SECONDS", "SECURE_SSL_REDIRECT", "SECURE_PROXY_SSL_HEADER"} <= set(
        variables
    )
    assert {"SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE"} <= set(variables)
    # The page computes the key in the shell; the check only needs a long random one.
    assert variables["SECRET_KEY"].startswith("$(python")
    variables["SECRET_KEY"] = os.urandom(40).hex()
    env = {"PATH": os.environ["PATH"], "PRB_DATA_DIR": str(tmp_path), **variables}
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues (0 silenced)." in result.stdout


def test_the_https_settings_come_from_the_environment() -> None:
    env = {
        "PATH": os.environ["PATH"],
        "SECURE_HSTS_SECONDS": "60",
        "SECURE_SSL_REDIRECT": "true",
        "SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO,https",
        "SESSION_COOKIE_SECURE": "true",
        "CSRF_COOKIE_SECURE": "yes",
    }
    script = (
        "from prb_annotate import settings as s; print(s.SECURE_HSTS_SECONDS, "
        "s.SECURE_SSL_REDIRECT, s.SECURE_PROXY_SSL_HEADER, s.SESSION_COOKIE_SECURE, "
        "s.CSRF_COOKIE_SECURE)"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert result.stdout.strip() == "60 True ('HTTP_X_FORWARDED_PROTO', 'https') True True"
    broken = {**env, "SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO"}
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=broken, capture_output=True, text=True
    )
    assert "SECURE_PROXY_SSL_HEADER must be two values" in result.stderr
    # The test settings keep the demo's plain HTTP.
    assert settings.SECURE_SSL_REDIRECT is False


def test_manager_pages_answer_an_annotator_404_in_one_log_line(
    dataset, annotator, login, caplog: pytest.LogCaptureFixture
) -> None:
    campaign = active_campaign(dataset, annotator)
    manager_of_another = active_campaign(dataset, name="other")
    add_member(manager_of_another, annotator, role="manager")
    pair = dataset.pairs.first()
    assert pair is not None
    client = login(annotator)
    urls = [
        reverse("dataset_list"),
        reverse("dataset_detail", args=[dataset.pk]),
        reverse("pair_detail", args=[dataset.pk, pair.pk]),
        reverse("campaign_create"),
        reverse("campaign_detail", args=[campaign.pk]),
        reverse("campaign_audit", args=[campaign.pk]),
        reverse("campaign_audit_json", args=[campaign.pk]),
        reverse("campaign_export", args=[campaign.pk]),
        reverse("campaign_evaluations", args=[campaign.pk]),
    ]
    for url in urls:
        caplog.clear()
        with caplog.at_level(logging.WARNING, logger="django.request"):
            assert client.get(url).status_code == 404, url
        records = [r for r in caplog.records if r.name == "django.request"]
        assert [r.getMessage() for r in records] == [f"Not Found: {url}"], url
        assert records[0].exc_info is None, url
