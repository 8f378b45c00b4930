"""Every string a person reads is marked for translation: each template's text nodes and read
attributes (tests/support/i18n.py says what counts), the messages the managers' views show, and
the labels and help of their forms and campaign settings. A failure names the file and the
strings."""

from pathlib import Path

import pytest

from tests.support.i18n import (
    TEMPLATES,
    unlabelled_fields,
    unmarked_errors,
    unmarked_in_template,
    unmarked_keywords,
    unmarked_messages,
    unmarked_words,
)

ROOT = TEMPLATES.parent.parent
ALL_TEMPLATES = sorted(str(path.relative_to(TEMPLATES)) for path in TEMPLATES.rglob("*.html"))
# The participants' views are checked with their pages; these are the managers'.
PARTICIPANT_VIEWS = {
    "join",
    "consent",
    "qualifying",
    "annotate",
    "returning",
    "signup",
    "passwords",
    "account",
}
MANAGER_VIEWS = sorted(
    str(path.relative_to(ROOT))
    for path in (ROOT / "prb_annotate" / "views").glob("*.py")
    if path.stem not in PARTICIPANT_VIEWS and path.stem != "__init__"
)
LABELLED = {
    "prb_annotate/web/forms.py": {"label", "help_text"},
    "prb_annotate/web/qualification_forms.py": {"label", "help_text"},
    "prb_annotate/campaigns/setting_fields.py": {"label", "help"},
    "prb_annotate/views/exports.py": {"label", "help_text"},
    "prb_annotate/views/external.py": {"label", "help_text"},
}


@pytest.mark.parametrize("name", ALL_TEMPLATES)
def test_a_template_marks_every_string_a_person_reads(name: str) -> None:
    assert unmarked_in_template(name) == [], f"{name} has unmarked text"


@pytest.mark.parametrize("path", MANAGER_VIEWS)
def test_a_managers_view_marks_every_message_it_writes(path: str) -> None:
    assert list(unmarked_messages(ROOT / path)) == [], f"{path} shows unmarked messages"


@pytest.mark.parametrize("path", sorted(LABELLED))
def test_labels_and_help_are_marked(path: str) -> None:
    assert list(unmarked_keywords(ROOT / path, LABELLED[path])) == []


@pytest.mark.parametrize(
    "path", ["prb_annotate/web/forms.py", "prb_annotate/web/qualification_forms.py"]
)
def test_form_errors_are_marked(path: str) -> None:
    assert list(unmarked_errors(ROOT / path)) == []


def test_the_scan_finds_text_and_read_attributes_and_skips_what_is_marked_or_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tests.support.i18n.TEMPLATES", tmp_path)
    (tmp_path / "page.html").write_text(
        "{% load i18n %}<h1>Audit: {{ name }}</h1>"
        '<abbr title="half-width {{ w }}">±</abbr><input type="submit" value="Save">'
        '<input type="hidden" name="kind" value="paper">'
        "<p>{% translate 'Pairs' %} · {% blocktranslate %}{{ n }} pairs{% endblocktranslate %}"
        " · {{ count }} · 42 · k · JSON</p><code>manage.py audit --json</code>"
        "{% comment %}A note for developers.{% endcomment %}<script>let words = 1;</script>"
    )
    assert unmarked_in_template("page.html") == ["Audit: \ufffc", "half-width \ufffc", "Save"]


def test_the_scan_finds_messages_and_labels_written_in_the_code(tmp_path: Path) -> None:
    module = tmp_path / "views.py"
    module.write_text(
        "from django.utils.translation import gettext as _\n"
        "def view(request, error, n):\n"
        "    messages.success(request, 'Saved.')\n"
        "    messages.error(request, f'Run {n} failed.')\n"
        "    messages.info(request, _('Saved.'))\n"
        "    messages.error(request, str(error))\n"
        "    field = Field(label='Name', help_text=_('Your name.'))\n"
    )
    assert list(unmarked_messages(module)) == ["3: 'Saved.'", "4: f'Run {n} failed.'"]
    assert list(unmarked_keywords(module, {"label", "help_text"})) == ["7: 'Name'"]
    form = tmp_path / "forms.py"
    form.write_text(
        "def clean(self):\n"
        "    self.add_error('name', 'Taken.')\n"
        "    self.add_error('name', _('Taken.'))\n"
        "    raise ValidationError(f'No user {name}.')\n"
    )
    assert list(unmarked_errors(form)) == ["2: 'Taken.'", "4: f'No user {name}.'"]


FORMS = [
    "prb_annotate/web/forms.py",
    "prb_annotate/web/qualification_forms.py",
    "prb_annotate/views/exports.py",
    "prb_annotate/views/external.py",
]


@pytest.mark.parametrize("path", FORMS)
def test_every_form_field_has_a_marked_label(path: str) -> None:
    """A field without ``label=`` is labelled by Django from its name, in English."""
    assert list(unlabelled_fields(ROOT / path)) == []


# The audit's words the pages show: kept English in the report, marked where they are defined
# and translated at display time (prb_annotate/audit/phrases.py).
AUDIT_WORDS = {
    "prb_annotate/audit/rule.py": {"REASON_LABELS", "REASON_WORDS", "ADJUDICATION_REASON_LABELS"},
    "prb_annotate/audit/quality.py": {"LEFT_OUT_REASONS"},
    "prb_annotate/audit/summaries.py": {"CONSISTENCY_CHECKS"},
    "prb_annotate/audit/report.py": {"SHORT"},
    "prb_annotate/audit/intervals.py": {"METHOD_PHRASES", "SHORT_NAMES", "FAMILY_NAMES"},
}


@pytest.mark.parametrize("path", sorted(AUDIT_WORDS))
def test_the_audits_words_are_marked_where_they_are_defined(path: str) -> None:
    assert list(unmarked_words(ROOT / path, AUDIT_WORDS[path])) == []


def test_the_scan_finds_unlabelled_fields_and_unmarked_words(tmp_path: Path) -> None:
    module = tmp_path / "forms.py"
    module.write_text(
        "class F(forms.Form):\n"
        "    name = forms.CharField(max_length=3)\n"
        "    kind = forms.CharField(label=_('Kind'))\n"
        "    key = forms.IntegerField(widget=forms.HiddenInput)\n"
        "WORDS = {'a': 'plain', 'b': gettext_noop('marked')}\n"
        "OTHER = {'c': 'not a word list'}\n"
    )
    assert list(unlabelled_fields(module)) == ["2: F.name"]
    assert list(unmarked_words(module, {"WORDS"})) == ["5: 'plain'"]
