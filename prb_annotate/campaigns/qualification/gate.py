"""The gate before the queue: whether a member may be handed regular items.

A member is *cleared* when they have answered every practice item of the campaign, and either
the campaign has no qualification item or their qualification record says passed or let in by
a manager. ``CLEARED_SQL`` states it once, over ``prb_annotate_membership m``, for the queue
(``assignment.py``) and the submit (``annotating.py``), which read it in the statement that
reads the rest of what they decide on; ``is_cleared`` is the same rule for the pages.

Most campaigns have neither practice nor qualification. For them the columns below answer
from one probe of the campaign's qualification items (an index lookup) and never run the
rule's subqueries: a CASE evaluates its branches in order, on SQLite and PostgreSQL alike.
"""

from prb_annotate.db.plainsql import fetch

CLEARED_SQL = """
((NOT EXISTS (SELECT 1 FROM prb_annotate_qualificationitem gq
              WHERE gq.campaign_id = m.campaign_id AND gq.phase = 'qualification')
  OR EXISTS (SELECT 1 FROM prb_annotate_qualificationrecord gr
             WHERE gr.membership_id = m.id AND gr.outcome IN ('passed', 'admitted')))
 AND NOT EXISTS (SELECT 1 FROM prb_annotate_qualificationitem gp
                 WHERE gp.campaign_id = m.campaign_id AND gp.phase = 'practice'
                   AND NOT EXISTS (SELECT 1 FROM prb_annotate_qualificationanswer ga
                                   WHERE ga.item_id = gp.id AND ga.annotator_id = m.user_id)))
"""

# Whether the campaign (by the column ``{campaign}``) has no practice or qualification item.
NO_GATE_TEMPLATE = """
NOT EXISTS (SELECT 1 FROM prb_annotate_qualificationitem gi WHERE gi.campaign_id = {campaign})
"""

# 1 when the member is cleared, as a column of a statement over ``prb_annotate_membership m``.
CLEARED_COLUMN_TEMPLATE = "CASE WHEN {no_gate} THEN 1 WHEN {cleared} THEN 1 ELSE 0 END"
CLEARED_COLUMN = CLEARED_COLUMN_TEMPLATE.format(
    no_gate=NO_GATE_TEMPLATE.format(campaign="m.campaign_id"), cleared=CLEARED_SQL
)

# 1 when the submit is refused because the member is not cleared, as a column of a statement
# over ``prb_annotate_membership m``. The submit reads it beside the annotator membership that
# lets the account answer at all: an account that is no longer an annotator of the campaign
# answers nothing, not even on the assignments it still owns (``annotating.py``).
BLOCKED_SUBMIT_COLUMN = f"1 - {CLEARED_COLUMN}"

IS_CLEARED_TEMPLATE = """
SELECT {cleared} FROM prb_annotate_membership m
WHERE m.campaign_id = %s AND m.user_id = %s
"""
IS_CLEARED_SQL = IS_CLEARED_TEMPLATE.format(cleared=CLEARED_COLUMN)


def is_cleared(campaign_id: int, user_id: int) -> bool:
    """Whether the member may have regular items (True for someone who is not a member)."""
    rows = fetch(IS_CLEARED_SQL, [campaign_id, user_id])
    return not rows or bool(rows[0][0])
