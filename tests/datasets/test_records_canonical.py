"""JSON Lines are decoded and encoded by orjson, with the standard library as the reference:
every line reads to the values ``json.loads`` gives, and every record to the canonical text
(and so the content hash) that ``json.dumps`` made before, so that importing a file again
into an existing database still changes nothing."""

import hashlib
import json
from datetime import date
from decimal import Decimal
from enum import IntEnum

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from prb_annotate.datasets.importing import import_path
from prb_annotate.datasets.readers import BadEntry, read_jsonl
from prb_annotate.datasets.records import (
    RecordInvalid,
    ascii_json,
    canonical_json,
    is_plain_json,
    orjson_texts,
    parse_record,
    standard_texts,
    type_name,
)
from prb_annotate.models import Pair

# Non-ASCII in and beyond the BMP, escapes, DEL and other control characters, a line separator,
# keys whose sorted order differs between ASCII and the rest, 64-bit integer limits.
PLAIN_RECORD = {
    "id": "tricky-1",
    "question": 'Café — “quoted” \\ back\tslash "q" 🎬? \x7f \x1f \u2028',
    "profile": [
        {"id": "p1", "category": "Art", "text": "日本語のテキスト 😀 </script>"},
        {
            "text": "plain",
            "z": 1,
            "a": [True, False, None, -(2**63), 2**64 - 1],
            "é": {"\uffff": "x", "e": "y"},
        },
    ],
    "rubric_aspects": [{"aspect": "A", "evidence": "line\nbreak\r\n", "reason": "Δ"}],
    "narrative": "",
    "category": "Society_and_Culture",
    "chosen": "C \ud7ff \ue000",
    "rejected": "R",
    "zeta": {"b": [1, 2, {"y": "ÿ"}], "a": "Ā"},
}
# Numbers only the standard library writes as before: an integer beyond 64 bits, and floats.
NUMBERS_RECORD = PLAIN_RECORD | {
    "id": "tricky-2",
    "alpha": 12345678901234567890123,
    "score": 0.1,
    "tiny": 1e-07,
    "huge": 1e16,
}
# Content hashes of these records as the import computed them before it used orjson.
HASHES = {
    "tricky-1": "143d027c653b596d6d65dca8c3ab96e03fd2385c9d1ef5d558cc5e20dbe31f7e",
    "tricky-2": "a9154187207c36c091dc723934c917f5059101095970f2aa87ef0308b1d9e047",
}


def jsonl(*records: dict) -> bytes:
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records).encode()


def test_it_hashes_tricky_records_as_it_always_has(db, tmp_path) -> None:
    path = tmp_path / "tricky.jsonl"
    path.write_bytes(jsonl(PLAIN_RECORD, NUMBERS_RECORD))
    assert import_path(path, "prb").created == 2
    stored = dict(Pair.objects.values_list("external_id", "content_hash"))
    assert stored == HASHES
    assert Pair.objects.get(external_id="tricky-2").extra["alpha"] == 12345678901234567890123

    report = import_path(path, "prb")
    assert (report.created, report.updated, report.unchanged) == (0, 0, 2)


@pytest.mark.parametrize("raw", [PLAIN_RECORD, NUMBERS_RECORD], ids=["plain", "numbers"])
def test_it_hashes_the_canonical_json_of_the_whole_content(raw) -> None:
    record = parse_record(raw, max_text_chars=1000)
    whole = canonical_json(record.content()).encode("ascii")
    assert record.content_hash == hashlib.sha256(whole).hexdigest() == HASHES[raw["id"]]
    assert standard_texts(record.content()) == (whole, record.json_text)
    assert parse_record(raw, max_text_chars=1000, plain=not raw.get("score")) == record


def test_orjson_and_the_standard_library_give_the_same_texts() -> None:
    content = parse_record(PLAIN_RECORD, max_text_chars=1000).content()
    assert is_plain_json(content)
    assert orjson_texts(content) == standard_texts(content)
    assert not is_plain_json(parse_record(NUMBERS_RECORD, max_text_chars=1000).content())


# Strings of any character but a lone surrogate (which orjson refuses to write).
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=12)
PLAIN_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**64 - 1) | TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=4),
    max_leaves=20,
)


@settings(max_examples=500, deadline=None)
@given(PLAIN_VALUES)
def test_orjson_text_is_the_standard_library_text(value) -> None:
    assert ascii_json(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)) == (
        canonical_json(value).encode("ascii")
    )


