"""Export a campaign's pairs with their provenance, in a layout pandas and `datasets` load as is.

``export_split`` is the way in: it plans the export, writes the files slice by slice and puts
the folder in place. What the folder holds and in which order is ``layout``; the files are
written by ``data_files``, described by ``manifest`` and ``card``; ``archive`` zips an export for
download.

Everything written is a function of the database state: rows are ordered by record id
(byte order, the same on SQLite and PostgreSQL), JSON keys keep the record's own order, and no
file carries the time of the export, so exporting twice gives byte-identical folders.

The export reads the campaign's audit as one value (``CampaignAudit``): its thresholds, who is
left out and the adjudications are handed to the slices and the manifest, so no part of the
export reads them again. The campaign's regular pairs are taken by record id in slices
(``slices``), and each slice's rows are appended to the files as the slices come back in order.
Given the caller's audit (the page and the API, whose request may have other readers), the
answers are read whole once and each slice is cut from them. Without one (the command), each
slice reads its own answers, in this process or, with ``workers``, in worker processes, so
memory does not grow with the campaign, except for the counted answers the agreement bootstrap
needs (a few dozen bytes per annotation). The export is written into a hidden folder beside
``DIR`` and moved into place at the end, so a failed export never leaves a half-written folder.
"""

import contextlib
import shutil
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from django.db import connection
from django.db.models import Model

from prb_annotate.audit.campaign_audit import CampaignAudit
from prb_annotate.exports.card import write_card
from prb_annotate.exports.data_files import DataFile, annotations_file, records_file
from prb_annotate.exports.folders import clear_abandoned, put_in_place, work_folder
from prb_annotate.exports.layout import (
    annotations_path,
    config_names,
    records_path,
    regular_pairs_by_record_id,
)
from prb_annotate.exports.manifest import (
    Counts,
    add_counts,
    agreement_summary,
    build_manifest,
    counted_answers,
    sample_design_entry,
    write_manifest,
)
from prb_annotate.exports.processes import can_share_work, ordered_map
from prb_annotate.exports.pseudonyms import pseudonym
from prb_annotate.exports.slices import (
    SLICE_PAIRS,
    ExportError,
    SliceOptions,
    SliceResult,
    SliceTask,
    audited_slice,
    export_slice,
    run_slice,
)
from prb_annotate.models import Annotation, Assignment, Campaign, CampaignItem, Pair

SUBSETS = ("validated", "excluded", "all")
FORMATS = ("jsonl", "parquet", "csv")


class ExportWriteError(ExportError):
    """The export was refused by the file system (a full disk, a size limit): the server's
    problem, not the request's."""


def cannot_write(target: Path, error: OSError) -> str:
    return f"Cannot write the export to {target}: {error.strerror or error}."


def check_options(subset: str, fmt: str) -> None:
    if subset not in SUBSETS:
        raise ExportError(f"Unknown subset {subset!r}; expected one of {', '.join(SUBSETS)}.")
    if fmt not in FORMATS:
        raise ExportError(f"Unknown format {fmt!r}; expected one of {', '.join(FORMATS)}.")


# --- what to export ------------------------------------------------------------------------


@dataclass(frozen=True)
class ExportPlan:
    """What is known before the slices: the campaign's audit, the shared options and the pairs,
    by record id."""

    audit: CampaignAudit
    options: SliceOptions
    pair_ids: array  # of int64
    categories: list[str]

    def tasks(self) -> Iterator[SliceTask]:
        for start in range(0, len(self.pair_ids), SLICE_PAIRS):
            yield SliceTask(self.options, tuple(self.pair_ids[start : start + SLICE_PAIRS]))


def campaign_annotators(campaign: Campaign) -> dict[int, str]:
    """Everyone who was handed an item of the campaign: id -> username."""
    return dict(
        Assignment.objects.filter(campaign=campaign)
        .order_by()
        .values_list("annotator_id", "annotator__username")
        .distinct()
    )


def analyze_if_never_analyzed(models: Iterable[type[Model]]) -> list[str]:
    """On PostgreSQL, gather planner statistics for the tables that have none; returns them.

    A slice reads its rows through indexes only if the planner knows how many rows a range
    of ids holds; with no statistics it scans whole tables, for every slice. Autovacuum
    gathers them on its own, but a server that runs without it (or a bulk load seconds ago)
    has none, and a table's first ANALYZE takes a fraction of a second.
    """
    if connection.vendor != "postgresql":
        return []
    tables = [model._meta.db_table for model in models]
    with connection.cursor() as cursor:
        # reltuples is -1 until a table is first analyzed or vacuumed (PostgreSQL 14 on).
        cursor.execute(
            "SELECT relname FROM pg_class WHERE relname = ANY(%s) AND reltuples < 0", [tables]
        )
        missing = sorted(row[0] for row in cursor.fetchall())
        for table in missing:
            cursor.execute(f"ANALYZE {connection.ops.quote_name(table)}")
    return missing


