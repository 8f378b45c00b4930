"""Annotators' pseudonyms in exports: keyed by the server's secret, one set per campaign."""

import hashlib
import hmac
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib.auth.models import User

if TYPE_CHECKING:
    from prb_annotate.models import Campaign

# How a pseudonym is made, as the manifest states it.
PSEUDONYM_RULE = "hmac-sha256(secret, campaign, user id)[:16]"


def pseudonym(campaign_id: int, user_id: int) -> str:
    """A stable pseudonym for an annotator in one campaign's exports.

    The key is derived from the server's SECRET_KEY and the campaign id, so the same annotator
    gets the same pseudonym in every export of a campaign, different ones in different
    campaigns, and nobody without the server's secret can map a pseudonym back to an account
    (user ids are small integers: an unkeyed hash of them would be reversed by enumeration).
    """
    campaign_key = hmac.new(
        settings.SECRET_KEY.encode(),
        f"prb-annotate export pseudonym, campaign {campaign_id}".encode(),
        hashlib.sha256,
    ).digest()
    return hmac.new(campaign_key, str(user_id).encode(), hashlib.sha256).hexdigest()[:16]


def campaign_pseudonyms(campaign: "Campaign") -> dict[str, str]:
    """Username -> pseudonym for every account that may be named in the campaign's audit: its
    members (a study participant's username holds their Prolific id), the managers who
    adjudicated or left someone out."""
    from prb_annotate.models import Adjudication, AnnotatorExclusion, Membership

    user_ids = set(Membership.objects.filter(campaign=campaign).values_list("user_id", flat=True))
    user_ids |= set(
        Adjudication.objects.filter(item__campaign=campaign, decided_by__isnull=False).values_list(
            "decided_by_id", flat=True
        )
    )
    user_ids |= set(
        AnnotatorExclusion.objects.filter(campaign=campaign, excluded_by__isnull=False).values_list(
            "excluded_by_id", flat=True
        )
    )
    users = User.objects.filter(pk__in=user_ids).values_list("pk", "username")
    return {username: pseudonym(campaign.pk, user_id) for user_id, username in users}


def pseudonymised(value: Any, names: Mapping[str, str]) -> Any:
    """``value`` (a JSON-ready structure) with every string, and every key, that is a username
    of ``names`` replaced by its pseudonym: what a file meant for sharing holds."""
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, Mapping):
        return {
            pseudonymised(key, names): pseudonymised(item, names) for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [pseudonymised(item, names) for item in value]
    return value
