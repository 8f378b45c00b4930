"""Choice sets the OpenAPI schema names apart (settings.SPECTACULAR_SETTINGS'
``ENUM_NAME_OVERRIDES``): several components have a field called ``status`` or ``kind`` with
different values, and each set gets a name of its own instead of a hash."""

from prb_annotate.jobs.running import JOB_KINDS, JOB_STATUSES
from prb_annotate.models import Campaign

CAMPAIGN_STATUSES = Campaign.Status.choices

__all__ = ["CAMPAIGN_STATUSES", "JOB_KINDS", "JOB_STATUSES"]
