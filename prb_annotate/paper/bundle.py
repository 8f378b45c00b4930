"""The paper's files from the ``numbers`` dict: as a dict of names to bytes, a folder put in
place whole, or a zip with fixed dates (same numbers, same zip)."""

import io
import json
import shutil
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from prb_annotate.exports.folders import put_in_place, work_folder
from prb_annotate.paper import figures as charts
from prb_annotate.paper import latex, layout, markdown, methods, references, tables

FORMATS = ("latex", "markdown")
ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)
NUMBERS_FILE = "numbers.json"


def title(numbers: Mapping[str, Any]) -> str:
    campaign = numbers["audit"].get("campaign", {})
    return str(campaign.get("name") or f"campaign {campaign.get('id', '')}").strip()


def texts(numbers: Mapping[str, Any], fmt: str, columns: str = layout.DEFAULT) -> str:
    """The tables and the methods paragraph in one format, for standard output."""
    found = tables.all_tables(numbers)
    parts = methods.paragraph(numbers)
    if fmt == "latex":
        return latex.methods(parts) + "\n" + latex.tables(found, columns)
    return markdown.methods(parts) + "\n" + markdown.tables(found)


def paper_files(
    numbers: Mapping[str, Any],
    formats: tuple[str, ...] = FORMATS,
    columns: str = layout.DEFAULT,
) -> dict[str, bytes]:
    """Every file of the paper in ``formats``, by its path in the folder or the zip; the LaTeX
    tables laid out for a ``columns``-column paper (``layout.py``).

    ``numbers.json`` is the data every printed number comes from; ``methods.md`` and
    ``references.bib`` come with either format; ``latexmkrc`` comes with a ``paper.tex`` that
    needs a Unicode engine (``latex.py``).
    """
    found = tables.all_tables(numbers)
    parts = methods.paragraph(numbers)
    drawn = charts.figures(numbers)
    captions = [(figure.name, figure.caption) for figure in drawn]
    files: dict[str, str | bytes] = {
        NUMBERS_FILE: json.dumps(numbers, indent=2, ensure_ascii=False, allow_nan=False) + "\n",
        "methods.md": markdown.methods(parts),
        "references.bib": references.bibtex(methods.cited(parts)),
    }
    if "latex" in formats:
        inputs = {"tables.tex": latex.tables(found, columns), "methods.tex": latex.methods(parts)}
        document = latex.document(title(numbers), captions, columns, list(inputs.values()))
        files |= {"paper.tex": document, **inputs}
        if latex.needs_unicode_engine(document):
            files[latex.LATEXMKRC] = latex.latexmkrc()
    if "markdown" in formats:
        files["paper.md"] = markdown.document(
            title(numbers), markdown.tables(found), markdown.methods(parts), captions
        )
    for figure in drawn:
        for name, content in charts.draw(figure).items():
            files[f"figures/{name}"] = content
    return {
        name: content.encode("utf-8") if isinstance(content, str) else content
        for name, content in sorted(files.items())
    }


def write_folder(files: Mapping[str, bytes], target: Path) -> None:
    """Write ``files`` under ``target`` whole: into a folder beside it, then put in place (an
    existing ``target`` is replaced), so that a failure leaves the old folder or none."""
    target = target.resolve()
    target.parent.mkdir(parents=True, exist_ok=True)
    work = work_folder(target, "paper")
    try:
        for name, content in files.items():
            path = work / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)
        put_in_place(work, target)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def zip_bytes(files: Mapping[str, bytes], folder: str) -> bytes:
    """The files in a zip under one top-level ``folder``, in name order with fixed dates."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(files):
            info = zipfile.ZipInfo(f"{folder}/{name}", ZIP_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, files[name])
    return buffer.getvalue()
