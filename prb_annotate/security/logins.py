"""Login throttling for the login page, the admin and the API's token endpoint.

Every login attempt is first written as a ``FailedLogin`` row; only then are the recent rows
counted, and the password is checked only when no limit is reached. A right password removes
the row again, a refused attempt removes its own row, a wrong one leaves it as a failure. So
the count is atomic across every worker process and thread: the n-th attempt to count sees the
n - 1 attempts that counted before it, on SQLite and PostgreSQL alike, and however many guesses
arrive at once, no more passwords are checked than a limit allows. Three limits:

- **A username from one address** (``LOGIN_FAILURES_PER_USERNAME``, 5 in
  ``LOGIN_LOCKOUT_MINUTES``, 15): the lock holds for that address only, so that an attacker
  elsewhere cannot lock the real user out.
- **An address** (``LOGIN_FAILURES_PER_ADDRESS``, 20 in the same window), whatever usernames it
  tries.
- **A username from anywhere** (``LOGIN_FAILURES_PER_USERNAME_ANYWHERE``, 30 in
  ``LOGIN_USERNAME_LOCKOUT_MINUTES``, 60), against guessing spread over many addresses. It does
  not apply to a *known* source: an address this username logged in from in the last
  ``LOGIN_KNOWN_DAYS`` (90), a browser that carries the signed cookie such a login set (a
  "device cookie"), or a session already logged in as that username.

A locked attempt is refused whatever the password, until the failures age out or a manager
unlocks them (``manage.py unlock_logins`` or the admin's "Failed logins" page). A successful
login clears its username's failures from its address (not those from elsewhere, which still
count against the username). Addresses are counted as ``prb_annotate.security.addresses`` keys them
(an IPv6 address by its /64).
"""

import contextlib
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponseBase
from django.utils import timezone
from django.utils.translation import ngettext

from prb_annotate.models import FailedLogin, KnownLogin
from prb_annotate.models.access import PROLIFIC_REFUSAL_PREFIX
from prb_annotate.security.addresses import address_key, client_address

__all__ = [
    "LoginAttempt",
    "LoginLocked",
    "ThrottledLogin",
    "begin_attempt",
    "client_address",
    "unlock",
    "unlock_all",
]

USERNAME_FIELD_MAX = 150
KNOWN_COOKIE = "prb_known_logins"
KNOWN_COOKIE_SALT = "prb_annotate.logins.known"
KNOWN_COOKIE_USERNAMES = 5
# Set by a successful login on the request, turned into the cookie on the way out.
KNOWN_ATTRIBUTE = "prb_known_login"


class LoginLocked(Exception):
    """Too many recent failures for this username or this address."""

    def __init__(self, retry_after_seconds: int) -> None:
        minutes = minutes_until(retry_after_seconds)
        super().__init__(
            ngettext(
                "Too many failed logins for this account or from this address. "
                "Try again in %(minutes)d minute, or ask a manager to unlock it.",
                "Too many failed logins for this account or from this address. "
                "Try again in %(minutes)d minutes, or ask a manager to unlock it.",
                minutes,
            )
            % {"minutes": minutes}
        )
        self.retry_after_seconds = retry_after_seconds


