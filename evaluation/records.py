"""Read preference pairs from exported files and keep only what a model may see.

Accepted files: JSONL, JSON (a list of objects, or an object with a ``data`` list), CSV (nested
fields as JSON text, as the exporter writes them) and Parquet; or a folder in the Hugging Face
layout, one sub-folder per config holding one file per split::

    DIR/<config>/<split>.<ext>                  (the exporter's layout)
    DIR/<config>/<split>-00000-of-00001.parquet (the Hub's layout)

Files at the top of such a folder (manifest, annotations) are not records and are skipped.
A folder written by the exporter is read through its ``manifest.json``: only the record files
it lists, so a Parquet export extracted over a JSONL one reads once, not twice.

Two record shapes are read: the official schema (``id, question, profile, rubric_aspects,
narrative, category, chosen, rejected``) and the plain preference shape (``prompt`` or
``question``, ``chosen``, ``rejected``, optional ``id`` and ``category``).

``rubric_aspects`` and ``narrative`` describe what the user expects; feeding them to a reward
model would hand it the answer, so :func:`to_pair_record` drops them and :class:`PairRecord`
has no place for them: the code that builds model inputs only ever sees a ``PairRecord``.
"""

import csv
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from evaluation.errors import EvaluationError

# Never passed to a model (see the module docstring).
PRIVATE_FIELDS = frozenset({"rubric_aspects", "narrative"})
MODEL_FIELDS = frozenset({"id", "question", "prompt", "profile", "category", "chosen", "rejected"})
DATA_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")
# Each verdict's audit subset: excluded is every pair that did not pass, failed or still
# undecided. The one definition score, compare, the exporter's splits and the app's evaluations
# share.
SUBSET_OF_VERDICT = {"validated": "validated", "excluded": "excluded", "undecided": "excluded"}
EXCLUDED_VERDICTS = tuple(v for v, subset in SUBSET_OF_VERDICT.items() if subset == "excluded")
# An export's manifest and the format it names: the exporter writes them
# (prb_annotate/exports/manifest.py), this module and the app's dataset import read them.
EXPORT_MANIFEST = "manifest.json"
EXPORT_FORMAT = "prb-annotate export"


def audit_subset(verdict: Any) -> str | None:
    """The audit subset of a verdict (``validated`` or ``excluded``); ``None`` for anything
    else, such as a pair without a verdict."""
    return SUBSET_OF_VERDICT.get(str(verdict)) if verdict is not None else None


@dataclass(frozen=True)
class ProfilePost:
    text: str
    id: str = ""
    category: str = ""


@dataclass(frozen=True)
class PairRecord:
    """One pair as a model may see it, plus labels (never shown to a model) to group results by.

    ``labels`` holds the record's other scalar fields, flattened with dots (``validation.verdict``),
    and ``config`` / ``split`` when the record came from a folder.
    """

    id: str
    question: str
    chosen: str
    rejected: str
    category: str = ""
    profile: tuple[ProfilePost, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)


def load_records(path: str | Path, *, split: str | None = None) -> list[PairRecord]:
    """Every pair in a file or an HF-style folder, in file order (configs sorted by name).

    ``split`` picks one split of a folder (``test``); by default every split is read.
    Raises :class:`EvaluationError` naming the file, record and field when the shape is wrong.
    """
    return normalize_records(read_raw_records(path, split=split))


def normalize_records(raw: Iterable[tuple[str, Mapping[str, Any]]]) -> list[PairRecord]:
    """``(location, raw record)`` items to pairs; ids must be unique."""
    records: list[PairRecord] = []
    seen: dict[str, str] = {}
    for index, (location, item) in enumerate(raw):
        record = to_pair_record(item, index=index, location=location)
        if record.id in seen:
            raise EvaluationError(
                f"{location}: record id {record.id!r} is used twice (first at {seen[record.id]})"
            )
        seen[record.id] = location
        records.append(record)
    return records


