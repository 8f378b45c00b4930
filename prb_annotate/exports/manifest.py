"""An export's manifest.json: what was exported from what, under which rules, with which counts
and agreement, and every file with its row count and sha256.

Nothing in it depends on when the export ran (``exported_at`` is null), so the same database
state gives the same manifest, byte for byte.
"""

from collections.abc import Collection
from pathlib import Path
from typing import Any

import pandas as pd

import prb_annotate
from evaluation.records import EXPORT_FORMAT
from prb_annotate.audit import active_sample, assembly, ppi_designs, rule, summaries
from prb_annotate.audit.campaign_audit import CampaignAudit
from prb_annotate.audit.questions import agreement_by_question
from prb_annotate.exports.data_files import ExportedFile
from prb_annotate.exports.layout import MANIFEST, SPLIT
from prb_annotate.exports.pseudonyms import PSEUDONYM_RULE
from prb_annotate.exports.slices import VERDICTS, compact_answers
from prb_annotate.formats import strictjson
from prb_annotate.models import Annotation, Campaign, CampaignItem, Dataset

# Bootstrap resamples for the agreement intervals in the manifest, seeded with the campaign seed.
MANIFEST_RESAMPLES = 1000
ADJUDICATION_RULE = (
    "a manager's adjudication in force replaces the annotators' verdict of its pair "
    "(validation.adjudicated is true and validation.annotators_verdict keeps theirs); "
    "agreement statistics use the annotators' answers only"
)
INCLUSION_RULE = (
    "each pair of a category was drawn independently with its inclusion probability (Poisson "
    "sampling), higher where the model annotator was unsure; weigh a drawn pair by the inverse "
    "of its probability to estimate over the whole dataset"
)
DETERMINISM = (
    "No export time is recorded (exported_at is null): the same database state gives "
    "byte-identical files, this manifest and the dataset card included."
)

# Counts per category: verdict (and "adjudicated") -> pairs.
Counts = dict[str, dict[str, int]]
# A written records file: config name, category, and the file.
WrittenConfig = tuple[str, str, ExportedFile]


# What the manifest keeps of each agreement coefficient.
INTERVAL_KEYS = ("value", "ci_low", "ci_high", "method", "reliable", "reason")


# --- counts and agreement, gathered over the slices ----------------------------------------


def add_counts(total: Counts, part: Counts) -> None:
    for category, row in part.items():
        into = total.setdefault(category, dict.fromkeys(row, 0))
        for key, value in row.items():
            into[key] += value


def counted_answers(audit: CampaignAudit, parts: list[pd.DataFrame]) -> pd.DataFrame:
    if parts:
        return pd.concat(parts, ignore_index=True)
    # No regular pair at all: the same columns, empty.
    columns = ["pair_id", "annotator", *(q.column for q in audit.questions)]
    empty = pd.DataFrame({column: [] for column in columns})
    return compact_answers(empty, audit.thresholds, ())


def agreement_summary(
    audit: CampaignAudit,
    counted: pd.DataFrame,
    counts: Counts,
    *,
    resamples: int = MANIFEST_RESAMPLES,
) -> dict[str, Any]:
    """Agreement per question with bootstrap intervals, and the validated shares.

    The same statistics as the audit page (a test checks they agree): the bootstrap is seeded
    with the campaign's seed, and shares are over decided pairs, as ``summaries.validity_summary``
    has them.
    """
    campaign = audit.campaign
    per_question = agreement_by_question(
        counted, audit.thresholds, resamples=resamples, seed=campaign.seed
    )
    summary = {
        "resamples": resamples,
        "seed": campaign.seed,
        "confidence": 0.95,
        "questions": [question_agreement(question) for question in per_question],
        "validated_share": validated_share(counts.values()),
        "validated_share_by_category": {
            category: validated_share([row]) for category, row in sorted(counts.items())
        },
    }
    return assembly.jsonable(summary)


def question_agreement(question: dict[str, Any]) -> dict[str, Any]:
    """One question's agreement as the manifest has it: each coefficient with its interval,
    the interval's method and whether it can be trusted (``audit/intervals.py``)."""
    return {
        "question": question["question"],
        "label": question["label"],
        "kind": question["kind"],
        "units": question["units"],
        "ratings": question["ratings"],
        "coefficients": {
            coefficient["key"]: {key: coefficient.get(key) for key in INTERVAL_KEYS}
            for coefficient in question["coefficients"]
        },
    }


def validated_share(rows: Collection[dict[str, int]]) -> dict[str, Any]:
    """The share of decided pairs that were validated, with its interval."""
    validated = sum(row["validated"] for row in rows)
    decided = validated + sum(row["excluded"] for row in rows)
    return summaries.share_with_interval(validated, decided)


# --- the manifest's sections ---------------------------------------------------------------


