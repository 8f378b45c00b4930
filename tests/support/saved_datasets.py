"""Folders in the layout ``datasets``' ``save_to_disk`` writes, made with pyarrow alone.

A Dataset: ``data-00000-of-00001.arrow`` (an Arrow IPC stream), ``dataset_info.json`` and
``state.json``. A DatasetDict: ``dataset_dict.json`` listing the splits, and one such folder
per split.
"""

import json
from pathlib import Path

import pyarrow as pa


def write_saved_dataset(folder: Path, records: list[dict], split: str = "train") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    table = pa.Table.from_pylist(records)
    name = "data-00000-of-00001.arrow"
    with pa.OSFile(str(folder / name), "wb") as sink, pa.ipc.new_stream(sink, table.schema) as w:
        for batch in table.to_batches(max_chunksize=2):
            w.write_batch(batch)
    info = {"citation": "", "description": "", "features": {}, "homepage": "", "license": ""}
    (folder / "dataset_info.json").write_text(json.dumps(info))
    state: dict[str, object] = {
        "_data_files": [{"filename": name}],
        "_fingerprint": "0123456789abcdef",
        "_format_columns": None,
        "_format_kwargs": {},
        "_format_type": None,
        "_output_all_columns": False,
        "_split": split,
    }
    (folder / "state.json").write_text(json.dumps(state))
    return folder


def write_saved_dataset_dict(folder: Path, splits: dict[str, list[dict]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dataset_dict.json").write_text(json.dumps({"splits": list(splits)}))
    for split, records in splits.items():
        write_saved_dataset(folder / split, records, split)
    return folder