def minutes_until(seconds: int) -> int:
    """Whole minutes, rounded up: "try again in 1 minute" rather than in 0."""
    return max(1, -(-seconds // 60))


@dataclass(frozen=True)
class Limit:
    rows: QuerySet[FailedLogin]
    count: int
    minutes: int


def limits(username: str, address: str, *, known: bool) -> list[Limit]:
    minutes = settings.LOGIN_LOCKOUT_MINUTES
    rows = logins()
    found = [
        Limit(
            rows.filter(username=username, address=address),
            settings.LOGIN_FAILURES_PER_USERNAME,
            minutes,
        ),
        Limit(rows.filter(address=address), settings.LOGIN_FAILURES_PER_ADDRESS, minutes),
    ]
    if not known:
        found.append(
            Limit(
                rows.filter(username=username),
                settings.LOGIN_FAILURES_PER_USERNAME_ANYWHERE,
                settings.LOGIN_USERNAME_LOCKOUT_MINUTES,
            )
        )
    return found


def longest_window() -> timedelta:
    return timedelta(
        minutes=max(settings.LOGIN_LOCKOUT_MINUTES, settings.LOGIN_USERNAME_LOCKOUT_MINUTES)
    )


def check_limits(limits: list[Limit], own_row: int, now: datetime) -> None:
    """LoginLocked when, besides this attempt's own row, a limit's rows reach its count."""
    for limit in limits:
        window = timedelta(minutes=limit.minutes)
        others = limit.rows.filter(at__gt=now - window).exclude(pk=own_row)
        times = list(others.order_by("-at").values_list("at", flat=True)[: limit.count])
        if len(times) >= limit.count:
            # Unlocked when the oldest of the last ``count`` failures leaves the window.
            unlocked_at = times[-1] + window
            raise LoginLocked(max(1, int((unlocked_at - now).total_seconds()) + 1))


@dataclass(frozen=True)
class LoginAttempt:
    """An attempt admitted by the limits; its row counts as a failure until ``succeeded``."""

    row_id: int
    username: str
    address: str

    def succeeded(self, request: HttpRequest | None = None) -> None:
        FailedLogin.objects.filter(username=self.username, address=self.address).delete()
        remember_known(self.username, self.address)
        if request is not None:
            setattr(request, KNOWN_ATTRIBUTE, self.username)


def begin_attempt(
    username: str, address: str, *, known: bool = False, now: datetime | None = None
) -> LoginAttempt:
    """Count this attempt, then check the limits; LoginLocked (and nothing left behind) when
    one is reached. Call it before checking the password, outside any transaction: the row
    must be visible to every other attempt before this one counts."""
    now = now or timezone.now()
    username = username[:USERNAME_FIELD_MAX]
    # Failures older than every window lock nothing: forget them, so that the table holds only
    # the last hour of failures however long a guessing campaign goes on. Refused study-link
    # joins are kept for the join window, which may be longer; their own writer prunes them.
    logins().filter(at__lte=now - longest_window()).delete()
    row = FailedLogin.objects.create(username=username, address=address, at=now)
    try:
        check_limits(limits(username, address, known=known), row.pk, now)
    except LoginLocked:
        row.delete()
        raise
    return LoginAttempt(row.pk, username, address)


def remember_known(username: str, address: str) -> None:
    now = timezone.now()
    updated = KnownLogin.objects.filter(username=username, address=address).update(at=now)
    if not updated:
        # The same user's other login may make it at the same moment: theirs is as good.
        with contextlib.suppress(IntegrityError), transaction.atomic():
            KnownLogin.objects.create(username=username, address=address, at=now)


def is_known(request: HttpRequest | None, username: str, address: str) -> bool:
    """Whether this login comes from a known source (see the module)."""
    username = username[:USERNAME_FIELD_MAX]
    since = timezone.now() - timedelta(days=settings.LOGIN_KNOWN_DAYS)
    if KnownLogin.objects.filter(username=username, address=address, at__gt=since).exists():
        return True
    if request is None:
        return False
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated and user.get_username() == username:
        return True
    return username in known_cookie_usernames(request)


def known_cookie_usernames(request: HttpRequest) -> list[str]:
    value = request.get_signed_cookie(
        KNOWN_COOKIE,
        default="",
        salt=KNOWN_COOKIE_SALT,
        max_age=timedelta(days=settings.LOGIN_KNOWN_DAYS),
    )
    return [name for name in str(value).split("\n") if name]


class KnownLoginCookieMiddleware:
    """Sets the signed cookie that marks this browser as known to the username that just
    logged in through it (kept for ``LOGIN_KNOWN_DAYS``, never readable by a script)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        username = getattr(request, KNOWN_ATTRIBUTE, None)
        if username:
            names = [username, *(n for n in known_cookie_usernames(request) if n != username)]
            response.set_signed_cookie(
                KNOWN_COOKIE,
                "\n".join(names[:KNOWN_COOKIE_USERNAMES]),
                salt=KNOWN_COOKIE_SALT,
                max_age=int(timedelta(days=settings.LOGIN_KNOWN_DAYS).total_seconds()),
                secure=settings.SESSION_COOKIE_SECURE,
                httponly=True,
                samesite="Lax",
            )
        return response


def unlock(*, usernames: Collection[str] = (), addresses: Collection[str] = ()) -> int:
    """Forget the failed logins of these usernames and addresses (not the refused study-link
    joins, which lock no login); returns how many rows went."""
    keys = [address_key(address) for address in addresses]
    match = Q(username__in=list(usernames)) | Q(address__in=keys)
    deleted, _ = logins().filter(match).delete()
    return deleted


def unlock_all() -> int:
    """Forget every failed login (not the refused study-link joins, which lock no login)."""
    deleted, _ = logins().delete()
    return deleted


def logins() -> QuerySet[FailedLogin]:
    """The rows that are failed logins: all but the refused study-link joins."""
    return FailedLogin.objects.exclude(username__startswith=PROLIFIC_REFUSAL_PREFIX)


class ThrottledLogin(AuthenticationForm):
    """Django's login form, refusing locked logins and counting failures."""

    def clean(self) -> dict[str, Any]:
        username = self.cleaned_data.get("username")
        if username is None or self.request is None:
            return super().clean()  # the field's own error (missing, NUL) is shown
        address = client_address(self.request)
        try:
            attempt = begin_attempt(
                username, address, known=is_known(self.request, username, address)
            )
        except LoginLocked as locked:
            raise ValidationError(str(locked), code="locked") from locked
        cleaned = super().clean()  # a wrong password raises: the attempt's row stays
        attempt.succeeded(self.request)
        return cleaned


class LoginForm(ThrottledLogin):
    """The login page's form."""


class AdminLoginForm(ThrottledLogin, AdminAuthenticationForm):
    """The admin's login form (staff only), throttled alike."""
