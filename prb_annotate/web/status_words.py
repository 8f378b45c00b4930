"""The words the pages show for stored states (a campaign's status, a background job's state).

The stored value is a code — the API and the database keep it, and templates compare with it —
while a page shows the word in the request's language. A value without a word here is shown as
it is stored.
"""

from django.utils.translation import pgettext_lazy

from prb_annotate.campaigns.setting_fields import StrOrPromise
from prb_annotate.models import Campaign, Job

STATUS_WORDS: dict[str, StrOrPromise] = {
    Campaign.Status.DRAFT: pgettext_lazy("status", "draft"),
    Campaign.Status.ACTIVE: pgettext_lazy("status", "active"),
    Campaign.Status.PAUSED: pgettext_lazy("status", "paused"),
    Campaign.Status.CLOSED: pgettext_lazy("status", "closed"),
    Job.Status.QUEUED: pgettext_lazy("status", "queued"),
    Job.Status.RUNNING: pgettext_lazy("status", "running"),
    Job.Status.DONE: pgettext_lazy("status", "done"),
    Job.Status.FAILED: pgettext_lazy("status", "failed"),
    Job.Status.CANCELLED: pgettext_lazy("status", "cancelled"),
}


def status_word(value: str) -> str:
    """The word for the stored state ``value``, in the active language."""
    return str(STATUS_WORDS.get(value, value))
