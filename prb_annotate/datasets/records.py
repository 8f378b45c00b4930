"""One file record <-> one Pair: validation on the way in, the original shape on the way out.

Two record shapes are accepted:

- the official schema: ``id``, ``question``, ``profile``, ``rubric_aspects``, ``narrative``,
  ``category``, ``chosen``, ``rejected``;
- the plain preference shape: ``prompt`` (or ``question``), ``chosen``, ``rejected`` and
  optionally ``id`` and ``category``.

Any other field is kept in ``Pair.extra`` unchanged. So that :func:`pair_to_record` can give a
record back exactly as it was read, a record that differs from the official shape stores how
under ``extra["_prb_shape"]`` (only then: official records keep ``extra`` free of it)::

    {"question_key": "prompt",           # the record said "prompt", not "question"
     "absent": ["profile", "narrative"], # known fields the record did not have
     "null": ["category"],               # known fields the record had as null
     "id_type": "int"}                   # the id was a JSON integer

A record without an id gets ``"sha256:" + content_hash[:16]``: the same content always gets the
same id, so importing the file again changes nothing.

This module never touches the database; ``importing`` does.
"""

import codecs
import functools
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import repeat
from json.encoder import encode_basestring_ascii
from typing import Any, Protocol

import orjson

from prb_annotate.datasets.shapes import ShapeProblem, normalize, restore
from prb_annotate.models import Dataset, Pair

SHAPE_KEY = "_prb_shape"
RECORD_ORDER = (
    "id",
    "question",
    "profile",
    "rubric_aspects",
    "narrative",
    "category",
    "chosen",
    "rejected",
)
OPTIONAL_FIELDS = ("id", "profile", "rubric_aspects", "narrative", "category")
PROFILE_ITEM_ORDER = ("id", "category", "text")
RUBRIC_ITEM_ORDER = ("aspect", "evidence", "reason")
JSON_FIELDS = ("profile", "rubric_aspects", "extra")
# The keys of ParsedRecord.content(), which the content hash covers.
CONTENT_FIELDS = (*RECORD_ORDER[1:], "extra")
# What JSON text decodes to, but for floats: orjson writes these as the standard library does.
PLAIN_SCALARS = frozenset({str, int, bool, type(None)})
# Column sizes of Pair: longer values are reported instead of failing inside the database.
MAX_ID_CHARS = 255
MAX_CATEGORY_CHARS = 200
GENERATED_ID_PREFIX = "sha256:"


@dataclass(frozen=True)
class FieldProblem:
    """What is wrong with one field of one record."""

    field: str
    message: str


class RecordInvalid(Exception):
    def __init__(self, problems: list[FieldProblem], record_id: str | None) -> None:
        super().__init__("; ".join(f"{item.field}: {item.message}" for item in problems))
        self.problems = problems
        self.record_id = record_id


@dataclass
class ParsedRecord:
    """A valid record, as the Pair fields it becomes."""

    external_id: str
    category: str
    question: str
    profile: list[Any]
    rubric_aspects: list[Any]
    narrative: str
    chosen: str
    rejected: str
    extra: dict[str, Any]
    question_key: str = "question"
    content_hash: str = ""
    # Canonical JSON text (ASCII) of profile, rubric_aspects and extra, made once for the hash
    # and written to the database as it is.
    json_text: dict[str, bytes] = field(default_factory=dict)

    def content(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "profile": self.profile,
            "rubric_aspects": self.rubric_aspects,
            "narrative": self.narrative,
            "category": self.category,
            "chosen": self.chosen,
            "rejected": self.rejected,
            "extra": self.extra,
        }

    def to_pair(self, dataset: Dataset) -> Pair:
        return Pair(
            dataset=dataset,
            external_id=self.external_id,
            content_hash=self.content_hash,
            **self.content(),
        )

    def field_name(self, name: str) -> str:
        """The name the file used for a Pair field (a plain record's "prompt")."""
        return self.question_key if name == "question" else name


