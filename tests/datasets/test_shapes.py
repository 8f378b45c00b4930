"""Records in the shapes researchers hold: chat messages, two responses and a winner, a folder
``save_to_disk`` wrote, a renamed CSV; each read into pairs and exported back as it came."""

import csv
import json
from pathlib import Path

import pytest

from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.datasets.importing import ImportFailed, import_path
from prb_annotate.datasets.mapping import parse_mapping
from prb_annotate.exports.export import export_split
from prb_annotate.models import Dataset, Pair
from tests.support.importing import counts, official, write_jsonl
from tests.support.saved_datasets import write_saved_dataset, write_saved_dataset_dict

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "shapes"


def chat(index: int, answer: str = "Sure.", **changes: object) -> dict:
    prompt = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": f"Question {index}?"},
    ]
    record: dict[str, object] = {
        "id": f"c{index}",
        "chosen": [*prompt, {"role": "assistant", "content": f"Good answer {index}."}],
        "rejected": [*prompt, {"role": "assistant", "content": answer}],
    }
    record.update(changes)
    return record


def exported(dataset_name: str, tmp_path: Path) -> list[dict]:
    """The dataset's records as an export of all its pairs writes them."""
    campaign = create_campaign(Dataset.objects.get(name=dataset_name), "round trip", k=1)
    out = tmp_path / "export"
    export_split(campaign, out, subset="all", fmt="jsonl")
    return [
        json.loads(line)
        for path in sorted(out.glob("**/test.jsonl"))
        for line in path.read_text(encoding="utf-8").splitlines()
    ]


def by_id(records: list[dict], key: str = "id") -> dict:
    return {record[key]: record for record in records}


def test_it_reads_chat_messages_into_a_question_and_its_context(db, tmp_path: Path) -> None:
    import_path(FIXTURES / "chat_pairs.jsonl", "chat")
    pair = Pair.objects.get(external_id="chat-2")
    assert pair.question == "Mostly history, but long books put me off. Any advice?"
    assert pair.chosen.startswith("Try narrative history")
    assert pair.rejected == "Read faster."
    assert [turn["role"] for turn in pair.extra["context_turns"]] == ["user", "assistant"]
    assert Pair.objects.get(external_id="chat-1").extra["context_turns"] == [
        {"role": "system", "content": "You answer questions about gardening."}
    ]


def test_it_gives_chat_records_back_as_they_came(db, tmp_path: Path) -> None:
    originals = [json.loads(line) for line in (FIXTURES / "chat_pairs.jsonl").open()]
    import_path(FIXTURES / "chat_pairs.jsonl", "chat")
    assert by_id(exported("chat", tmp_path)) == by_id(originals)


def test_it_refuses_chat_answers_whose_prompts_differ(db, tmp_path: Path) -> None:
    other = chat(2)
    other["rejected"][1] = {"role": "user", "content": "Another question?"}
    path = write_jsonl(tmp_path / "chat.jsonl", [chat(1), other])
    with pytest.raises(ImportFailed) as failed:
        import_path(path, "chat")
    [problem] = failed.value.problems
    assert (problem.line, problem.record_id, problem.field) == (2, "c2", "rejected")
    assert "prompt turns differ from chosen's (turn 2)" in problem.message
    assert counts() == (0, 0)


def test_it_reads_two_responses_and_a_winner(db, tmp_path: Path) -> None:
    records: list[dict] = [
        {"id": "w1", "prompt": "Q1?", "response_a": "A1", "response_b": "B1", "winner": "model_a"},
        {"id": "w2", "prompt": "Q2?", "response_a": "A2", "response_b": "B2", "winner": "B"},
        {"id": "w3", "prompt": "Q3?", "response_a": "A3", "response_b": "B3", "label": 1},
    ]
    import_path(write_jsonl(tmp_path / "arena.jsonl", records), "arena")
    pairs = {pair.external_id: (pair.chosen, pair.rejected) for pair in Pair.objects.all()}
    assert pairs == {"w1": ("A1", "B1"), "w2": ("B2", "A2"), "w3": ("B3", "A3")}
    assert by_id(exported("arena", tmp_path)) == by_id(records)


