"""The audit report as people read it: formatted numbers, charts, and a plain-text version.

The page, ``manage.py audit --format html`` and ``--format text`` all go through these
functions, so they print the same numbers the same way.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import override

from prb_annotate.audit import charts as svg
from prb_annotate.audit import intervals, model_report, ppi_report, sample_report
from prb_annotate.audit.phrases import shown, shown_parts
from prb_annotate.audit.words import gettext_noop
from prb_annotate.formats.numbers import level, share

DASH = "—"
# Krippendorff (2004): alpha >= 0.800 reliable, >= 0.667 for tentative conclusions.
ALPHA_MARKS = (0.667, 0.8)
# Columns of the agreement tables, per kind of question.
TABLE_COLUMNS = {
    "nominal": ("alpha_nominal", "ac1", "fleiss_kappa", "percent_agreement"),
    "ordinal": (
        "alpha_ordinal",
        "alpha_interval",
        "ac2_ordinal",
        "fleiss_kappa",
        "percent_agreement",
    ),
}
CHART_COEFFICIENTS = {
    "nominal": ("alpha_nominal", "ac1"),
    "ordinal": ("alpha_ordinal", "ac2_ordinal"),
}
# The columns' short names, marked for translation (``phrases.py``); every word of the report
# a page shows goes through ``shown``, which leaves it English in the text report.
SHORT = {
    "alpha_nominal": gettext_noop("Kripp. alpha"),
    "alpha_ordinal": gettext_noop("Kripp. alpha (ord.)"),
    "alpha_interval": gettext_noop("Kripp. alpha (int.)"),
    "ac1": gettext_noop("Gwet AC1"),
    "ac2_ordinal": gettext_noop("Gwet AC2"),
    "fleiss_kappa": gettext_noop("Fleiss κ"),
    # xgettext:no-python-format
    "percent_agreement": gettext_noop("% agreement"),
}
PAIR_LIST_LIMIT = 200
FLAG_LIST_LIMIT = 100


def number(value: float | None, digits: int = 3) -> str:
    # Adding 0.0 turns a rounded -0.0 into 0.0, so that no "-0.000" is printed.
    return DASH if value is None else f"{round(value, digits) + 0.0:.{digits}f}"


def percent(value: float | None) -> str:
    return DASH if value is None else f"{value:.1%}"


def p_value(value: float | None) -> str:
    if value is None:
        return DASH
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def estimate(coefficient: dict[str, Any]) -> str:
    """ "0.743 [0.612, 0.851]"; "1.000 (unreliable)" when its interval cannot be
    trusted (its reason is a note: :func:`interval_note`); "undefined" without a value."""
    if coefficient.get("value") is None:
        return _("undefined")
    text = number(coefficient["value"])
    if coefficient.get("reliable") is False:
        return _("%(value)s (unreliable)") % {"value": text}
    if coefficient.get("ci_low") is not None:
        text += f" [{number(coefficient['ci_low'])}, {number(coefficient['ci_high'])}]"
    return text


def interval_note(coefficient: dict[str, Any]) -> str:
    """The coefficient's note, and "unreliable: <reason>" when its interval is unreliable."""
    parts = [shown_parts(coefficient.get("note") or "")]
    if coefficient.get("value") is not None and coefficient.get("reliable") is False:
        parts.append(shown(intervals.unreliable_text(coefficient.get("reason") or "")))
    return "; ".join(part for part in parts if part)


def _interval(label: str, coefficient: dict[str, Any]) -> svg.Interval:
    """A chart row; an unreliable interval is drawn as its point alone, never as bounds.
    Krippendorff's thresholds (``ALPHA_MARKS``) are marked on alpha's rows alone."""
    marked = str(coefficient.get("key", "")).startswith("alpha")
    if coefficient.get("reliable") is False:
        return svg.Interval(
            _("%(value)s (unreliable)") % {"value": label},
            coefficient.get("value"),
            None,
            None,
            interval_note(coefficient),
            marked=marked,
        )
    return svg.Interval(
        label,
        coefficient.get("value"),
        coefficient.get("ci_low"),
        coefficient.get("ci_high"),
        shown_parts(coefficient.get("note") or ""),
        marked=marked,
    )


