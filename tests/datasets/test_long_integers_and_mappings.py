"""Integers longer than Python converts, and mapping files that are not UTF-8: named problems,
never a server error or a traceback."""

import io
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from prb_annotate.datasets.mapping import MappingInvalid, parse_mapping
from prb_annotate.models import Dataset

BIG = "9" * 5000
RECORD = (
    '{"id": "r1", "question": "q", "chosen": "a", "rejected": "b", "extra": {"x": [1, '
    + BIG
    + "]}}"
)
FILES = {
    "big.jsonl": RECORD + "\n",
    "big.json": "[\n" + RECORD + "\n]",
    "big.csv": 'id,question,chosen,rejected,profile\nr1,q,a,b,"[' + BIG + ']"\n',
}
FIELDS = {"big.jsonl": "extra", "big.json": "extra", "big.csv": "profile"}


@pytest.mark.parametrize("name", sorted(FILES))
def test_the_command_names_an_integer_too_long_to_read(db, tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text(FILES[name], encoding="utf-8")
    with pytest.raises(CommandError) as failed:
        call_command("import_pairs", str(path), "--dataset", "big")
    message = str(failed.value)
    line = 2 if name != "big.jsonl" else 1
    assert f'{name} line {line} (id "r1"), field "{FIELDS[name]}"' in message
    assert "an integer of 5000 digits; at most 4300 digits can be read" in message
    assert not Dataset.objects.filter(name="big").exists()


@pytest.mark.parametrize("name", sorted(FILES))
def test_the_api_and_the_page_name_an_integer_too_long_to_read(
    manager: User, login, name: str
) -> None:
    client = login(manager)
    data = FILES[name].encode()
    upload = io.BytesIO(data)
    upload.name = name
    api = client.post("/api/datasets/", {"file": upload, "name": "big"})
    assert api.status_code == 400, api.content
    assert FIELDS[name] in api.json()["errors"]
    assert "5000 digits" in api.content.decode()

    upload = io.BytesIO(data)
    upload.name = name
    page = client.post("/datasets/upload/", {"file": upload, "name": "big"})
    assert page.status_code in (200, 400), page.status_code
    assert "5000 digits" in page.content.decode()

    upload = io.BytesIO(data)
    upload.name = name
    preview = client.post("/datasets/upload/", {"file": upload, "name": "big", "preview": "on"})
    assert preview.status_code == 200
    assert f"{FIELDS[name]}: " in preview.content.decode()
    assert "5000 digits" in preview.content.decode()
    assert not Dataset.objects.filter(name="big").exists()


def test_a_json_list_goes_on_after_a_record_with_a_long_integer(db, tmp_path: Path) -> None:
    path = tmp_path / "two.json"
    good = '{"id": "r2", "question": "q", "chosen": "a", "rejected": "b", "n": 3}'
    path.write_text(f"[\n{RECORD},\n{good}, 7\n]", encoding="utf-8")
    with pytest.raises(CommandError) as failed:
        call_command("import_pairs", str(path), "--dataset", "two")
    message = str(failed.value)
    assert "2 problems" in message
    assert 'two.json line 2 (id "r1"), field "extra": x[1]: an integer of 5000' in message
    assert "two.json line 3: expected a JSON object, got" in message


def test_a_mapping_file_that_is_not_utf8_is_a_command_error(db, tmp_path: Path) -> None:
    data = tmp_path / "pairs.jsonl"
    data.write_text('{"id": "r1", "question": "q", "chosen": "a", "rejected": "b"}\n')
    mapping = tmp_path / "mapping.json"
    mapping.write_bytes(b'{"columns": {"question": "caf\xe9"}}')
    with pytest.raises(CommandError, match=r"mapping: not valid UTF-8 \(byte 30\)"):
        call_command("import_pairs", str(data), "--dataset", "m", "--mapping", str(mapping))


def test_a_mapping_in_utf16_still_reads() -> None:
    text = '{"category": {"value": "Art"}}'
    assert parse_mapping(text.encode("utf-16")).default_category == "Art"
    with pytest.raises(MappingInvalid, match="not valid UTF-8"):
        parse_mapping(b"\xff\xfe\xff")


@pytest.mark.parametrize(
    ("name", "text", "fragment"),
    [
        ("after.jsonl", '{"id": "r1", "n": ' + BIG + ", oops}\n", "invalid JSON"),
        ("after.json", '[{"id": "r1", "n": ' + BIG + ", oops}]", "invalid JSON"),
        (
            "after.csv",
            'question,chosen,rejected,profile\nq,a,b,"[' + BIG + ', oops]"\n',
            "in the cell",
        ),
    ],
)
def test_a_long_integer_before_broken_json_is_still_a_named_problem(
    db, tmp_path: Path, name: str, text: str, fragment: str
) -> None:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CommandError, match=fragment):
        call_command("import_pairs", str(path), "--dataset", "after")
