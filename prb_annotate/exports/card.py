"""An export's dataset card, README.md: a YAML header that declares each config and its files,
as dataset hubs read it, then what the export holds, how its verdicts were reached and how to
load it. Made from the manifest alone, so it is as reproducible as the manifest."""

import hashlib
import json
from pathlib import Path
from typing import Any

from prb_annotate.exports.layout import ANNOTATIONS, CARD, annotations_path
from prb_annotate.exports.manifest import ADJUDICATION_RULE
from prb_annotate.exports.markdown import plain_text, source_words

READERS = {
    "jsonl": "pd.read_json({!r}, lines=True)",
    "parquet": "pd.read_parquet({!r})",
    "csv": "pd.read_csv({!r})",
}

# What the dataset's source and sha256 stand for (``importing.import_sources`` keeps the latest
# import's that added or changed records; ``provenance`` says how the sha256 is made).
SOURCE_NOTE = (
    "The file named is the one read by the dataset's latest import that added or changed "
    "records; records of earlier imports may come from other files. Its sha256 is that of the "
    "file's bytes, or, for a folder, an uploaded .zip (its unpacked files) or a Hub dataset, "
    'that of the listing of the files read (docs/export.md, "Folder hashes").'
)


def dataset_card(manifest: dict[str, Any]) -> str:
    """README.md whose YAML header declares each config and its files, as on the Hub."""
    lines = [
        *yaml_header(manifest),
        *introduction(manifest),
        *config_table(manifest),
        *file_notes(manifest),
        *loading_example(manifest),
    ]
    return "\n".join(lines)


def write_card(root: Path, manifest: dict[str, Any]) -> dict[str, str]:
    """Write the card into the export folder; returns its entry in the manifest."""
    card = dataset_card(manifest)
    (root / CARD).write_text(card, encoding="utf-8", newline="\n")
    return {"path": CARD, "sha256": hashlib.sha256(card.encode("utf-8")).hexdigest()}


def _yaml_string(value: str) -> str:
    # JSON strings are valid YAML scalars: quoting them this way needs no YAML library.
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def yaml_header(manifest: dict[str, Any]) -> list[str]:
    """The front matter: every category's config with its one split, then the annotations."""
    pretty_name = f"{manifest['campaign']['name']} ({manifest['subset']})"
    lines = ["---", "configs:"]
    for config in manifest["configs"]:
        lines += [
            f"- config_name: {_yaml_string(config['config_name'])}",
            "  data_files:",
            f"  - split: {config['split']}",
            f"    path: {_yaml_string(config['path'])}",
        ]
    return [
        *lines,
        f"- config_name: {ANNOTATIONS}",
        "  data_files:",
        "  - split: train",
        f"    path: {annotations_path(manifest['file_format'])}",
        f"pretty_name: {_yaml_string(pretty_name)}",
        "---",
        "",
    ]


def introduction(manifest: dict[str, Any]) -> list[str]:
    """Where the pairs come from, how many of each verdict, and the rules behind them."""
    campaign, dataset, counts = manifest["campaign"], manifest["dataset"], manifest["counts"]
    pairs = counts["pairs"]
    return [
        f"# {plain_text(campaign['name'])}: {manifest['subset']} pairs",
        "",
        f"Exported by prb-annotate {manifest['tool']['version']} from campaign "
        f'{campaign["id"]} over dataset "{plain_text(dataset["name"])}"'
        + (f" ({source_words(dataset)})" if dataset["source"] else "")
        + ".",
        "",
        *([SOURCE_NOTE, ""] if dataset["source"] else []),
        f"Each pair was judged by k = {manifest['k']} annotators. Of {pairs['total']} pairs, "
        f"{pairs['validated']} were validated, {pairs['excluded']} excluded and "
        f"{pairs['undecided']} undecided. This export holds the **{manifest['subset']}** "
        f"subset: {counts['exported_pairs']} pairs"
        + (", each with a `validation` object" if manifest["with_validation"] else "")
        + f", and {counts['annotations']} annotations.",
        "",
        f"The verdict rule: {manifest['thresholds']['rule']}.",
        "",
        f"{pairs['adjudicated']} of these verdicts {'is' if pairs['adjudicated'] == 1 else 'are'} "
        "a manager's adjudication, not the "
        f"annotators' verdict: {ADJUDICATION_RULE}.",
        "",
    ]


def config_table(manifest: dict[str, Any]) -> list[str]:
    """One row per config with its file, the annotations last."""
    rows = [
        f"| {config['config_name']} | {plain_text(config['category'])} | {config['rows']} "
        f"| `{config['path']}` |"
        for config in manifest["configs"]
    ]
    annotations, path = manifest["counts"]["annotations"], annotations_path(manifest["file_format"])
    return [
        "| config | category | pairs | file |",
        "|---|---|---:|---|",
        *rows,
        f"| {ANNOTATIONS} | (all) | {annotations} | `{path}` |",
        "",
    ]


def file_notes(manifest: dict[str, Any]) -> list[str]:
    """What the records, the annotations and the manifest hold, and what a model must not see."""
    return [
        "Records keep the source dataset's schema, unknown fields included. "
        "`rubric_aspects` and `narrative` describe what the user expects: they belong to the "
        "dataset, but a reward model must never see them.",
        "",
        "`annotations` has one row per annotation in dataset orientation (answers about the "
        "chosen and rejected response, `chosen_position` says where the annotator saw the "
        f"chosen one). Annotators are pseudonymised as {manifest['pseudonym']}, with a secret "
        "that stays on the server: stable across exports of this campaign, not reversible "
        "from the export.",
        "",
        "`manifest.json` lists the question set, thresholds, counts per verdict and category, "
        "the agreement summary with confidence intervals, and every file's row count and "
        "sha256.",
        "",
    ]


def loading_example(manifest: dict[str, Any]) -> list[str]:
    """Python that loads the first config and the annotations, with pandas and ``datasets``."""
    fmt = manifest["file_format"]
    reader = READERS[fmt]
    first = manifest["configs"][0] if manifest["configs"] else None
    lines = ["## Loading", "", "```python", "import pandas as pd"]
    if first:
        lines.append("pairs = " + reader.format(first["path"]))
    lines += ["annotations = " + reader.format(annotations_path(fmt)), "", "import datasets"]
    if first:
        lines.append(
            f'split = datasets.load_dataset("path/to/this/folder", '
            f'{first["config_name"]!r}, split="test")'
        )
    return [*lines, "```", ""]