class Checker:
    """Collects the problems of one record, so that all of them are reported at once."""

    def __init__(self, max_text_chars: int) -> None:
        self.max_text_chars = max_text_chars
        self.problems: list[FieldProblem] = []

    def add(self, field: str, message: str) -> None:
        self.problems.append(FieldProblem(field, message))

    def text(self, field: str, value: Any, *, required: bool = False) -> str:
        if not isinstance(value, str):
            self.add(field, f"expected a string, got {type_name(value)}")
            return ""
        if required and not value.strip():
            self.add(field, "empty text")
        elif len(value) > self.max_text_chars:
            self.add(
                field,
                f"text of {len(value):,} characters is over the limit of {self.max_text_chars:,}",
            )
        return value

    def required_text(self, raw: Mapping[str, Any], key: str, missing: str = "") -> str:
        if key not in raw:
            self.add(key, f"missing required field {missing or quoted(key)}")
            return ""
        return self.text(key, raw[key], required=True)

    def optional_text(self, raw: Mapping[str, Any], key: str) -> str:
        value = raw.get(key)
        return "" if value is None else self.text(key, value)

    def objects(
        self, raw: Mapping[str, Any], field: str, required_key: str, text_keys: tuple[str, ...]
    ) -> list[Any]:
        """A list of objects, each with a string ``required_key`` and optional string keys."""
        value = raw.get(field)
        if value is None:
            return []
        if not isinstance(value, list) or not all(map(isinstance, value, repeat(dict))):
            self.add(field, f"expected a list of objects, got {describe_list(value)}")
            return []
        limit = self.max_text_chars
        for index, item in enumerate(value):
            for key in text_keys:
                text = item.get(key)
                # The common case first: one type check and one length check per text.
                if type(text) is str and len(text) <= limit:
                    continue
                path = f"{field}[{index}].{key}"
                if text is not None:
                    self.text(path, text)
                elif key == required_key:
                    self.add(path, f'missing required key "{key}"')
        return value


def quoted(name: str) -> str:
    return f'"{name}"'


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def describe_list(value: Any) -> str:
    if isinstance(value, list):
        odd = next(item for item in value if not isinstance(item, dict))
        return f"a list containing {type_name(odd)}"
    return type_name(value)


def parse_record(
    raw: Mapping[str, Any],
    *,
    max_text_chars: int,
    default_category: str = "",
    plain: bool = False,
    spellings: Mapping[str, tuple[Any, ...]] | None = None,
    renamed: Mapping[str, str] | None = None,
) -> ParsedRecord:
    """Validate one record and map it to Pair fields; raises RecordInvalid listing every problem.

    ``default_category`` is used when the record has no category (an HF snapshot's config name).
    ``plain`` says that the reader has checked that the record holds only dicts, lists,
    strings, integers, booleans and nulls, no float (``readers.Entry.plain``), so that
    :func:`encode` need not look again. A chat-message record or one of two responses and a
    winner is read through ``shapes`` (``spellings``: a mapping's names for the winner).
    ``renamed`` (our field name -> the file's column) is what a column mapping renamed in
    ``raw``: kept so that the record goes back out under the file's names.
    """
    check = Checker(max_text_chars)
    try:
        raw, origin = normalize(raw, spellings)
    except ShapeProblem as exc:
        problems = [FieldProblem(name, message) for name, message in exc.problems]
        raise RecordInvalid(problems, raw_id(raw.get("id"))) from exc
    question_key = "question" if "question" in raw or "prompt" not in raw else "prompt"
    shape: dict[str, Any] = {}
    if question_key != "question":
        shape["question_key"] = question_key
    external_id = parse_id(raw.get("id"), check, shape)
    record = ParsedRecord(
        external_id=external_id or "",
        question=check.required_text(raw, question_key, missing='"question" (or "prompt")'),
        chosen=check.required_text(raw, "chosen"),
        rejected=check.required_text(raw, "rejected"),
        category=parse_category(raw.get("category"), check, default_category),
        narrative=check.optional_text(raw, "narrative"),
        profile=check.objects(raw, "profile", "text", ("text",)),
        rubric_aspects=check.objects(raw, "rubric_aspects", "aspect", RUBRIC_ITEM_ORDER),
        extra={key: value for key, value in raw.items() if key not in RECORD_ORDER},
        question_key=question_key,
    )
    record.extra.pop(question_key, None)
    if SHAPE_KEY in record.extra:
        check.add(SHAPE_KEY, "this field name is reserved")
    for key, value in record.extra.items():
        if has_nul(key):
            # Shown escaped: the name itself is what cannot be stored (nor printed).
            check.add(key.replace("\x00", "\\x00"), "field name contains a NUL character")
        elif isinstance(value, str):
            check.text(key, value)

    absent = [key for key in OPTIONAL_FIELDS if key not in raw]
    null = [key for key in OPTIONAL_FIELDS if key in raw and raw[key] is None]
    if absent:
        shape["absent"] = absent
    if null:
        shape["null"] = null
    if origin is not None:
        shape["origin"] = origin
    if renamed:
        shape["columns"] = dict(renamed)
    if shape:
        record.extra[SHAPE_KEY] = shape

    if not check.problems:
        encode(record, check, plain=plain)
    if check.problems:
        raise RecordInvalid(check.problems, external_id)
    if external_id is None:
        record.external_id = GENERATED_ID_PREFIX + record.content_hash[:16]
    return record