def campaign_entry(campaign: Campaign) -> dict[str, Any]:
    return {
        "id": campaign.pk,
        "name": campaign.name,
        "status": campaign.status,
        "created_at": campaign.created_at.strftime("%Y-%m-%dT%H:%M:%S.%fZ"),
        "seed": campaign.seed,
        "gold_rate": campaign.gold_rate,
    }


def dataset_entry(dataset: Dataset) -> dict[str, Any]:
    return {
        "id": dataset.pk,
        "name": dataset.name,
        "source": dataset.source,
        "source_sha256": dataset.source_sha256,
        "description": dataset.description,
    }


def question_set(campaign: Campaign) -> dict[str, Any]:
    def values(choices: Any) -> list[str]:
        return [str(value) for value in choices.values]

    return {
        "quality": {
            "criteria": list(campaign.quality_criteria),
            "scale": [1, campaign.rating_scale_max],
            "asked_for": ["chosen", "rejected"],
        },
        "rubric_fit": values(Annotation.RubricFit),
        "differentiator": values(Annotation.Differentiator),
        "confidence": values(Annotation.Confidence),
        "flagged": [False, True],
        "comment": "free text",
    }


def thresholds(campaign: Campaign) -> dict[str, Any]:
    return {
        "quality_statistic": "median",
        "quality_threshold": campaign.quality_threshold,
        "majority_threshold": campaign.majority_threshold,
        "min_gold_accuracy": campaign.min_gold_accuracy,
        "position_bias_max_p": campaign.position_bias_max_p,
        "rule": rule.RULE,
    }


def sample_design_entry(campaign: Campaign, exported: Collection[int]) -> dict[str, Any] | None:
    """An actively drawn planned sample's design (the model run, the floor, the pairs each
    category expected) and each exported pair's inclusion probability by record id, which a
    reader needs to weigh the pairs back to the dataset; None for any other campaign."""
    plan = campaign.sample_plan or {}
    if not active_sample.is_active(plan):
        return None
    wanted = set(exported)
    items = campaign.items.filter(
        kind=CampaignItem.Kind.REGULAR, inclusion_probability__isnull=False
    ).values_list("pair_id", "pair__external_id", "inclusion_probability")
    probabilities = {record: pi for pair, record, pi in items if pair in wanted}
    design = plan["design"]
    return {
        "design": design["name"],
        "floor": design["floor"],
        "model_run": design["run"],
        "model": design["model"],
        "expected_pairs": design["expected_pairs"],
        "estimator": ppi_designs.ACTIVE_PPI.key,
        "rule": INCLUSION_RULE,
        "inclusion_probabilities": dict(sorted(probabilities.items())),
    }


def adjudicated_pairs(counts: Counts) -> int:
    return sum(row.get("adjudicated", 0) for row in counts.values())


def counts_entry(
    counts: Counts, configs: list[WrittenConfig], annotations: ExportedFile
) -> dict[str, Any]:
    """Pairs per verdict over the campaign, what was exported, and the counts per category."""
    totals = {verdict: sum(row[verdict] for row in counts.values()) for verdict in VERDICTS}
    return {
        "pairs": {
            **totals,
            "total": sum(totals.values()),
            "adjudicated": adjudicated_pairs(counts),
        },
        "exported_pairs": sum(written.rows for _, _, written in configs),
        "annotations": annotations.rows,
        "by_category": counts,
    }


def config_entry(name: str, category: str, written: ExportedFile) -> dict[str, Any]:
    return {
        "config_name": name,
        "category": category,
        "split": SPLIT,
        "path": written.path,
        "rows": written.rows,
    }


# --- the manifest --------------------------------------------------------------------------


def build_manifest(
    campaign: Campaign,
    *,
    subset: str,
    fmt: str,
    with_validation: bool,
    counts: Counts,
    configs: list[WrittenConfig],
    annotations: ExportedFile,
    agreement: dict[str, Any],
) -> dict[str, Any]:
    return {
        "format": EXPORT_FORMAT,
        "format_version": 1,
        "tool": {"name": "prb-annotate", "version": prb_annotate.__version__},
        "campaign": campaign_entry(campaign),
        "dataset": dataset_entry(campaign.dataset),
        "subset": subset,
        "file_format": fmt,
        "with_validation": with_validation,
        "question_set": question_set(campaign),
        "k": campaign.annotations_per_pair,
        "thresholds": thresholds(campaign),
        "counts": counts_entry(counts, configs, annotations),
        "agreement": agreement,
        "adjudication": {"pairs": adjudicated_pairs(counts), "rule": ADJUDICATION_RULE},
        "pseudonym": PSEUDONYM_RULE,
        "configs": [config_entry(name, category, written) for name, category, written in configs],
        "files": [written.as_dict() for _, _, written in configs] + [annotations.as_dict()],
        "exported_at": None,
        "determinism": DETERMINISM,
    }


def write_manifest(root: Path, manifest: dict[str, Any]) -> None:
    (root / MANIFEST).write_text(
        strictjson.dumps(manifest, ensure_ascii=False, indent=2) + "\n",
        encoding="utf-8",
        newline="\n",
    )