def test_it_refuses_a_winner_that_names_neither_response(db, tmp_path: Path) -> None:
    records = [
        {"id": "t1", "prompt": "Q?", "response_a": "A", "response_b": "B", "winner": "tie"},
        {"id": "t2", "prompt": "Q?", "response_a": "A", "response_b": "B"},
    ]
    with pytest.raises(ImportFailed) as failed:
        import_path(write_jsonl(tmp_path / "ties.jsonl", records), "ties")
    found = [(p.record_id, p.field, p.message.split(" (")[0]) for p in failed.value.problems]
    assert found == [
        ("t1", "winner", "'tie' names neither response"),
        ("t2", "winner", 'missing field "winner"'),
    ]


def test_it_reads_a_saved_dataset_folder(db, tmp_path: Path) -> None:
    records = [official(index) for index in range(5)]
    folder = write_saved_dataset(tmp_path / "saved", records)
    report = import_path(folder, "saved")
    assert report.created == 5
    assert report.files == ["data-00000-of-00001.arrow"]
    assert by_id(exported("saved", tmp_path)) == by_id(records)


def test_it_reads_every_split_of_a_saved_dataset_dict(db, tmp_path: Path) -> None:
    """Splits are not categories: a record without one keeps none."""
    splits = {"train": [chat(1), chat(2)], "test": [chat(3, answer="No.")]}
    folder = write_saved_dataset_dict(tmp_path / "saved", splits)
    report = import_path(folder, "saved")
    assert report.files == ["test/data-00000-of-00001.arrow", "train/data-00000-of-00001.arrow"]
    assert set(Pair.objects.values_list("category", flat=True)) == {""}
    originals = [record for records in splits.values() for record in records]
    assert by_id(exported("saved", tmp_path)) == by_id(originals)


def test_it_reads_a_renamed_csv_under_its_mapping(db, tmp_path: Path) -> None:
    mapping = parse_mapping((FIXTURES / "renamed_mapping.json").read_text())
    import_path(FIXTURES / "renamed_pairs.csv", "renamed", mapping=mapping)
    pair = Pair.objects.get(external_id="r-2")
    assert pair.category == "Society_and_Culture"
    assert pair.question == "How do I start volunteering with little free time?"
    assert pair.rejected == "Volunteering takes too much time."
    again = exported("renamed", tmp_path)
    assert set(again[0]) == {"uid", "topic", "instruction", "better", "worse"}
    with (FIXTURES / "renamed_pairs.csv").open(newline="") as file:
        assert by_id(again, "uid") == by_id(list(csv.DictReader(file)), "uid")


def test_it_reads_spelled_winners_under_a_mapping(db, tmp_path: Path) -> None:
    mapping = parse_mapping((FIXTURES / "arena_mapping.json").read_text())
    import_path(FIXTURES / "arena_pairs.jsonl", "arena", mapping=mapping)
    pairs = Pair.objects.order_by("question")
    assert [pair.category for pair in pairs] == [
        "Society_and_Culture",
        "Art_and_Entertainment",
        "Lifestyle_and_Personal_Development",
    ]
    assert pairs[1].chosen.startswith("Paddington 2")
    originals = [json.loads(line) for line in (FIXTURES / "arena_pairs.jsonl").open()]
    key = "instruction"
    assert by_id(exported("arena", tmp_path), key) == by_id(originals, key)


def test_it_names_every_missing_csv_column_at_once(db, tmp_path: Path) -> None:
    path = tmp_path / "pairs.csv"
    path.write_text("uid,text,good\nr1,Q,A\n")
    with pytest.raises(ImportFailed) as failed:
        import_path(path, "pairs")
    [problem] = failed.value.problems
    assert problem.message == 'missing columns "chosen", "rejected", "question" (or "prompt")'
    mapping = parse_mapping('{"columns": {"chosen": "good", "question": "prompt_text"}}')
    with pytest.raises(ImportFailed) as failed:
        import_path(path, "pairs", mapping=mapping)
    expected = 'missing columns "rejected", "prompt_text" (or "prompt")'
    assert failed.value.problems[0].message == expected