def _share_interval(label: str, entry: dict[str, Any]) -> svg.Interval:
    return svg.Interval(label, entry.get("share"), entry.get("ci_low"), entry.get("ci_high"))


def agreement_tables(report: dict[str, Any]) -> list[dict[str, Any]]:
    """One table per kind of question with fixed columns, cells already formatted.

    A note on an undefined or doubtful coefficient is said once per table, as a numbered
    footnote that every cell it applies to points to: with little data the same note would
    otherwise repeat on every row.
    """
    tables = []
    for kind, title in (("nominal", _("Choices")), ("ordinal", _("Quality ratings"))):
        columns = TABLE_COLUMNS[kind]
        notes: list[str] = []
        rows = []
        for question in report["agreement"]:
            if question["kind"] != kind:
                continue
            by_key = {c["key"]: c for c in question["coefficients"]}
            rows.append(
                {
                    "question": question["question"],
                    "label": shown(question["label"]),
                    "units": question["units"],
                    "units_rated_twice": question["units_rated_twice"],
                    "paradox": shown(question.get("paradox") or "") or None,
                    "cells": [
                        {"text": estimate(by_key[key]), "note": _footnote(notes, by_key[key])}
                        for key in columns
                    ],
                }
            )
        labels = {c["key"]: c["label"] for q in report["agreement"] for c in q["coefficients"]}
        tables.append(
            {
                "title": title,
                "headers": [
                    {"key": key, "label": shown(labels.get(key, key)), "short": shown(SHORT[key])}
                    for key in columns
                ],
                "rows": rows,
                "notes": notes,
            }
        )
    return tables


def _footnote(notes: list[str], coefficient: dict[str, Any]) -> int | None:
    """The 1-based number of the coefficient's note in ``notes`` (added when new), or None."""
    note = interval_note(coefficient)
    if not note:
        return None
    if note not in notes:
        notes.append(note)
    return notes.index(note) + 1


def agreement_methods(report: Mapping[str, Any]) -> list[str]:
    """The interval methods the report's agreement coefficients were computed with."""
    found = {
        str(c["method"])
        for question in report["agreement"]
        for c in question["coefficients"]
        if c.get("method")
    }
    return sorted(found)


def methods_text(report: Mapping[str, Any], names: Mapping[str, str]) -> str:
    """The methods in words (``intervals.METHOD_PHRASES`` or ``SHORT_NAMES``), or "none"."""
    found = "; ".join(shown(names.get(m, m)) for m in agreement_methods(report))
    return found or _("none computed")


def charts(report: dict[str, Any]) -> dict[str, SafeString]:
    """Every chart of the page, as inline SVG."""
    agreement_rows = [
        _interval(f"{shown(question['label'])} · {shown(SHORT[key])}", coefficient)
        for question in report["agreement"]
        for coefficient in question["coefficients"]
        for key in CHART_COEFFICIENTS[question["kind"]]
        if coefficient["key"] == key
    ]
    validity = report["validity"]
    validity_rows = [_share_interval(_("all pairs"), validity["overall"]["validated_share"])] + [
        _share_interval(row["category"] or _("(no category)"), row["validated_share"])
        for row in validity["per_category"]
    ]
    reasons = [
        (shown(row.get("words") or row["reason"]), row["pairs"])
        for row in validity["reasons"]
        if row["pairs"]
    ]
    length = report["bias"]["length"]
    bias_rows = [
        _share_interval(_("answers: response A"), report["bias"]["position"]["share_a"]),
        _share_interval(_("pairs: chosen is longer"), length["pairs_chosen_longer"]),
        _share_interval(_("answers: picked the longer"), length["answers_pick_longer"]),
        _share_interval(
            _("picked chosen | chosen longer"), length["pick_chosen_when_chosen_longer"]
        ),
        _share_interval(
            _("picked chosen | chosen shorter"), length["pick_chosen_when_chosen_shorter"]
        ),
    ]
    return {
        name: mark_safe(chart)  # noqa: S308 - charts.py escapes every piece of text it draws
        for name, chart in {
            "agreement": svg.interval_chart(
                agreement_rows,
                title=_("Agreement per question with %(confidence)s intervals (%(methods)s)")
                % {
                    "confidence": level(report["settings"]["confidence"]),
                    "methods": methods_text(report, intervals.SHORT_NAMES),
                },
                marks=ALPHA_MARKS,
            ),
            "validity": svg.share_chart(
                validity_rows, title=_("Validated share of decided pairs, with Wilson intervals")
            ),
            "reasons": svg.count_chart(reasons, title=_("Pairs per reason")) if reasons else "",
            "bias": svg.share_chart(bias_rows, title=_("Position and length bias"), marks=(0.5,)),
        }.items()
    }


