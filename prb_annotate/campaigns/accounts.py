"""Annotator accounts made by a manager: one or many at once, each new one with a one-time
"set your password" link.

A manager pastes usernames (optionally each with an email), or uploads a CSV with a
``username`` column (and an ``email`` one); ``parse_annotators`` reads either, and a list with
any problem is refused whole, each problem naming its line. A structured list (the API's
``[{"username", "email"}]``) is read by ``entries_from_rows``, each row as one entry and never
as text, each problem naming the row's index and field. ``add_annotators`` then makes the
accounts that do not exist yet (without a usable password) and adds everyone as an annotator
of the campaign, all in one transaction.

A new account's link carries Django's password-reset token (``default_token_generator``): it
is tied to the account's password hash and last login, so it works once (setting a password
changes the hash) and for ``PASSWORD_RESET_TIMEOUT`` at most. The manager sees the links once,
on the page that answers the request; they are mailed as well, to accounts that have an email,
when the deployment configures email (``settings.PRB_SEND_EMAIL``).
"""

import csv
import io
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from smtplib import SMTPException

from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.auth.tokens import default_token_generator
from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.core.validators import validate_email
from django.db import transaction
from django.db.models.functions import Lower
from django.urls import reverse
from django.utils import translation
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django.utils.translation import gettext, ngettext

from prb_annotate.campaigns.lifecycle import add_member
from prb_annotate.campaigns.signup import RESERVED_PREFIXES
from prb_annotate.models import Campaign, Participant

logger = logging.getLogger(__name__)
# More than a team pastes by hand, few enough to answer within one request.
MAX_ANNOTATORS = 1000
CELL_SEPARATORS = re.compile(r"[,;\t ]+")
USERNAME_MAX_CHARS = 150


@dataclass(frozen=True)
class AnnotatorEntry:
    username: str
    email: str
    line: int  # its line in the text it was read from, or its index in a structured list


@dataclass(frozen=True)
class AddedAnnotator:
    username: str
    created: bool  # the account was made now
    set_password_url: str  # the one-time link ("" for an account that had one already)
    emailed: bool
    # A member of the campaign already, in whatever role: left as it was (a manager listed by
    # mistake stays a manager).
    already_member: bool = False


@dataclass(frozen=True)
class ListProblem:
    """One problem of a list of annotators: where (``line``, as ``AnnotatorEntry.line``; None
    for the list as a whole), in which field of the entry ("" for none), and what."""

    line: int | None
    field: str
    message: str
    source: str = ""  # the name of the text it is in, when there are several

    def __str__(self) -> str:
        said = (
            self.message
            if self.line is None
            else gettext("line %(line)d: %(problem)s")
            % {"line": self.line, "problem": self.message}
        )
        return f"{self.source} {said}" if self.source else said


class AnnotatorListError(ValueError):
    """The list cannot be used; nothing was written. ``problems`` are "line N: ..." lines;
    ``located`` holds the same problems with their line (or entry index) and field, for a
    caller that names an entry otherwise (the API's structured list, by index)."""

    def __init__(self, problems: list[ListProblem]) -> None:
        self.located = problems
        self.problems = [str(problem) for problem in problems]
        super().__init__("; ".join(self.problems))


def parse_annotators(text: str, *, source: str = "") -> list[AnnotatorEntry]:
    """Annotators from pasted text or a CSV file's text.

    A first row naming a ``username`` column makes the text a CSV read by its columns
    (``email`` optional). Otherwise each line holds usernames separated by commas,
    semicolons, tabs or spaces, each optionally followed by its email. Blank lines and lines
    starting with ``#`` are skipped. Raises AnnotatorListError naming every bad line (after
    ``source``, a file's name, when given).
    """
    try:
        return _parse(text)
    except AnnotatorListError as error:
        if not source:
            raise
        raise AnnotatorListError(
            [replace(problem, source=source) for problem in error.located]
        ) from None


