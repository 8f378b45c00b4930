"""A campaign's stored sample plan in words, for the dashboard (same text as the commands)."""

from typing import Any

from django import template

from prb_annotate.audit import sample_report

register = template.Library()


@register.filter
def plan_summary(plan: dict[str, Any] | None) -> str:
    return "" if not plan else sample_report.plan_summary(plan)


@register.filter
def plan_design(plan: dict[str, Any] | None) -> str:
    """An active plan's design in words; empty for a uniform one."""
    return (sample_report.design_summary(plan) or "") if plan else ""