def test_what_orjson_cannot_write_goes_to_the_standard_library() -> None:
    deep: list = []
    for _ in range(300):
        deep = [deep]
    for value in ["broken \ud83d pair", 2**64, -(2**63) - 1, deep]:
        assert orjson_texts({"extra": value, "profile": [], "rubric_aspects": []}) is None

    raw = {"id": "s", "question": "Q?", "chosen": "broken \ud83d pair", "rejected": "R"}
    with pytest.raises(RecordInvalid) as failure:
        parse_record(raw, max_text_chars=1000, plain=True)
    assert [(item.field, item.message) for item in failure.value.problems] == [
        ("chosen", "text is not valid Unicode (lone surrogate)")
    ]


def test_the_fast_way_finds_nul_characters() -> None:
    raw = PLAIN_RECORD | {"profile": [{"text": "ok"}, {"text": "bad \x00 byte"}]}
    with pytest.raises(RecordInvalid) as failure:
        parse_record(raw, max_text_chars=1000, plain=True)
    assert [item.field for item in failure.value.problems] == ["profile[1].text"]


def reference_entries(data: bytes) -> list[tuple[int, str]]:
    """What the reader gave before it used orjson: ``json.loads`` on every line."""
    entries = []
    for number, line in enumerate(data.splitlines(keepends=True), start=1):
        try:
            text = line.decode("utf-8-sig" if number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            entries.append((number, f"not valid UTF-8 (byte {exc.start + 1})"))
            continue
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except json.JSONDecodeError as exc:
            entries.append((number, f"invalid JSON: {exc.msg} (column {exc.colno})"))
            continue
        except RecursionError:
            entries.append((number, "JSON nested too deeply"))
            continue
        if isinstance(value, dict):
            entries.append((number, repr(value)))
        else:
            entries.append((number, f"expected a JSON object, got {type_name(value)}"))
    return entries


TRICKY_LINES = [
    '\ufeff{"id": "bom"}',
    '{"big": 12345678901234567890123, "negative": -9223372036854775809}',
    '{"limits": [9223372036854775807, -9223372036854775808, 18446744073709551615]}',
    '{"floats": [0.1, -0.0, 1e-07, 1e16, 1E400, 2.5e-324, 123456789.123456789]}',
    '{"nan": NaN, "inf": Infinity}',
    '{"lone": "\\ud83d", "pair": "\\ud83d\\ude00"}',
    '{"nul": "a\\u0000b", "del": "\x7f", "escaped": "\\/\\b\\f"}',
    '{"duplicate": 1, "other": 2, "duplicate": 3}',
    "   ",
    "",
    "[1, 2]",
    '{"id": "x", "question": "Q?",}',
    '{"tab": "a\tb"}',
    '{"deep": ' + "[" * 990 + "]" * 990 + "}",
    '{"deeper": ' + "[" * 1020 + "]" * 1020 + "}",
    '{"text": "ordinary", "n": 3, "ok": true, "none": null}',
]


def test_it_reads_every_line_as_the_standard_library_does() -> None:
    data = "\n".join(TRICKY_LINES).encode() + b"\n" + b'{"latin": "caf\xe9"}\n'
    got, plain_lines = [], []
    for number, value, plain in read_jsonl(data.splitlines(keepends=True)):
        got.append((number, value.message if isinstance(value, BadEntry) else repr(value)))
        if plain:
            plain_lines.append(TRICKY_LINES[number - 1])
    assert got == reference_entries(data)
    # Float-free objects that orjson read take the fast way (deep nesting may not: that
    # depends on the room left on the stack); numbers orjson may read differently do not.
    assert plain_lines[:3] == [TRICKY_LINES[index] for index in (2, 6, 7)]
    assert plain_lines[-1] == TRICKY_LINES[-1]
    assert not any(line.startswith(('{"big"', '{"floats"', '{"nan"')) for line in plain_lines)


def test_only_plain_json_takes_the_fast_way() -> None:
    """Other formats (Parquet, CSV) take it too when their values allow."""
    assert is_plain_json({"a": [1, True, None, "x", {"b": []}]})
    for odd in [0.5, float("nan"), b"bytes", {1, 2}, (1, 2), date(2024, 1, 2), Decimal(1)]:
        assert not is_plain_json({"a": [odd]}), odd
    assert not is_plain_json({"a": Color.RED})


class Color(IntEnum):
    RED = 1