def parse_annotator_sources(sources: list[tuple[str, str]]) -> list[AnnotatorEntry]:
    """``parse_annotators`` over several (source name, text), as one list: the problems of
    each, and the names given in two of them."""
    entries: list[AnnotatorEntry] = []
    problems: list[ListProblem] = []
    seen: dict[str, str] = {}
    for source, text in sources:
        try:
            found = parse_annotators(text, source=source)
        except AnnotatorListError as error:
            problems += error.located
            continue
        for entry in found:
            first = seen.setdefault(entry.username.lower(), source)
            if first != source:
                message = gettext("%(username)s is in %(source)s too") % {
                    "username": entry.username,
                    "source": first,
                }
                problems.append(ListProblem(entry.line, "username", message, source))
        entries += found
    if problems:
        raise AnnotatorListError(problems)
    return entries


def entries_from_rows(rows: Sequence[tuple[str, str]]) -> list[AnnotatorEntry]:
    """Annotators from a structured list of (username, email), each row one entry, its
    ``line`` its index (from 0).

    A row is never read as text: a username holding a comma, a space or a leading ``#`` is a
    bad username of that row, not two names, a separator or a comment, and a first row named
    "username" is an entry, not a header. Raises AnnotatorListError naming every problem by
    index and field, as ``parse_annotators`` does by line.
    """
    entries: list[AnnotatorEntry] = []
    problems: list[ListProblem] = []
    for index, (username, email) in enumerate(rows):
        found = _entry_problems(username, email, index)
        if found:
            problems += found
        else:
            entries.append(AnnotatorEntry(username, email, index))
    return _checked_list(entries, problems, by_index=True)


def _parse(text: str) -> list[AnnotatorEntry]:
    # newline="": the reader sees every line ending ("\r" alone too) as csv expects.
    rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff"), newline="")))
    header = [cell.strip().lower() for cell in rows[0]] if rows else []
    if "username" in header:
        entries, problems = _from_columns(rows[1:], header)
    else:
        entries, problems = _from_lines(text.lstrip("\ufeff").splitlines())
    return _checked_list(entries, problems)


def _checked_list(
    entries: list[AnnotatorEntry], problems: list[ListProblem], *, by_index: bool = False
) -> list[AnnotatorEntry]:
    """The entries, or AnnotatorListError with their problems, the names given twice, an empty
    list and one too long, in the order of the list (``by_index``: a structured list's)."""
    problems = sorted(problems + _duplicates(entries, by_index=by_index), key=_position)
    if not entries and not problems:
        problems.append(ListProblem(None, "", gettext("no username given")))
    if len(entries) > MAX_ANNOTATORS:
        message = gettext("%(count)d annotators at once; at most %(most)d") % {
            "count": len(entries),
            "most": MAX_ANNOTATORS,
        }
        problems.append(ListProblem(None, "", message))
    if problems:
        raise AnnotatorListError(problems)
    return entries


def _position(problem: ListProblem) -> int:
    """Where a problem is, to list problems in the order of the list."""
    return -1 if problem.line is None else problem.line


def _from_columns(
    rows: list[list[str]], header: list[str]
) -> tuple[list[AnnotatorEntry], list[ListProblem]]:
    name_at = header.index("username")
    email_at = header.index("email") if "email" in header else None
    entries: list[AnnotatorEntry] = []
    problems: list[ListProblem] = []
    for number, row in enumerate(rows, start=2):
        if not any(cell.strip() for cell in row):
            continue
        username = row[name_at].strip() if name_at < len(row) else ""
        email = row[email_at].strip() if email_at is not None and email_at < len(row) else ""
        _add(entries, problems, (username, email), number)
    return entries, problems


def _from_lines(lines: Iterable[str]) -> tuple[list[AnnotatorEntry], list[ListProblem]]:
    entries: list[AnnotatorEntry] = []
    problems: list[ListProblem] = []
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        pending: tuple[str, str] | None = None
        for cell in CELL_SEPARATORS.split(text):
            if not cell:
                continue
            if pending is not None and not pending[1] and _is_email(cell):
                pending = (pending[0], cell)
                continue
            if pending is not None:
                _add(entries, problems, pending, number)
            pending = (cell, "")
        if pending is not None:
            _add(entries, problems, pending, number)
    return entries, problems


