"""Token authentication for the API, in one plain query.

Every API request authenticates, and DRF's own class builds an ORM query with the token's user
for each one; on the annotators' hot path (next item, submit) that query building cost more than
the database work. This class keeps DRF's behaviour - the same header, the same refusals
and messages (403, since session authentication comes first), the token as ``request.auth`` -
and reads token and user in one plain statement.
As a subclass of DRF's class it keeps drf-spectacular's ``tokenAuth`` security scheme.

A token older than ``API_TOKEN_MAX_AGE_DAYS`` (when set) is refused like an unknown one (403,
as DRF answers when session authentication comes first); its owner can revoke a token, or
replace it, from the pages (``views/account.py``).
"""

from datetime import datetime, timedelta
from typing import Any, cast

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Field, Model
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions

from prb_annotate.db.plainsql import columns, fetch, instance

TOKEN_SQL = """
SELECT {token_columns}, {user_columns}
FROM {token_table} t JOIN {user_table} u ON u.{user_pk} = t.{token_user}
WHERE t.{token_pk} = %s
"""


EXPIRED = "Token has expired: ask /api/token/ for a new one, or make one on the API token page."


def token_expired(token: Any, now: datetime | None = None) -> bool:
    """Whether ``token`` is older than ``API_TOKEN_MAX_AGE_DAYS`` (never, when that is 0)."""
    days = settings.API_TOKEN_MAX_AGE_DAYS
    if days <= 0:
        return False
    return bool(token.created <= (now or timezone.now()) - timedelta(days=days))


class TokenAuthentication(authentication.TokenAuthentication):
    def authenticate_credentials(self, key: str) -> tuple[AbstractBaseUser, Model]:
        token_model = self.get_model()
        user_model = get_user_model()  # the model the token's user key refers to
        token_meta, user_meta = token_model._meta, user_model._meta
        sql = TOKEN_SQL.format(
            token_columns=columns(token_model, "t"),
            user_columns=columns(user_model, "u"),
            token_table=token_meta.db_table,
            user_table=user_meta.db_table,
            user_pk=user_meta.pk.column,
            token_user=cast(Field[Any, Any], token_meta.get_field("user")).column,
            token_pk=token_meta.pk.column,
        )
        rows = fetch(sql, [key])
        if not rows:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        token: Any = instance(token_model, rows[0])
        user: Any = instance(user_model, rows[0], len(token_meta.concrete_fields))
        if not user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        if token_expired(token):
            raise exceptions.AuthenticationFailed(EXPIRED)
        token.user = user
        return user, token