def parse_id(value: Any, check: Checker, shape: dict[str, Any]) -> str | None:
    """The record's id as text, or None when it has none (one is then derived from content)."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        shape["id_type"] = "int"
        return str(value)
    if not isinstance(value, str):
        check.add("id", f"expected a string, got {type_name(value)}")
        return None
    if not value.strip():
        check.add("id", "empty id")
    elif has_nul(value):
        check.add("id", "contains a NUL character")
    elif len(value) > MAX_ID_CHARS:
        check.add("id", f"longer than {MAX_ID_CHARS} characters")
    return value


def parse_category(value: Any, check: Checker, default: str) -> str:
    if value is None:
        return default
    if not isinstance(value, str):
        check.add("category", f"expected a string, got {type_name(value)}")
        return ""
    if len(value) > MAX_CATEGORY_CHARS:
        check.add("category", f"longer than {MAX_CATEGORY_CHARS} characters")
    return value


# Sorted keys and no whitespace: the same content always gives the same text, whatever the key
# order in the file or the database (PostgreSQL's jsonb reorders keys). ASCII output because
# CPython's encoder is faster at it, and the text is only hashed and stored, never shown.
CANONICAL_ENCODER = json.JSONEncoder(
    sort_keys=True, ensure_ascii=True, separators=(",", ":"), allow_nan=False
)


def canonical_json(value: Any) -> str:
    if type(value) is str:
        return encode_basestring_ascii(value)
    return CANONICAL_ENCODER.encode(value)


def encode(record: ParsedRecord, check: Checker, *, plain: bool = False) -> None:
    """Set the record's JSON texts and content hash: the sha256 of the canonical JSON of its
    content.

    A record of plain JSON values (no float; ``plain`` when the reader has checked that) is
    encoded by orjson, some ten times faster than the standard library on a long profile.
    ``ascii_json`` makes its text the standard library's, byte for byte: a content hash does
    not depend on the way taken, and importing a file again still changes nothing.
    """
    content = record.content()
    texts = orjson_texts(content) if plain or is_plain_json(content) else None
    from_orjson = texts is not None
    if texts is None:
        try:
            texts = standard_texts(content)
        except (TypeError, ValueError):
            report_unstorable(record, check)
            return
    text, json_text = texts
    # Neither database stores these (PostgreSQL refuses NUL, and no driver encodes a lone
    # surrogate): the escapes in the ASCII text show cheaply whether a record needs a look.
    # orjson refuses to encode a lone surrogate, so only the standard library's text has one.
    if b"\\u0000" in text:
        report_texts(record, check, has_nul, "text contains a NUL character")
    if not from_orjson and b"\\ud" in text:
        report_texts(record, check, has_surrogate, "text is not valid Unicode (lone surrogate)")
    record.content_hash = hashlib.sha256(text).hexdigest()
    record.json_text = json_text


JsonTexts = tuple[bytes, dict[str, bytes]]


def standard_texts(content: dict[str, Any]) -> JsonTexts:
    """The canonical JSON of the content, and of its JSON fields, by the standard library:
    each field is encoded once, and the whole assembled from the fields."""
    parts = {key: canonical_json(value).encode("ascii") for key, value in content.items()}
    pieces: list[bytes] = []
    for key, prefix in CANONICAL_PREFIXES:
        pieces += (prefix, parts[key])
    pieces.append(b"}")
    return b"".join(pieces), {key: parts[key] for key in JSON_FIELDS}


# Each content field in the order of sorted keys, with what comes before its value.
CANONICAL_PREFIXES = tuple(
    (key, f'{"," if index else "{"}"{key}":'.encode())
    for index, key in enumerate(sorted(CONTENT_FIELDS))
)


def orjson_texts(content: dict[str, Any]) -> JsonTexts | None:
    """The same texts by orjson, or None when orjson cannot write a value (a lone surrogate,
    an integer beyond 64 bits, deep nesting): the standard library then does.

    For plain values orjson's text is the canonical text once ``ascii_json`` has escaped
    non-ASCII characters and DEL. Floats it writes differently (``1e-7`` where the standard
    library writes ``1e-07``), and NaN as null: the caller rules them out.
    """
    try:
        whole = orjson.dumps(content, option=orjson.OPT_SORT_KEYS)
        fields = {
            key: orjson.dumps(content[key], option=orjson.OPT_SORT_KEYS) for key in JSON_FIELDS
        }
    except TypeError:
        return None
    if not whole.isascii() or b"\x7f" in whole:
        whole = ascii_json(whole)
        fields = {key: ascii_json(text) for key, text in fields.items()}
    return whole, fields


def is_plain_json(value: Any) -> bool:
    """Whether ``value`` holds only dicts, lists, strings, integers, booleans and nulls (exact
    types: a subclass such as an IntEnum may be written differently)."""
    try:
        return holds_only_plain_json(value)
    except RecursionError:
        return False


def holds_only_plain_json(value: Any) -> bool:
    kind = type(value)
    if kind is not dict and kind is not list:
        return kind in PLAIN_SCALARS
    for item in value.values() if kind is dict else value:
        kind = type(item)
        if kind is str:
            continue
        if kind is dict or kind is list:
            if not holds_only_plain_json(item):
                return False
        elif kind not in PLAIN_SCALARS:
            return False
    return True


JSON_ESCAPE = "prb_annotate.json_escape"


def escape_as_json(error: UnicodeError) -> tuple[str, int]:
    """Codec error handler: the characters ASCII lacks as JSON escapes, as ``json.dumps``
    writes them (lowercase hex; a character beyond the BMP as its UTF-16 surrogate pair)."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    units = error.object[error.start : error.end].encode("utf-16-be").hex("u", 2)
    return "\\u" + units.replace("u", "\\u"), error.end


