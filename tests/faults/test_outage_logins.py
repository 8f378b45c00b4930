"""A login that meets SQLite's lock answers 503 and keeps the browser's cookies, so the same form
sent again logs in: the lock taken at the login's last write (the CSRF cookie already rotated),
and the lock taken before the session is saved (Django's "the session was deleted", a 400).

Real locks on the test database's file, held by a second connection; the request runs through
every middleware and the real login view.
"""

import sqlite3
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.contrib.auth.signals import user_logged_in
from django.db import DatabaseError, connection
from django.test import Client

PASSWORD = "a-long-enough-password"


@pytest.fixture
def browser() -> tuple[Client, dict[str, str]]:
    """A browser that has read the login page (CSRF enforced), and the form it would post."""
    if connection.vendor != "sqlite":
        pytest.skip("SQLite's lock; PostgreSQL restarts are in test_faults_load.py")
    User.objects.create_user("locked-out", password=PASSWORD)
    client = Client(enforce_csrf_checks=True)
    client.get("/login/")
    token = client.cookies["csrftoken"].value
    return client, {"username": "locked-out", "password": PASSWORD, "csrfmiddlewaretoken": token}


class Holder:
    """A second connection that takes the write lock on demand, and lets it go."""

    def __init__(self) -> None:
        self.connection = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
        self.holding = False

    def take(self, **_: Any) -> None:
        self.connection.execute("BEGIN IMMEDIATE")
        self.holding = True

    def release(self) -> None:
        if self.holding:
            self.connection.execute("ROLLBACK")
        self.connection.close()


def impatient() -> None:
    """The request's connection waits 50 ms for the lock instead of the deployment's seconds."""
    connection.ensure_connection()
    connection.cursor().execute("PRAGMA busy_timeout = 50")


def assert_cut_off_then_accepted(client: Client, form: dict[str, str], cut: Any) -> None:
    before = client.cookies["csrftoken"].value
    try:
        refused = client.post("/login/", form)
    finally:
        cut()
    assert refused.status_code == 503, refused.status_code
    assert refused["Retry-After"] == "1"
    assert "csrftoken" not in refused.cookies
    assert client.cookies["csrftoken"].value == before
    accepted = client.post("/login/", form)
    assert accepted.status_code == 302, accepted.status_code
    assert client.get("/").wsgi_request.user.username == "locked-out"


@pytest.mark.django_db(transaction=True)
def test_a_login_locked_at_its_last_write_keeps_the_csrf_cookie(
    browser: tuple[Client, dict[str, str]],
) -> None:
    client, form = browser
    impatient()
    holder = Holder()
    holder.take()
    with pytest.raises(DatabaseError) as caught:
        connection.cursor().execute("UPDATE auth_user SET last_login = NULL WHERE id = 0")
    holder.release()
    locked = caught.value

    def at_the_last_write(**_: Any) -> None:
        raise locked  # the lock as the login's last write met it, after the CSRF rotation

    user_logged_in.connect(at_the_last_write)
    assert_cut_off_then_accepted(client, form, lambda: user_logged_in.disconnect(at_the_last_write))


@pytest.mark.django_db(transaction=True)
def test_a_login_locked_before_its_session_is_saved_answers_503_not_400(
    browser: tuple[Client, dict[str, str]],
) -> None:
    client, form = browser
    impatient()
    holder = Holder()
    user_logged_in.connect(holder.take)  # after the view's own writes, before the session's

    def release() -> None:
        user_logged_in.disconnect(holder.take)
        holder.release()

    assert_cut_off_then_accepted(client, form, release)
