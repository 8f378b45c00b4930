"""Records in the official schema and files of them, for the import tests."""

import json
from pathlib import Path

from prb_annotate.models import Dataset, Pair

ART = "Art_and_Entertainment"
LIFE = "Lifestyle_and_Personal_Development"


def official(index: int, *, category: str = ART, **changes) -> dict:
    record = {
        "id": f"r{index:03d}",
        "question": f"Which film should I watch tonight, question {index}?",
        "profile": [
            {"id": f"r{index:03d}-p0", "category": category, "text": "I loved *Arrival*."},
            {"id": f"r{index:03d}-p1", "category": LIFE, "text": "Weeknights I have 2 hours."},
        ],
        "rubric_aspects": [
            {"aspect": "Short answers", "evidence": "Asks for quick picks", "reason": "Busy"}
        ],
        "narrative": "I want one recommendation, not a list.",
        "category": category,
        "chosen": f"Watch **Contact** (1997), answer {index}.",
        "rejected": f"Here are ten classic science-fiction films, answer {index}: ...",
    }
    record.update(changes)
    return record


def write_jsonl(path: Path, records: list) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def counts() -> tuple[int, int]:
    return Dataset.objects.count(), Pair.objects.count()
