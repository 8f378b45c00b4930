"""The real Chromium every browser test drives, through Playwright's sync API."""

import os
from collections.abc import Iterator

import pytest
from django.db import connections

from tests.support.browser import CHROMIUM, CHROMIUM_ARGS

# Playwright's sync API runs an event loop in this thread; Django's ORM calls from the test
# body are still plain synchronous calls on the test's own connection.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"


@pytest.fixture
def browser() -> Iterator:
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} not found: install Debian's chromium to run the browser tests")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
        # ORM calls made while Playwright runs get a database connection of their own
        # (Django keeps connections per context); close it, or PostgreSQL refuses to drop
        # the test database at the end ("being accessed by other users").
        connections.close_all()
