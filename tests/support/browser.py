"""What the browser tests share besides the ``browser`` fixture (``tests/browser/conftest.py``):
Debian's Chromium and its flags, the screenshot folder, and logging in through the page."""

from pathlib import Path

from django.urls import reverse

from tests.conftest import PASSWORD

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"  # tests/artifacts/, git-ignored


def log_in(page, base_url: str, username: str) -> None:
    page.goto(base_url + reverse("login"))
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    with page.expect_navigation():
        page.press("input[name=password]", "Enter")
    assert reverse("login") not in page.url, "login failed"


def shown_assignment_id(page) -> int:
    action = page.get_attribute("#annotation-form", "action")
    assert action is not None
    return int(action.rstrip("/").split("/")[-2])


def watch_for_problems(page) -> list[str]:
    """The page's script errors and console errors (a refused inline script among them), as
    they happen: a test asserts the list stays empty."""
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on(
        "console",
        lambda message: problems.append(message.text) if message.type == "error" else None,
    )
    return problems