def context(report: dict[str, Any]) -> dict[str, Any]:
    """What the audit templates need besides the report itself."""
    not_validated = [row for row in report["verdicts"] if row["verdict"] != "validated"]
    flags = report["consistency"]["flags"]
    return {
        "report": report,
        "interval_method": methods_text(report, intervals.METHOD_PHRASES),
        "interval_rule": intervals.rule_text(_),
        "charts": charts(report),
        "alpha_marks": ALPHA_MARKS,
        "agreement_tables": agreement_tables(report),
        "pairs_not_validated": not_validated[:PAIR_LIST_LIMIT],
        "pairs_not_validated_total": len(not_validated),
        "flags_shown": flags[:FLAG_LIST_LIMIT],
        "overall_share": share(report["validity"]["overall"]["validated_share"]),
        "category_shares": [
            {**row, "share_text": share(row["validated_share"])}
            for row in report["validity"]["per_category"]
        ],
        "bias_text": bias_lines(report),
        "label_text": label_lines(report),
        "sample_estimate": _sample_estimate(report),
        "model_annotators": model_report.context(report),
        "ppi": ppi_report.context(report),
        "ppi_coverage": model_coverage(report),
    }


@dataclass(frozen=True)
class ModelCoverage:
    """Which pairs the prediction-powered estimate's model annotator judged, in counts: M
    (``model_pairs``) of the dataset's N (``population``), beside the humans' sample of
    ``sampled`` pairs, ``decided`` (n) of them decided.

    The estimate gains over the humans' alone only from the model's verdicts on pairs the
    humans did not decide (``ppi.py``: mean_n(y) - lambda (mean_n(f) - mean_M(f)), variance
    (1/M - 1/N) S_y^2 + (1/n - 1/M) S_r^2). With M = n it is the humans-only estimate exactly;
    with M no larger than the sample (a model run over the campaign's pairs only, the default
    of ``evaluate --as-annotator``) it can gain no more than the sample's undecided pairs
    give. The page and the paper say so in words (``reach``) beside the estimate they print.
    """

    population: int
    model_pairs: int
    sampled: int
    decided: int

    @property
    def reach(self) -> str:
        """``all`` (M = N), ``part`` (the sample and more), ``sample`` (no more pairs than the
        sample holds) or ``decided`` (M = n: only the pairs the humans decided)."""
        if self.model_pairs >= self.population:
            return "all"
        if self.model_pairs <= self.decided:
            return "decided"
        if self.model_pairs <= self.sampled:
            return "sample"
        return "part"

    @property
    def adds_nothing(self) -> bool:
        """Whether the model judged no pair beyond what the humans' sample holds."""
        return self.reach in ("decided", "sample")