def read_raw_records(
    path: str | Path, *, split: str | None = None
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Raw records with their location (``file:line`` or ``file#row``) for error messages."""
    path = Path(path)
    if path.is_dir():
        files = folder_files(path, split)
        if not files:
            wanted = f"split {split!r}" if split else "data files"
            raise EvaluationError(f"{path}: no {wanted} in config sub-folders (DIR/<config>/...)")
        for config, split_name, file in files:
            for location, item in read_file(file):
                item.setdefault("category", config)
                yield location, {**item, "__config": config, "__split": split_name}
        return
    if not path.exists():
        raise EvaluationError(f"{path}: no such file or folder")
    yield from read_file(path)


def folder_files(root: Path, split: str | None) -> list[tuple[str, str, Path]]:
    """``(config, split, file)`` for each data file one level down, sorted for a stable order;
    for an export folder, the files its manifest lists."""
    listed = manifest_files(root)
    if listed is not None:
        return [item for item in listed if split is None or item[1] == split]
    found = []
    for config_dir in sorted(
        p for p in root.iterdir() if p.is_dir() and not p.name.startswith(".")
    ):
        for file in sorted(config_dir.iterdir()):
            if not file.is_file() or file.suffix not in DATA_SUFFIXES:
                continue
            split_name = file.name.split(".")[0].split("-")[0]
            if split is None or split_name == split:
                found.append((config_dir.name, split_name, file))
    return found


def export_manifest(root: Path) -> dict[str, Any] | None:
    """The manifest of the export in folder ``root``; ``None`` when it holds none written by the
    exporter (no manifest, one that is not JSON, or one of another format)."""
    path = root / EXPORT_MANIFEST
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(manifest, dict) or manifest.get("format") != EXPORT_FORMAT:
        return None
    return manifest


def manifest_files(root: Path) -> list[tuple[str, str, Path]] | None:
    """``(config, split, file)`` for each record file of an export's manifest, in its order;
    ``None`` when ``root`` holds no manifest written by the exporter. A listed file that is
    missing is an error naming it: the export is incomplete."""
    manifest = export_manifest(root)
    if manifest is None:
        return None
    path = root / EXPORT_MANIFEST
    configs = manifest.get("configs")
    if not isinstance(configs, list):
        raise EvaluationError(f"{path}: field 'configs' must be a list of record files")
    found = []
    for number, config in enumerate(configs):
        if not isinstance(config, dict) or not isinstance(config.get("path"), str):
            raise EvaluationError(f"{path}: configs[{number}] needs a 'path'")
        file = root / config["path"]
        if not file.resolve().is_relative_to(root.resolve()):
            raise EvaluationError(f"{path}: configs[{number}] points outside the folder")
        if not file.is_file():
            raise EvaluationError(
                f"{path}: configs[{number}] lists {config['path']}, which is not in the folder"
            )
        name = str(config.get("config_name") or Path(config["path"]).parent.name)
        split_name = str(config.get("split") or file.name.split(".")[0].split("-")[0])
        found.append((name, split_name, file))
    return found


def read_file(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    readers = {
        ".jsonl": _read_jsonl,
        ".json": _read_json,
        ".csv": _read_csv,
        ".parquet": _read_parquet,
    }
    reader = readers.get(path.suffix.lower())
    if reader is None:
        raise EvaluationError(f"{path}: unknown file type (use {', '.join(DATA_SUFFIXES)})")
    for location, item in reader(path):
        if not isinstance(item, dict):
            raise EvaluationError(
                f"{location}: a record must be an object, not {type(item).__name__}"
            )
        yield location, item


def _read_jsonl(path: Path) -> Iterator[tuple[str, Any]]:
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                yield f"{path}:{number}", json.loads(line)
            except json.JSONDecodeError as error:
                raise EvaluationError(f"{path}:{number}: not valid JSON ({error.msg})") from None


def _read_json(path: Path) -> Iterator[tuple[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise EvaluationError(f"{path}: not valid JSON ({error.msg})") from None
    if isinstance(data, dict) and isinstance(data.get("data"), list):
        data = data["data"]
    if not isinstance(data, list):
        raise EvaluationError(f"{path}: expected a list of records or an object with a 'data' list")
    for number, item in enumerate(data):
        yield f"{path}#{number}", item


def _read_csv(path: Path) -> Iterator[tuple[str, Any]]:
    with path.open(encoding="utf-8", newline="") as file:
        for number, row in enumerate(csv.DictReader(file), start=2):
            yield f"{path}:{number}", {key: _csv_value(key, value) for key, value in row.items()}


def _csv_value(key: str, value: str | None) -> Any:
    # Nested fields are JSON text in CSV; plain text columns stay text even if they look numeric.
    if value and key not in MODEL_FIELDS - {"profile"} and value[0] in "[{":
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _read_parquet(path: Path) -> Iterator[tuple[str, Any]]:
    for number, item in enumerate(pq.read_table(path).to_pylist()):
        yield f"{path}#{number}", item


def to_pair_record(raw: Mapping[str, Any], *, index: int = 0, location: str = "") -> PairRecord:
    """Check one raw record and keep what a model may see; the private fields are dropped here."""
    where = location or f"record {index}"
    record_id = raw.get("id")
    record_id = str(index) if record_id is None or record_id == "" else str(record_id)
    where = f"{where} (id {record_id!r})"

    question = raw.get("question")
    if question is None or question == "":
        question = raw.get("prompt")
    return PairRecord(
        id=record_id,
        question=_text(question, "question (or prompt)", where),
        chosen=_text(raw.get("chosen"), "chosen", where),
        rejected=_text(raw.get("rejected"), "rejected", where),
        category=str(raw.get("category") or ""),
        profile=_profile(raw.get("profile"), where),
        labels=_labels(raw),
    )


def _text(value: Any, name: str, where: str) -> str:
    if value is None:
        raise EvaluationError(f"{where}: field {name!r} is missing")
    if not isinstance(value, str):
        raise EvaluationError(f"{where}: field {name!r} must be text, not {type(value).__name__}")
    if not value.strip():
        raise EvaluationError(f"{where}: field {name!r} is empty")
    return value


def _profile(value: Any, where: str) -> tuple[ProfilePost, ...]:
    if value is None or value == "":
        return ()
    if not isinstance(value, list):
        raise EvaluationError(f"{where}: field 'profile' must be a list of posts")
    posts = []
    for number, post in enumerate(value):
        if isinstance(post, str):
            posts.append(ProfilePost(text=post))
            continue
        if not isinstance(post, dict) or not isinstance(post.get("text"), str):
            raise EvaluationError(f"{where}: profile[{number}] must be an object with a 'text'")
        posts.append(
            ProfilePost(
                text=post["text"],
                id=str(post.get("id") or ""),
                category=str(post.get("category") or ""),
            )
        )
    return tuple(posts)


def _labels(raw: Mapping[str, Any]) -> dict[str, str]:
    labels: dict[str, str] = {}
    for key, value in raw.items():
        if key in PRIVATE_FIELDS or key in MODEL_FIELDS:
            continue
        name = key.removeprefix("__")
        if isinstance(value, dict):
            for sub_key, sub_value in value.items():
                if _is_scalar(sub_value):
                    labels[f"{name}.{sub_key}"] = str(sub_value)
        elif _is_scalar(value):
            labels[name] = str(value)
    return labels


def _is_scalar(value: Any) -> bool:
    return isinstance(value, str | int | float | bool)


def as_pair_records(records: Iterable[Mapping[str, Any] | PairRecord]) -> list[PairRecord]:
    """Records (or pairs already read) as pairs, in order; an id used twice is an error."""
    pairs = []
    seen: set[str] = set()
    for index, record in enumerate(records):
        pair = record if isinstance(record, PairRecord) else to_pair_record(record, index=index)
        if pair.id in seen:
            raise EvaluationError(f"record {index}: id {pair.id!r} is used twice")
        seen.add(pair.id)
        pairs.append(pair)
    return pairs
