"""The tidy long table of a campaign's answers: one row per ``rater, unit, question, value``,
the layout that Python's ``krippendorff``, R's ``irr`` and ``irrCAC`` take once pivoted
(docs/export.md has an example for each).

The rows are the answers the audit's agreement reads: regular pairs, annotators out of the
audit left out; raters are the export's pseudonyms, units the record ids, questions those of
the audit (``rubric_fit``, ``differentiator``, ``quality_<side>_<criterion>``), values the
answers as stored (choices as words, ratings as whole numbers).
"""

import io

import pandas as pd

from prb_annotate.audit.campaign_audit import CampaignAudit
from prb_annotate.exports.pseudonyms import pseudonym
from prb_annotate.formats import spreadsheets
from prb_annotate.models import Campaign

COLUMNS = ("rater", "unit", "question", "value")


def long_table(campaign: Campaign, *, audit: CampaignAudit | None = None) -> pd.DataFrame:
    """The campaign's counted answers, one row per rater, unit and question, ordered by
    question, unit and rater. ``audit``: the campaign's audit as the caller holds it (else one
    is read)."""
    if audit is None:
        audit = CampaignAudit(campaign, lengths=False)
    counted = audit.counted
    raters = [pseudonym(campaign.pk, int(user_id)) for user_id in counted["annotator_id"]]
    parts = []
    for question in audit.questions:
        values = counted[question.column]
        if question.kind == "ordinal":
            values = values.astype("Int64")
        part = pd.DataFrame(
            {
                "rater": raters,
                "unit": counted["external_id"].to_numpy(),
                "question": question.name,
                "value": values.astype(object).to_numpy(),
            }
        )
        parts.append(part[part["value"].notna()])
    if not parts:
        return pd.DataFrame({column: [] for column in COLUMNS})
    table = pd.concat(parts, ignore_index=True)
    order = {question.name: n for n, question in enumerate(audit.questions)}
    table["_order"] = table["question"].map(order)
    table = table.sort_values(["_order", "unit", "rater"], kind="stable", ignore_index=True)
    return table[list(COLUMNS)]


def long_table_csv(campaign: Campaign, *, audit: CampaignAudit | None = None) -> str:
    """The long table as CSV, written through the neutralising writer like every CSV."""
    buffer = io.StringIO()
    writer = spreadsheets.writer(buffer)
    writer.writerow(COLUMNS)
    writer.writerows(long_table(campaign, audit=audit).itertuples(index=False, name=None))
    return buffer.getvalue()