def model_coverage(report: Mapping[str, Any]) -> ModelCoverage | None:
    """The coverage of the ``ppi`` section's model annotator, from its counts and the sample
    estimate's; None where there is no estimate (no section, or the run misses a decided
    sampled pair)."""
    section = report.get("ppi")
    if not section or not section.get("covers_sample"):
        return None
    overall = section["overall"]
    return ModelCoverage(
        population=int(overall["population"]),
        model_pairs=int(overall["model_pairs"]),
        sampled=int(report["sample_estimate"]["overall"]["sampled"]),
        decided=int(overall["sample_pairs"]),
    )


def _coverage_lines(coverage: ModelCoverage | None) -> list[str]:
    """The text report's word on a model that judged no pair beyond the humans' sample, as
    the page says it."""
    if coverage is None or not coverage.adds_nothing:
        return []
    if coverage.reach == "decided":
        said = "the estimate with the model is the humans-only one and adds nothing over the sample"
    else:
        said = (
            f"no more than the sample of {coverage.sampled} holds, so the estimate with the "
            "model adds next to nothing over the humans-only one"
        )
    return [
        f"  the model judged {coverage.model_pairs} of {coverage.population} pairs: {said} "
        "(run it with --whole-dataset)"
    ]


def _sample_estimate(report: dict[str, Any]) -> dict[str, Any] | None:
    estimate = report.get("sample_estimate")
    return None if estimate is None else sample_report.estimate_context(estimate)


def bias_lines(report: dict[str, Any]) -> list[tuple[str, str]]:
    position = report["bias"]["position"]
    length = report["bias"]["length"]
    return [
        (_("Answers naming response A (non-tie)"), share(position["share_a"])),
        (_("Position bias p-value (binomial, 0.5)"), p_value(position["p_value"])),
        (_("Pairs whose chosen answer is longer"), share(length["pairs_chosen_longer"])),
        (_("Length p-value (binomial, 0.5)"), p_value(length["pairs_chosen_longer_p_value"])),
        (_("Median length ratio chosen / rejected"), number(length["median_length_ratio"], 2)),
        (_("Answers picking the longer answer"), share(length["answers_pick_longer"])),
        (
            _("Picking-longer p-value (binomial, 0.5)"),
            p_value(length["answers_pick_longer_p_value"]),
        ),
        (_("Picked chosen when chosen is longer"), share(length["pick_chosen_when_chosen_longer"])),
        (
            _("Picked chosen when chosen is shorter"),
            share(length["pick_chosen_when_chosen_shorter"]),
        ),
    ]


def label_lines(report: dict[str, Any]) -> list[tuple[str, str]]:
    labels = report["validity"]["label_agreement"]
    return [
        (
            _("Pairs whose majority prefers the chosen answer"),
            share(labels["pairs_majority_chosen"]),
        ),
        (_("Pairs without a rubric-fit majority"), str(labels["pairs_without_majority"])),
        (_("Answers preferring the chosen answer"), share(labels["answers_chosen"])),
        (_("Answers calling it a tie"), share(labels["answers_tie"])),
    ]


def render_html(
    report: dict[str, Any], *, standalone_css: str = "", standalone_js: str = ""
) -> str:
    """A self-contained HTML document (styles and the sorting script inline, no external
    resource)."""
    return render_to_string(
        "prb_annotate/audit_standalone.html",
        {
            **context(report),
            "inline_css": standalone_css,
            "inline_js": standalone_js,
            "standalone": True,
        },
    )


def render_text(report: dict[str, Any]) -> str:
    """The report as plain text, with the page's numbers."""
    # The text report is a file kept beside the data, in English whatever page asked for it.
    with override("en"):
        return _english_text(report)


