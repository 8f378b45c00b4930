"""The first records of an upload as they would be imported under a column mapping, for the
upload page to show before anything is written: each row's fields, or its problems."""

import io
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import IO

from django.conf import settings
from django.utils.translation import gettext, ngettext

from prb_annotate.datasets.budget import upload_budget
from prb_annotate.datasets.mapping import ColumnMapping
from prb_annotate.datasets.readers import SUFFIXES, BadEntry, Unreadable, read_entries
from prb_annotate.datasets.records import RecordInvalid, parse_record

PREVIEW_ROWS = 5


@dataclass(frozen=True)
class PreviewRow:
    line: int
    fields: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


@dataclass
class Preview:
    rows: list[PreviewRow] = field(default_factory=list)
    # Why no row could be shown (an archive, an unreadable file); empty when rows were read.
    note: str = ""


def preview_upload(
    data: bytes | IO[bytes], filename: str, mapping: ColumnMapping, rows: int = PREVIEW_ROWS
) -> Preview:
    """Up to ``rows`` records of a record file, read as ``import_upload`` would read them."""
    suffix = Path(filename).suffix.lower()
    if suffix not in SUFFIXES:
        return Preview(note=gettext("Only a single record file is previewed (not a .zip)."))
    stream: IO[bytes] = io.BytesIO(data) if isinstance(data, bytes) else data
    if stream.seekable():
        stream.seek(0)
    preview = Preview()
    entries = read_entries(stream, suffix, budget=upload_budget(), renames=mapping.renames)
    try:
        for line, entry, plain in islice(entries, rows):
            preview.rows.append(preview_row(line, entry, mapping, plain=plain))
    except Unreadable as exc:
        preview.note = exc.message
    if stream.seekable():
        stream.seek(0)
    return preview


def preview_row(
    line: int, entry: "dict[str, object] | BadEntry", mapping: ColumnMapping, *, plain: bool
) -> PreviewRow:
    if isinstance(entry, BadEntry):
        named = f"{entry.field}: {entry.message}" if entry.field else entry.message
        return PreviewRow(line, problems=[named])
    raw, renamed = mapping.apply(entry)
    try:
        record = parse_record(
            raw,
            max_text_chars=settings.PRB_MAX_TEXT_CHARS,
            default_category=mapping.default_category,
            plain=plain,
            spellings=mapping.spellings,
            renamed=renamed,
        )
    except RecordInvalid as exc:
        return PreviewRow(line, problems=[f"{p.field}: {p.message}" for p in exc.problems])
    context = record.extra.get("context_turns") or []
    fields = {
        "id": record.external_id,
        "category": record.category,
        "context": ngettext("%(count)d earlier turn", "%(count)d earlier turns", len(context))
        % {"count": len(context)},
        "question": record.question,
        "chosen": record.chosen,
        "rejected": record.rejected,
    }
    return PreviewRow(line, fields=fields)
