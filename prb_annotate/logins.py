"""Login throttling for the login page and the API's token endpoint.

Each failed login is a ``FailedLogin`` row. While a username has ``LOGIN_FAILURES_PER_USERNAME``
failures in the last ``LOGIN_LOCKOUT_MINUTES``, or a client address has
``LOGIN_FAILURES_PER_ADDRESS``, every login for it is refused, the right password included,
until the oldest of those failures ages out or a manager unlocks it (``manage.py unlock_logins``
or the admin's "Failed logins" page). A successful login clears its username's failures.

The rows live in the database rather than in a cache so that every gunicorn worker sees the
same counts, on SQLite and on PostgreSQL alike, with nothing more to run.
"""

from collections.abc import Collection
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.db.models import Q
from django.http import HttpRequest
from django.utils import timezone

from prb_annotate.models import FailedLogin

USERNAME_FIELD_MAX = 150
ADDRESS_FIELD_MAX = 100


class LoginLocked(Exception):
    """Too many recent failures for this username or this address."""

    def __init__(self, retry_after_seconds: int) -> None:
        minutes = max(1, -(-retry_after_seconds // 60))
        super().__init__(
            "Too many failed logins for this account or from this address. "
            f"Try again in {minutes} minute{'s' if minutes != 1 else ''}, "
            "or ask a manager to unlock it."
        )
        self.retry_after_seconds = retry_after_seconds


def client_address(request: HttpRequest) -> str:
    """The client's address: ``REMOTE_ADDR``, or the header a trusted proxy sets.

    Behind a reverse proxy every request comes from the proxy's address, so the deployment
    names the header the proxy fills in (``LOGIN_CLIENT_ADDRESS_HEADER``, e.g.
    ``HTTP_X_REAL_IP``); of a list such as X-Forwarded-For, the last entry is the one the proxy
    itself saw, the only one a client cannot forge.
    """
    header = settings.LOGIN_CLIENT_ADDRESS_HEADER
    value = request.META.get(header, "") if header else ""
    if value:
        return value.split(",")[-1].strip()[:ADDRESS_FIELD_MAX]
    return str(request.META.get("REMOTE_ADDR", ""))[:ADDRESS_FIELD_MAX]


def _window(now: datetime) -> datetime:
    return now - timedelta(minutes=settings.LOGIN_LOCKOUT_MINUTES)


def check_not_locked(username: str, address: str, *, now: datetime | None = None) -> None:
    """Raise LoginLocked when ``username`` or ``address`` has too many recent failures."""
    now = now or timezone.now()
    since = _window(now)
    recent = FailedLogin.objects.filter(at__gt=since)
    limits = [
        (
            recent.filter(username=username[:USERNAME_FIELD_MAX]),
            settings.LOGIN_FAILURES_PER_USERNAME,
        ),
        (recent.filter(address=address), settings.LOGIN_FAILURES_PER_ADDRESS),
    ]
    for failures, limit in limits:
        times = list(failures.order_by("-at").values_list("at", flat=True)[:limit])
        if len(times) >= limit:
            # Unlocked when the oldest of the last ``limit`` failures leaves the window.
            unlocked_at = times[-1] + timedelta(minutes=settings.LOGIN_LOCKOUT_MINUTES)
            raise LoginLocked(int((unlocked_at - now).total_seconds()) + 1)


def record_failure(username: str, address: str) -> None:
    now = timezone.now()
    # Failures older than the window lock nothing: forget them, so that the table holds only
    # the last few minutes of failures however long a guessing campaign goes on.
    FailedLogin.objects.filter(at__lte=_window(now)).delete()
    FailedLogin.objects.create(username=username[:USERNAME_FIELD_MAX], address=address, at=now)


def record_success(username: str) -> None:
    FailedLogin.objects.filter(username=username[:USERNAME_FIELD_MAX]).delete()


def unlock(*, usernames: Collection[str] = (), addresses: Collection[str] = ()) -> int:
    """Forget the failures of these usernames and addresses; returns how many rows went."""
    match = Q(username__in=list(usernames)) | Q(address__in=list(addresses))
    deleted, _ = FailedLogin.objects.filter(match).delete()
    return deleted


def unlock_all() -> int:
    deleted, _ = FailedLogin.objects.all().delete()
    return deleted


class ThrottledLogin(AuthenticationForm):
    """Django's login form, refusing locked usernames and addresses and counting failures."""

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username")
        if username is None or self.request is None:
            return super().clean()  # the field's own error (missing, NUL) is shown
        address = client_address(self.request)
        try:
            check_not_locked(username, address)
        except LoginLocked as locked:
            raise ValidationError(str(locked), code="locked") from locked
        try:
            cleaned = super().clean()
        except ValidationError:
            record_failure(username, address)
            raise
        record_success(username)
        return cleaned


class LoginForm(ThrottledLogin):
    """The login page's form."""


class AdminLoginForm(ThrottledLogin, AdminAuthenticationForm):
    """The admin's login form (staff only), throttled alike."""