def plan_export(audit: CampaignAudit, subset: str, fmt: str, with_validation: bool) -> ExportPlan:
    campaign = audit.campaign
    analyze_if_never_analyzed([Pair, CampaignItem, Assignment, Annotation])
    pair_ids, categories = regular_pairs_by_record_id(campaign)
    annotators = campaign_annotators(campaign)
    options = SliceOptions(
        campaign_id=campaign.pk,
        subset=subset,
        fmt=fmt,
        with_validation=with_validation,
        thresholds=audit.thresholds,
        # The names alone: why each one is out changes nothing in a slice.
        excluded_annotators=frozenset(audit.left_out),
        pseudonyms={user_id: pseudonym(campaign.pk, user_id) for user_id in annotators},
        annotators=tuple(sorted(annotators.values())),
        adjudications=audit.adjudications,
    )
    return ExportPlan(audit, options, pair_ids, categories)


def slice_results(campaign: Campaign, plan: ExportPlan, workers: int) -> Iterator[SliceResult]:
    """Every slice's result, in record-id order: cut from the audit's answers, read whole, unless
    the audit is ``sliced``; then from worker processes where they can read what this process
    sees, else computed here."""
    if not plan.audit.sliced:
        yield from (audited_slice(plan.audit, task) for task in plan.tasks())
    elif workers > 1 and can_share_work():
        yield from ordered_map(run_slice, plan.tasks(), workers=workers)
    else:
        yield from (export_slice(campaign, task) for task in plan.tasks())


# --- the export ----------------------------------------------------------------------------


def export_split(
    campaign: Campaign,
    out_dir: Path | str,
    *,
    subset: str = "validated",
    fmt: str = "jsonl",
    with_validation: bool = False,
    overwrite: bool = False,
    workers: int = 1,
    audit: CampaignAudit | None = None,
) -> dict[str, Any]:
    """Write the ``subset`` of the campaign's pairs to ``out_dir``; returns the manifest.

    ``audit``: the campaign's audit as the caller holds it, for a request with other readers:
    its answers are read whole (once, if no reader has read them yet) and every slice is cut
    from them, in this process. Without it (or with a ``sliced`` one), the slices read their
    own answers (see the module docstring).

    ``out_dir`` must be missing or empty unless ``overwrite``. Raises ExportError (having
    written nothing) for a bad option, a target that is in the way, or a disk that fills up.
    Stopped at any point, even by SIGKILL, it leaves the previous export or the new one
    (``folders.py``). With ``workers`` above one, the slices are made in that many worker
    processes where they can be (not inside a transaction, whose rows they could not see: there
    they are made here); the files are the same either way.
    """
    check_options(subset, fmt)
    target = Path(out_dir)
    check_target(target, overwrite)
    if audit is None:
        audit = CampaignAudit(campaign, lengths=False, sliced=True)
    plan = plan_export(audit, subset, fmt, with_validation)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        work = work_folder(target)
    except OSError as error:
        raise ExportWriteError(cannot_write(target, error)) from error
    try:
        manifest = write_export(work, campaign, plan, workers)
        put_in_place(work, target)
    except OSError as error:
        # A full disk, or a file system that refuses: one line naming the target; nothing
        # of this export is left (the previous one, if any, is untouched).
        shutil.rmtree(work, ignore_errors=True)
        raise ExportWriteError(cannot_write(target, error)) from error
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return manifest


def check_target(target: Path, overwrite: bool) -> None:
    """Refuse a target in the way, once what a forcibly stopped export left there is cleared."""
    try:
        # First: an export stopped by force may have left the previous one aside.
        clear_abandoned(target)
    except OSError as error:
        raise ExportWriteError(cannot_write(target, error)) from error
    if target.exists() and not overwrite and (not target.is_dir() or any(target.iterdir())):
        raise ExportError(
            f"{target} already exists and is not empty; choose another folder, or replace it "
            "with --overwrite."
        )
    if target.exists() and not target.is_dir():
        raise ExportError(f"{target} is a file, not a folder.")


def write_export(root: Path, campaign: Campaign, plan: ExportPlan, workers: int) -> dict[str, Any]:
    """Write the data files from the slices, then the dataset card and the manifest."""
    options = plan.options
    configs = config_names(plan.categories)
    counts: Counts = {}
    answers: list[pd.DataFrame] = []
    exported: list[int] = []
    files: dict[str, DataFile] = {}
    with contextlib.ExitStack() as open_files:
        criteria = list(options.thresholds.quality_criteria)
        annotations = annotations_file(root, annotations_path(options.fmt), options.fmt, criteria)
        open_files.callback(annotations.close)
        for result in slice_results(campaign, plan, workers):
            for category, payload in result.records.items():
                if category not in files:
                    relative = records_path(configs[category], options.fmt)
                    files[category] = records_file(root, relative, options.fmt)
                    open_files.callback(files[category].close)
                files[category].add(payload, result.record_rows[category])
            annotations.add(result.annotations, result.annotation_rows)
            add_counts(counts, result.counts)
            answers.append(result.agreement)
            exported += result.exported
        written = [
            (configs[category], category, files[category].finish()) for category in sorted(files)
        ]
        annotations_written = annotations.finish()
    manifest = build_manifest(
        campaign,
        subset=options.subset,
        fmt=options.fmt,
        with_validation=options.with_validation,
        counts=dict(sorted(counts.items())),
        configs=written,
        annotations=annotations_written,
        agreement=agreement_summary(plan.audit, counted_answers(plan.audit, answers), counts),
    )
    design = sample_design_entry(campaign, exported)
    if design is not None:
        manifest["sample_design"] = design
    manifest["card"] = write_card(root, manifest)
    write_manifest(root, manifest)
    return manifest
