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

from prb_annotate import spreadsheets
from prb_annotate.audit.exclusions import left_out_annotators
from prb_annotate.audit.frames import annotations_frame, items_frame, thresholds_for
from prb_annotate.audit.questions import questions
from prb_annotate.audit.rule import counted_annotations
from prb_annotate.exports.pseudonyms import pseudonym
from prb_annotate.models import Campaign

COLUMNS = ("rater", "unit", "question", "value")


def long_table(campaign: Campaign) -> pd.DataFrame:
    """The campaign's counted answers, one row per rater, unit and question, ordered by
    question, unit and rater."""
    items = items_frame(campaign, lengths=False)
    frame = annotations_frame(campaign, items)
    counted = counted_annotations(frame, items, left_out_annotators(campaign))
    raters = [pseudonym(campaign.pk, int(user_id)) for user_id in counted["annotator_id"]]
    parts = []
    for question in questions(thresholds_for(campaign)):
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
    order = {question.name: n for n, question in enumerate(questions(thresholds_for(campaign)))}
    table["_order"] = table["question"].map(order)
    table = table.sort_values(["_order", "unit", "rater"], kind="stable", ignore_index=True)
    return table[list(COLUMNS)]


def long_table_csv(campaign: Campaign) -> str:
    """The long table as CSV, written through the neutralising writer like every CSV."""
    buffer = io.StringIO()
    writer = spreadsheets.writer(buffer)
    writer.writerow(COLUMNS)
    writer.writerows(long_table(campaign).itertuples(index=False, name=None))
    return buffer.getvalue()
