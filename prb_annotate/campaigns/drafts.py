"""Drafts: an annotator's unsaved answers on the item they hold, saved by the annotation page
as they type, so that the same item opened on another device shows them. A draft is a copy of
the form's fields and nothing else reads it: it counts in no progress, audit or export until
the answers are submitted, when it is deleted.
"""

from collections.abc import Mapping

from django.contrib.auth.models import User

from prb_annotate.models import AnswerDraft, Assignment

# The form's own bookkeeping, fresh on every page: never restored.
NOT_KEPT = frozenset({"csrfmiddlewaretoken", "client_token", "time_on_task_ms"})
MAX_FIELDS = 60
MAX_CHARS = 5000


class DraftError(ValueError):
    """The draft was not kept; the message says why."""


def save_draft(assignment: Assignment, user: User, values: Mapping[str, str]) -> AnswerDraft:
    """Keep ``values`` as the draft of ``user``'s reserved ``assignment``; DraftError for an
    item that is not theirs to answer now or a body no form sends."""
    if assignment.annotator_id != user.pk or assignment.status != Assignment.Status.RESERVED:
        raise DraftError("This item is not yours to answer now.")
    kept = {key: str(value) for key, value in values.items() if key not in NOT_KEPT}
    if len(kept) > MAX_FIELDS or any(len(v) > MAX_CHARS for v in kept.values()):
        raise DraftError(f"A draft holds at most {MAX_FIELDS} fields of {MAX_CHARS} characters.")
    draft, _ = AnswerDraft.objects.update_or_create(
        assignment=assignment, defaults={"values": kept}
    )
    return draft


def draft_values(assignment: Assignment) -> dict[str, str]:
    """The reserved item's draft, as the form's values ({} when none)."""
    if assignment.status != Assignment.Status.RESERVED:
        return {}
    draft = AnswerDraft.objects.filter(assignment=assignment).first()
    return {str(k): str(v) for k, v in draft.values.items()} if draft else {}


def drop_draft(assignment_id: int) -> None:
    AnswerDraft.objects.filter(assignment_id=assignment_id).delete()