codecs.register_error(JSON_ESCAPE, escape_as_json)


def ascii_json(encoded: bytes) -> bytes:
    """orjson's UTF-8 JSON text as the standard library's ASCII text (``ensure_ascii``)."""
    if not encoded.isascii():
        encoded = encoded.decode("utf-8").encode("ascii", JSON_ESCAPE)
    # DEL is the one ASCII character json.dumps escapes and orjson does not. It can only be
    # inside a string, so every one is replaced.
    return encoded.replace(b"\x7f", b"\\u007f")


def fields_by_name(record: ParsedRecord) -> dict[str, Any]:
    """Every field under the name the file gave it (extra fields at the top level)."""
    fields = {record.field_name(key): value for key, value in record.content().items()}
    del fields["extra"]
    fields.update(record.extra)
    fields.pop(SHAPE_KEY, None)
    return fields


def report_unstorable(record: ParsedRecord, check: Checker) -> None:
    for name, value in fields_by_name(record).items():
        try:
            canonical_json(value)
        except TypeError as exc:
            check.add(name, f"value cannot be stored as JSON ({exc})")
        except ValueError:
            check.add(name, "not a finite number (NaN or infinity)")


def report_texts(
    record: ParsedRecord, check: Checker, is_bad: Callable[[str], bool], message: str
) -> None:
    for name, value in fields_by_name(record).items():
        path = find_text(value, name, is_bad)
        if path is not None:
            check.add(path, message)


def has_nul(text: str) -> bool:
    return "\x00" in text


SURROGATE = re.compile("[\ud800-\udfff]")


def has_surrogate(text: str) -> bool:
    # A decoded str holds a character outside the BMP as one code point, so any code point
    # in the surrogate range is one half of a broken pair.
    return SURROGATE.search(text) is not None