def _english_text(report: dict[str, Any]) -> str:
    lines: list[str] = []
    campaign = report.get("campaign", {})
    counts = report["counts"]
    settings = report["settings"]
    lines.append(f"Audit of campaign {campaign.get('id', '')} {campaign.get('name', '')}".rstrip())
    lines.append(
        f"{counts['pairs']} pairs: {counts['validated']} validated, {counts['excluded']} "
        f"excluded, {counts['undecided']} undecided; {counts['annotations']} annotations by "
        f"{counts['annotators']} annotators; {counts['gold_items']} gold items"
    )
    if counts.get("adjudicated"):
        alone = counts["by_annotators"]
        lines.append(
            f"{counts['adjudicated']} adjudicated by a manager; the annotators alone: "
            f"{alone['validated']} validated, {alone['excluded']} excluded, "
            f"{alone['undecided']} undecided"
        )
    lines.append(
        f"agreement intervals: {methods_text(report, intervals.METHOD_PHRASES)}, "
        f"{settings['resamples']} resamples, "
        f"seed {settings['seed']}, {level(settings['confidence'])} intervals "
        f"({intervals.rule_text()})"
    )
    if report.get("left_out"):
        lines.append(
            "left out: "
            + ", ".join(
                f"{row['annotator']} ({row.get('reason_label') or row['reason']})"
                for row in report["left_out"]
            )
        )
    elif report["excluded_annotators"]:
        lines.append("left out (gold accuracy): " + ", ".join(report["excluded_annotators"]))

    for table in agreement_tables(report):
        lines += ["", f"Agreement: {table['title']}"]
        for row in table["rows"]:
            lines.append(f"  {row['question']} ({row['units_rated_twice']} units rated twice+)")
            for header, cell in zip(table["headers"], row["cells"], strict=True):
                mark = f" [{cell['note']}]" if cell["note"] else ""
                lines.append(f"    {header['label']}: {cell['text']}{mark}")
        lines += [f"  [{number}] {note}" for number, note in enumerate(table["notes"], 1)]
        lines += [
            f"  {row['question']}: {row['paradox']}" for row in table["rows"] if row["paradox"]
        ]

    lines += ["", "Validity (share of decided pairs)"]
    lines.append(f"  overall: {share(report['validity']['overall']['validated_share'])}")
    for row in report["validity"]["per_category"]:
        lines.append(
            f"  {row['category'] or '(no category)'}: {share(row['validated_share'])}; "
            f"undecided {row['undecided']}"
        )
    if report.get("sample_estimate"):
        lines += ["", *sample_report.estimate_lines(report["sample_estimate"])]
    if report.get("ppi"):
        lines += ["", *ppi_report.lines(report)]
        lines += _coverage_lines(model_coverage(report))
    lines += ["", "Reasons (pairs)"]
    lines += [
        f"  {row.get('words') or row['reason']} ({row['reason']}): {row['pairs']}"
        for row in report["validity"]["reasons"]
    ]
    lines += ["", "Label agreement"]
    lines += [f"  {label}: {value}" for label, value in label_lines(report)]
    lines += ["", "Bias"]
    lines += [f"  {label}: {value}" for label, value in bias_lines(report)]

    if report.get("model_annotators"):
        lines += ["", *model_report.lines(report)]
    lines += ["", "Annotators"]
    for row in report["annotators"]:
        lines.append(
            f"  {row['annotator']}{' (left out)' if row['excluded'] else ''}: "
            f"{row['annotations']} annotations; leave-one-out agreement rubric fit "
            f"{percent(row['loo_rubric_fit'])}, differentiator "
            f"{percent(row['loo_differentiator'])}; mean kappa rubric fit "
            f"{number(row['mean_kappa_rubric_fit'])}; gold {row['gold_correct']}/"
            f"{row['gold_answered']}; share A {percent(row['share_a'])} "
            f"(p {p_value(row['position_p_value'])}); median time "
            f"{number(_seconds(row['median_time_ms']), 1)} s; "
            f"consistency flags {row['consistency_flags']}"
        )
    lines += ["", "Consistency checks (annotations)"]
    lines += [
        f"  {check['code']}: {check['annotations']}" for check in report["consistency"]["checks"]
    ]
    return "\n".join(lines) + "\n"


def _seconds(milliseconds: float | None) -> float | None:
    return None if milliseconds is None else milliseconds / 1000
