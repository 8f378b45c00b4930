"""Number formats of the audit page (the same functions the text report uses), and the audit's
words in the reader's language (``audit/phrases.py``)."""

from django import template
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import mark_safe

from prb_annotate.audit import report as audit_report
from prb_annotate.audit import rule
from prb_annotate.audit.phrases import shown

register = template.Library()


@register.filter
def num(value: float | None, digits: int = 3) -> str:
    return audit_report.number(value, digits)


@register.filter
def pct(value: float | None) -> str:
    return audit_report.percent(value)


@register.filter
def pval(value: float | None) -> str:
    return audit_report.p_value(value)


@register.filter
def seconds(milliseconds: float | None) -> str:
    return audit_report.number(None if milliseconds is None else milliseconds / 1000, 1)


@register.filter
def sortkey(value: object) -> str:
    """A ``data-sort`` value: empty for missing numbers, so they sort last."""
    return "" if value is None else str(value)


@register.filter
def audit_words(text: str | None) -> str:
    """A word or sentence of the audit's report (kept in English there), in the reader's
    language."""
    return shown(str(text or ""))


@register.filter
def reason_label(code: str) -> str:
    """A verdict or adjudication reason code in words."""
    return shown(rule.ADJUDICATION_REASON_LABELS.get(code, code))


@register.filter
def breakable(text: str) -> str:
    """A name written with underscores ("Art_and_Entertainment"), allowed to wrap after each
    underscore, escaped."""
    parts = (conditional_escape(part) for part in str(text).split("_"))
    return mark_safe("_<wbr>".join(parts))  # noqa: S308 - every part is escaped


@register.filter
def interval_apart(text: str) -> str:
    """An estimate with its interval ("0.753 [0.539, 0.943]"), escaped, the interval kept on
    one line of its own when the cell must wrap."""
    value, bracket, interval = str(text).partition(" [")
    if not bracket:
        return conditional_escape(text)
    return format_html('{} <span class="interval">[{}</span>', value, interval)


@register.filter
def reason(code: str) -> str:
    """A reason code as words, the code and its explanation in the tooltip."""
    explained = rule.ADJUDICATION_REASON_LABELS.get(code)
    tooltip = f"{code}: {shown(explained)}" if explained else code
    return format_html(
        '<span class="reason" title="{}" data-reason="{}">{}</span>',
        tooltip,
        code,
        shown(rule.reason_words(code)),
    )


@register.filter
def subtract(value: float, other: float) -> float:
    return value - other
