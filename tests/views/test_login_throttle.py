"""Login throttling on the login page and the API's token endpoint.

Failed logins are rows in the database, so every worker process sees the same counts. A locked
username (from one address) or address is refused with a clear message, the right password
included, until a manager unlocks it (``manage.py unlock_logins`` or the admin action) or the
failures age out. The limit per username across addresses is in ``test_hardening_logins.py``.
"""

import re
from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client, override_settings
from django.urls import reverse
from django.utils import timezone

from prb_annotate.models import FailedLogin
from prb_annotate.models.access import PROLIFIC_REFUSAL_PREFIX
from tests.conftest import PASSWORD

LIMIT = 5
LOCKED = "Too many failed logins"


def web_login(client: Client, username: str, password: str, address: str = "10.0.0.1"):
    return client.post(
        reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address
    )


def api_login(client: Client, username: str, password: str, address: str = "10.0.0.1"):
    return client.post(
        reverse("api_token"),
        {"username": username, "password": password},
        content_type="application/json",
        REMOTE_ADDR=address,
    )


def logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def test_it_locks_a_username_on_the_login_page_even_for_the_right_password(annotator) -> None:
    client = Client()
    for _ in range(LIMIT):
        response = web_login(client, annotator.username, "wrong")
        assert response.status_code == 200
        assert LOCKED not in response.content.decode()
    response = web_login(client, annotator.username, PASSWORD)
    assert LOCKED in response.content.decode()
    assert "ask a manager to unlock it" in response.content.decode()
    assert not logged_in(client)
    # Not from another address: the lock is on the username and the address together, so an
    # attacker elsewhere cannot lock the real user out.
    other = Client()
    web_login(other, annotator.username, PASSWORD, "10.9.9.9")
    assert logged_in(other)


def test_it_locks_a_username_on_the_token_endpoint(annotator) -> None:
    client = Client()
    for _ in range(LIMIT):
        response = api_login(client, annotator.username, "wrong")
        assert response.status_code == 400
    response = api_login(client, annotator.username, PASSWORD)
    assert response.status_code == 429
    body = response.json()
    assert body["detail"].startswith(LOCKED)
    assert body["errors"] == {}
    assert int(response["Retry-After"]) > 0
    assert "token" not in body


def test_it_counts_failures_on_both_endpoints_together(annotator) -> None:
    client = Client()
    for index in range(LIMIT):
        login = web_login if index % 2 else api_login
        login(client, annotator.username, "wrong")
    assert api_login(client, annotator.username, PASSWORD).status_code == 429
    assert LOCKED in web_login(client, annotator.username, PASSWORD).content.decode()


@override_settings(LOGIN_FAILURES_PER_ADDRESS=8)
def test_it_locks_an_address_that_tries_many_usernames(annotator, other_annotator) -> None:
    client = Client()
    for index in range(8):
        web_login(client, f"guess{index}", "wrong", "10.0.0.7")
    assert api_login(client, annotator.username, PASSWORD, "10.0.0.7").status_code == 429
    assert LOCKED in web_login(client, annotator.username, PASSWORD, "10.0.0.7").content.decode()
    # Other addresses are not affected, nor is the username itself.
    assert api_login(Client(), annotator.username, PASSWORD, "10.0.0.8").status_code == 200


@override_settings(LOGIN_CLIENT_ADDRESS_HEADER="HTTP_X_FORWARDED_FOR")
def test_it_takes_the_address_the_proxy_saw(annotator) -> None:
    client = Client()
    client.post(
        reverse("login"),
        {"username": "x", "password": "y"},
        REMOTE_ADDR="127.0.0.1",
        HTTP_X_FORWARDED_FOR="1.2.3.4, 203.0.113.9",
    )
    assert FailedLogin.objects.get().address == "203.0.113.9"


def test_it_clears_the_failures_of_a_successful_login(annotator) -> None:
    client = Client()
    for _ in range(LIMIT - 1):
        web_login(client, annotator.username, "wrong")
    web_login(client, annotator.username, PASSWORD)
    assert logged_in(client)
    assert not FailedLogin.objects.filter(username=annotator.username).exists()