def _add(
    entries: list[AnnotatorEntry], problems: list[ListProblem], cells: tuple[str, str], line: int
) -> None:
    found = _entry_problems(*cells, line)
    if found:
        problems += found
    else:
        entries.append(AnnotatorEntry(cells[0], cells[1], line))


def _is_email(text: str) -> bool:
    try:
        validate_email(text)
    except ValidationError:
        return False
    return True


def _entry_problems(username: str, email: str, line: int) -> list[ListProblem]:
    problems = []
    if problem := username_problem(username):
        problems.append(ListProblem(line, "username", problem))
    if email and not _is_email(email):
        message = gettext("%(email)r is not an email address") % {"email": email}
        problems.append(ListProblem(line, "email", message))
    return problems


def username_problem(username: str) -> str:
    """What is wrong with ``username`` as one account's username ("" for nothing)."""
    if not username:
        return gettext("no username")
    if len(username) > USERNAME_MAX_CHARS:
        return gettext("username %(start)r… is longer than %(most)d characters") % {
            "start": username[:20],
            "most": USERNAME_MAX_CHARS,
        }
    try:
        UnicodeUsernameValidator()(username)
    except ValidationError:
        return gettext("username %(username)r may hold only letters, digits and @ . + - _") % {
            "username": username
        }
    return ""


def _duplicates(entries: list[AnnotatorEntry], *, by_index: bool) -> list[ListProblem]:
    first: dict[str, int] = {}
    problems = []
    for entry in entries:
        key = entry.username.lower()
        if key in first:
            where = {"username": entry.username, "line": first[key]}
            message = (
                gettext("%(username)s is listed already (entry %(line)d)") % where
                if by_index
                else gettext("%(username)s is listed already (line %(line)d)") % where
            )
            problems.append(ListProblem(entry.line, "username", message))
        else:
            first[key] = entry.line
    return problems


def add_annotators(
    campaign: Campaign, entries: list[AnnotatorEntry], *, site: str
) -> list[AddedAnnotator]:
    """Make the accounts that do not exist yet and add everyone who is not a member yet as an
    annotator (a member keeps their role: ``preview_annotators`` says "nothing changes").

    ``site`` is the address links start with (``https://annotate.example.org``). All or
    nothing: AnnotatorListError, with nothing written, when a name is reserved for the app's
    own accounts or belongs to an account an invite link made for another campaign.
    """
    existing = _checked_accounts(campaign, entries)
    members = _members_among(campaign, existing.values())
    made: list[tuple[User, bool]] = []
    with transaction.atomic():
        for entry in entries:
            user = existing.get(entry.username.lower())
            created = user is None
            if user is None:
                user = User(username=entry.username, email=entry.email)
                user.set_unusable_password()
                user.save()
            if user.pk not in members:
                add_member(campaign, user)
            made.append((user, created))
    return [
        replace(_added(user, created, campaign, site), already_member=user.pk in members)
        for user, created in made
    ]


def _members_among(campaign: Campaign, users: Iterable[User]) -> set[int]:
    """The ids of ``users`` who are members of the campaign already, in any role."""
    return set(campaign.memberships.filter(user__in=list(users)).values_list("user_id", flat=True))


@dataclass(frozen=True)
class PlannedAnnotator:
    """What adding one line of the list will do, shown before anything is made."""

    line: int
    username: str
    email: str
    outcome: str  # "new" (an account and its link), "existing" or "member" (nothing changes)


def preview_annotators(campaign: Campaign, entries: list[AnnotatorEntry]) -> list[PlannedAnnotator]:
    """What ``add_annotators`` would do with ``entries``, writing nothing: a typo shows as a new
    account before any is made. Raises AnnotatorListError as ``add_annotators`` does."""
    existing = _checked_accounts(campaign, entries)
    members = _members_among(campaign, existing.values())
    planned = []
    for entry in entries:
        user = existing.get(entry.username.lower())
        if user is None:
            outcome, username = "new", entry.username
        else:
            outcome, username = ("member" if user.pk in members else "existing"), user.username
        planned.append(PlannedAnnotator(entry.line, username, entry.email, outcome))
    return planned


