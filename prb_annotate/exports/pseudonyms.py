"""Annotators' pseudonyms in exports: keyed by the server's secret, one set per campaign."""

import hashlib
import hmac

from django.conf import settings

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