def test_it_unlocks_after_the_window_and_forgets_old_failures(annotator) -> None:
    for _ in range(LIMIT):
        web_login(Client(), annotator.username, "wrong")
    FailedLogin.objects.update(at=timezone.now() - timedelta(minutes=16))
    assert api_login(Client(), annotator.username, PASSWORD).status_code == 200
    # Rows are kept as long as the longest window (the username's, an hour), then forgotten.
    FailedLogin.objects.create(username="old", address="10.0.0.2")
    FailedLogin.objects.update(at=timezone.now() - timedelta(minutes=61))
    web_login(Client(), "someone", "wrong")
    assert list(FailedLogin.objects.values_list("username", flat=True)) == ["someone"]


def test_a_manager_unlocks_with_the_command(annotator, other_annotator) -> None:
    for user in (annotator, other_annotator):
        for _ in range(LIMIT):
            api_login(Client(), user.username, "wrong", address=f"10.1.0.{user.pk}")
    listing = StringIO()
    call_command("unlock_logins", stdout=listing)
    assert annotator.username in listing.getvalue()
    out = StringIO()
    call_command("unlock_logins", "--username", annotator.username, stdout=out)
    assert f"{LIMIT} failed login(s) forgotten" in out.getvalue()
    where = {user.pk: f"10.1.0.{user.pk}" for user in (annotator, other_annotator)}
    assert api_login(Client(), annotator.username, PASSWORD, where[annotator.pk]).status_code == 200
    other = (other_annotator.username, PASSWORD, where[other_annotator.pk])
    assert api_login(Client(), *other).status_code == 429
    call_command("unlock_logins", "--address", where[other_annotator.pk], stdout=StringIO())
    assert api_login(Client(), *other).status_code == 200


def test_unlocking_an_address_forgets_its_failed_logins_not_its_refused_joins(
    annotator,
) -> None:
    """It once deleted the refused study-link joins too and counted them as failed logins."""
    for _ in range(2):
        api_login(Client(), annotator.username, "wrong", address="10.2.0.5")
    (key,) = set(FailedLogin.objects.values_list("address", flat=True))
    FailedLogin.objects.create(username=f"{PROLIFIC_REFUSAL_PREFIX}7", address=key)
    out = StringIO()
    call_command("unlock_logins", "--address", "10.2.0.5", stdout=out)
    assert "2 failed login(s) forgotten" in out.getvalue()
    left = FailedLogin.objects.values_list("username", flat=True)
    assert list(left) == [f"{PROLIFIC_REFUSAL_PREFIX}7"]


def test_a_manager_unlocks_with_the_admin_action(annotator, login) -> None:
    for _ in range(LIMIT):
        web_login(Client(), annotator.username, "wrong")
    admin = login(User.objects.create_superuser("root", password=PASSWORD))
    changelist = reverse("admin:prb_annotate_failedlogin_changelist")
    assert annotator.username in admin.get(changelist).content.decode()
    row = FailedLogin.objects.first()
    assert row is not None
    response = admin.post(
        changelist,
        {"action": "unlock_selected", "_selected_action": [row.pk]},
        follow=True,
    )
    # Every failure of the username and of its address is forgotten, the row chosen among them.
    assert re.search(r"Unlocked: \d+ failed logins? forgotten\.", response.content.decode())
    assert not FailedLogin.objects.exists()
    web_client = Client()
    web_login(web_client, annotator.username, PASSWORD)
    assert logged_in(web_client)


def test_the_admin_login_is_throttled_too(manager) -> None:
    client = Client()
    for _ in range(LIMIT):
        client.post(reverse("admin:login"), {"username": manager.username, "password": "x"})
    response = client.post(
        reverse("admin:login"), {"username": manager.username, "password": PASSWORD}
    )
    assert LOCKED in response.content.decode()
    assert not logged_in(client)


@pytest.mark.parametrize("username", ["nul\x00name", "x" * 200])
def test_it_refuses_odd_usernames_without_an_error(username: str, db: None) -> None:
    assert web_login(Client(), username, "x").status_code == 200
    assert api_login(Client(), username, "x").status_code == 400
    assert User.objects.count() == 0
