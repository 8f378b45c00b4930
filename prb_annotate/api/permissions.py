"""API access, the same rules as the web pages (see ``prb_annotate.security.access``).

- Staff manage the instance: datasets, pairs, new campaigns.
- A campaign's managers (staff, or members with the manager role) see and change it, its
  progress, audit and exports; for anyone else it does not exist (404, no existence leak).
- Anonymous requests are refused by the default IsAuthenticated permission before any of this.
"""

from typing import Any

from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from prb_annotate.models import Campaign
from prb_annotate.security.access import is_staff, managed_campaign_or_404


class IsStaff(BasePermission):
    message = "Staff only."

    def has_permission(self, request: Request, view: Any) -> bool:
        return is_staff(request.user)


def managed_campaign(request: Request, campaign_id: int) -> Campaign:
    """The campaign when the user manages it; Http404 otherwise (DRF answers 404)."""
    return managed_campaign_or_404(request.user, campaign_id)
