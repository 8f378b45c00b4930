"""An answer file names a pair whose id has blanks at its edges (a dataset may keep ``" p1"``):
the id as written is matched first, the trimmed one otherwise, as before."""

import io
import json

from django.contrib.auth.models import User

from prb_annotate.campaigns.external.importing import import_answers
from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.datasets.importing import import_upload
from prb_annotate.models import Annotation


def test_an_id_with_edge_blanks_is_named_as_written(manager: User) -> None:
    records = [
        {"id": " p1", "question": "Why?", "chosen": "Yes.", "rejected": "No."},
        {"id": "p2", "question": "How?", "chosen": "So.", "rejected": "Not so."},
    ]
    content = "".join(json.dumps(record) + "\n" for record in records).encode()
    dataset = import_upload(content, "pairs.jsonl", "edges").dataset
    assert set(dataset.pairs.values_list("external_id", flat=True)) == {" p1", "p2"}
    campaign = create_campaign(dataset, "elsewhere", k=1, external=True, created_by=manager)
    rows = [
        {"pair_id": " p1", "annotator": "a1", "rubric_fit": "chosen", "differentiator": "quality"},
        {"pair_id": " p2 ", "annotator": "a1", "rubric_fit": "tie", "differentiator": "none"},
    ]
    answers = "".join(json.dumps(row) + "\n" for row in rows).encode()

    report = import_answers(campaign, "answers.jsonl", io.BytesIO(answers))
    assert report.record.answers == 2
    answered = Annotation.objects.filter(assignment__campaign=campaign).values_list(
        "assignment__item__pair__external_id", flat=True
    )
    assert sorted(answered) == [" p1", "p2"]