def find_text(value: Any, path: str, is_bad: Callable[[str], bool]) -> str | None:
    """Where in ``value`` a text (or an object key) is bad, e.g. ``profile[3].text``."""
    if isinstance(value, str):
        return path if is_bad(value) else None
    if isinstance(value, list):
        items = [(f"{path}[{index}]", item) for index, item in enumerate(value)]
    elif isinstance(value, dict):
        if any(is_bad(key) for key in value):
            return path
        items = [(f"{path}.{key}", item) for key, item in value.items()]
    else:
        return None
    return next((found for where, item in items if (found := find_text(item, where, is_bad))), None)


class PairFields(Protocol):
    """What :func:`pair_to_record` reads: a Pair, or a row read without building the model."""

    @property
    def external_id(self) -> str: ...
    @property
    def category(self) -> str: ...
    @property
    def question(self) -> str: ...
    @property
    def profile(self) -> Any: ...
    @property
    def rubric_aspects(self) -> Any: ...
    @property
    def narrative(self) -> str: ...
    @property
    def chosen(self) -> str: ...
    @property
    def rejected(self) -> str: ...
    @property
    def extra(self) -> Any: ...


def pair_to_record(pair: PairFields) -> dict[str, Any]:
    """The record as it was imported: equal, as a dict, to what the file held.

    Keys come in the official order (id, question, profile, rubric_aspects, narrative, category,
    chosen, rejected), then the unknown fields sorted by name, with nested unknown keys sorted
    too, so that an export is byte-identical on SQLite and on PostgreSQL (whose jsonb does not
    keep key order). A plain-shape record comes back in its plain shape.
    """
    extra = dict(pair.extra)
    shape = extra.pop(SHAPE_KEY, {})
    absent = set(shape.get("absent", []))
    null = set(shape.get("null", []))
    values: dict[str, Any] = {
        "id": int(pair.external_id) if shape.get("id_type") == "int" else pair.external_id,
        "question": pair.question,
        "profile": [ordered(item, PROFILE_ITEM_ORDER) for item in pair.profile],
        "rubric_aspects": [ordered(item, RUBRIC_ITEM_ORDER) for item in pair.rubric_aspects],
        "narrative": pair.narrative,
        "category": pair.category,
        "chosen": pair.chosen,
        "rejected": pair.rejected,
    }
    record: dict[str, Any] = {}
    for key in RECORD_ORDER:
        if key in absent:
            continue
        name = shape.get("question_key", "question") if key == "question" else key
        record[name] = None if key in null else values[key]
    for key in sorted(extra):
        record[key] = sorted_keys(extra[key])
    origin = shape.get("origin")
    if origin is not None:
        record = restore(record, origin)
    columns = shape.get("columns")
    if columns:
        record = {columns.get(key, key): value for key, value in record.items()}
    return record


def raw_id(value: Any) -> str | None:
    """A record's id for a message about it, before it is checked."""
    if isinstance(value, str | int) and not isinstance(value, bool):
        return str(value)
    return None


def ordered(item: Any, order: tuple[str, ...]) -> Any:
    """A profile post or rubric aspect with its keys in schema order, then the others sorted.

    An item already in that order with plain values (the usual case: SQLite keeps the order
    of the file) is given back as it is, not copied; one with plain values in another order
    is only reordered.
    """
    if not isinstance(item, dict):
        return item
    keys = tuple(item)
    layout = key_order(keys, order)
    if SCALARS.issuperset(map(type, item.values())):
        # Plain values need no sorting of their own; PostgreSQL's jsonb gives the keys in
        # its own order, so only the order changes.
        return item if layout == keys else {key: item[key] for key in layout}
    return {key: sorted_keys(item[key]) for key in layout}


SCALARS = frozenset({str, int, float, bool, type(None)})


@functools.lru_cache(maxsize=1024)
def key_order(keys: tuple[str, ...], order: tuple[str, ...]) -> tuple[str, ...]:
    # Posts and aspects share a handful of key sets: each set's order is worked out once.
    return (*(key for key in order if key in keys), *sorted(set(keys) - set(order)))


def sorted_keys(value: Any) -> Any:
    if type(value) is str:  # the common case, first
        return value
    if isinstance(value, dict):
        return {key: sorted_keys(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [sorted_keys(item) for item in value]
    return value