def as_list_text(entries: list[AnnotatorEntry]) -> str:
    """The entries as the list the form takes, one per line: what the confirmation sends back
    (a CSV file's rows included), so that what is made is what was shown."""
    return "\n".join(f"{entry.username} {entry.email}".strip() for entry in entries)


def _checked_accounts(campaign: Campaign, entries: list[AnnotatorEntry]) -> dict[str, User]:
    """The existing accounts the entries name, by lower-cased username; AnnotatorListError when
    a name is reserved or scoped to another campaign."""
    # Compared case-insensitively, as the sign-up form does: "Manager" is the account
    # "manager", never a look-alike of it.
    lowered = [entry.username.lower() for entry in entries]
    matching = User.objects.annotate(lowered=Lower("username")).filter(lowered__in=lowered)
    existing: dict[str, User] = {
        user.username.lower(): user for user in User.objects.filter(pk__in=matching.values("pk"))
    }
    problems = _account_problems(campaign, entries, existing)
    if problems:
        raise AnnotatorListError(problems)
    return existing


def _account_problems(
    campaign: Campaign, entries: list[AnnotatorEntry], existing: dict[str, User]
) -> list[ListProblem]:
    scoped = dict(
        Participant.objects.filter(user__in=list(existing.values())).values_list(
            "user_id", "campaign_id"
        )
    )
    problems = []
    for entry in entries:
        user = existing.get(entry.username.lower())
        if user is None and entry.username.lower().startswith(RESERVED_PREFIXES):
            message = gettext(
                "names starting with %(start)r… are kept for the app's own accounts"
            ) % {"start": entry.username[:9]}
            problems.append(ListProblem(entry.line, "username", message))
        elif user is not None and scoped.get(user.pk, campaign.pk) != campaign.pk:
            message = gettext(
                "%(username)s joined another campaign through its invite link and can only "
                "annotate that campaign"
            ) % {"username": user.username}
            problems.append(ListProblem(entry.line, "username", message))
    return problems


def _added(user: User, created: bool, campaign: Campaign, site: str) -> AddedAnnotator:
    if not created:
        return AddedAnnotator(user.username, False, "", False)
    return link_for(user, campaign, site)


def link_for(user: User, campaign: Campaign, site: str) -> AddedAnnotator:
    """A fresh one-time link for ``user`` (mailed when email is configured): a new account's,
    or a new one for an account whose link was lost or expired (``campaigns/members.py``)."""
    url = site.rstrip("/") + set_password_path(user)
    return AddedAnnotator(user.username, True, url, _mail_link(user, url, campaign))


def set_password_path(user: User) -> str:
    """The path of the user's one-time "set your password" page."""
    uid = urlsafe_base64_encode(force_bytes(user.pk))
    return reverse("set_password", args=[uid, default_token_generator.make_token(user)])


def _mail_link(user: User, url: str, campaign: Campaign) -> bool:
    """Mail the link when email is configured and the account has an address; a failure to
    send is logged, and the manager still has the link on the page."""
    if not settings.PRB_SEND_EMAIL or not user.email:
        return False
    days = max(1, settings.PASSWORD_RESET_TIMEOUT // 86400)
    # In the campaign's language where it has one: the annotator has chosen none yet.
    with translation.override(campaign.language or settings.LANGUAGE_CODE):
        values = {"name": campaign.name, "days": days, "url": url, "username": user.username}
        body = (
            ngettext(
                "You have been added as an annotator of “%(name)s”.\n\n"
                "Choose your password here (the link works once, for %(days)s day):\n"
                "%(url)s\n\nYour username is %(username)s.\n",
                "You have been added as an annotator of “%(name)s”.\n\n"
                "Choose your password here (the link works once, for %(days)s days):\n"
                "%(url)s\n\nYour username is %(username)s.\n",
                days,
            )
            % values
        )
        subject = gettext("Your annotator account: %(name)s") % values
    try:
        send_mail(subject, body, None, [user.email])
    except (SMTPException, OSError) as error:
        logger.warning("could not mail %s their set-password link: %s", user.username, error)
        return False
    return True
