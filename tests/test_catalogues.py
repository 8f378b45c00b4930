"""The translation catalogues stay complete: every marked message of the code has its Korean
translation (none missing, none fuzzy, none obsolete), the compiled ``.mo`` files in the
repository say what the ``.po`` files say, and the pages participants and annotators read
leave no English text unmarked."""

import ast
import gettext
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LOCALE = ROOT / "prb_annotate" / "locale"
DOMAINS = ("django", "djangojs")
# The options the catalogues are made with (docs/i18n.md).
MAKEMESSAGES = ["makemessages", "-l", "ko", "--no-location", "--ignore=.venv"]

TEMPLATES = ROOT / "prb_annotate" / "templates"
# What a participant or an annotator reads, from the invite link to the last item.
PARTICIPANT_TEMPLATES = [
    "prb_annotate/base.html",
    "prb_annotate/home.html",
    "prb_annotate/annotate.html",
    "prb_annotate/annotate_guidelines.html",
    "prb_annotate/annotate_unavailable.html",
    "prb_annotate/_pair_texts.html",
    "prb_annotate/_progress.html",
    "prb_annotate/_consent.html",
    "prb_annotate/consent.html",
    "prb_annotate/join.html",
    "prb_annotate/join_full.html",
    "prb_annotate/join_refused.html",
    "prb_annotate/qualification_feedback.html",
    "prb_annotate/qualification_result.html",
    "prb_annotate/qualification_screened_out.html",
    "prb_annotate/_qualification_feedback_item.html",
    "prb_annotate/_qualification_progress.html",
    "prb_annotate/_qualification_admit.html",
    "prb_annotate/_return_link.html",
    "prb_annotate/return_study.html",
    "prb_annotate/done.html",
    "prb_annotate/completed.html",
    "prb_annotate/bare_page.html",
    "prb_annotate/refused.html",
    "prb_annotate/unavailable.html",
    "prb_annotate/signup.html",
    "registration/login.html",
    "registration/set_password.html",
    "prb_annotate/account_token.html",
    "prb_annotate/_time_estimate.html",
    "prb_annotate/_user_context.html",
    "prb_annotate/_user_profile.html",
]
# Words that are the same in every language: the app's name, key caps, the API.
UNTRANSLATED = {"prb-annotate", "API", "Enter", "Ctrl", "Space", "Shift", "Tab", "Esc"}


def gettext_tools() -> None:
    missing = [tool for tool in ("xgettext", "msgfmt", "msgmerge") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"gettext tools missing ({', '.join(missing)}): apt-get install gettext")


def fresh_catalogues(tmp_path: Path) -> Path:
    """The Korean catalogues made again from the code, in a copy of the app (makemessages
    merges the committed catalogue into what it finds now)."""
    copy = tmp_path / "copy"
    shutil.copytree(
        ROOT / "prb_annotate",
        copy / "prb_annotate",
        ignore=shutil.ignore_patterns("__pycache__", "*.mo"),
    )
    shutil.copy(ROOT / "manage.py", copy / "manage.py")
    for domain_options in ([], ["-d", "djangojs"]):
        subprocess.run(
            [sys.executable, "manage.py", *MAKEMESSAGES, *domain_options],
            cwd=copy,
            env={"PYTHONPATH": str(copy), "PATH": "/usr/bin:/bin", "PRB_DATA_DIR": str(tmp_path)},
            check=True,
            capture_output=True,
        )
    return copy / "prb_annotate" / "locale" / "ko" / "LC_MESSAGES"


@pytest.mark.parametrize("domain", DOMAINS)
def test_it_translates_every_marked_message_into_korean(tmp_path: Path, domain: str) -> None:
    gettext_tools()
    catalogue = fresh_catalogues(tmp_path) / f"{domain}.po"
    statistics = subprocess.run(
        ["msgfmt", "--check", "--statistics", "-o", "/dev/null", str(catalogue)],
        capture_output=True,
        text=True,
        check=True,
    ).stderr
    assert "untranslated" not in statistics, statistics
    assert "fuzzy" not in statistics, statistics
    text = catalogue.read_text(encoding="utf-8")
    assert "#~" not in text, "obsolete messages: run makemessages and drop them"
    # The committed catalogue is the one the code makes: nothing added, nothing left over.
    committed = (LOCALE / "ko" / "LC_MESSAGES" / f"{domain}.po").read_text(encoding="utf-8")
    assert [entry[:2] for entry in parse_po(text)] == [entry[:2] for entry in parse_po(committed)]


@pytest.mark.parametrize("domain", DOMAINS)
def test_it_ships_compiled_catalogues_that_match_their_sources(domain: str) -> None:
    """A fresh clone needs no gettext: the .mo files are committed, and up to date."""
    source = LOCALE / "ko" / "LC_MESSAGES" / f"{domain}.po"
    with (LOCALE / "ko" / "LC_MESSAGES" / f"{domain}.mo").open("rb") as compiled:
        catalogue = gettext.GNUTranslations(compiled)
    entries = parse_po(source.read_text(encoding="utf-8"))
    assert entries
    for context, msgid, msgstr in entries:
        found = catalogue.pgettext(context, msgid) if context else catalogue.gettext(msgid)
        assert found == msgstr, msgid


def parse_po(text: str) -> list[tuple[str, str, str]]:
    """(msgctxt or "", msgid, msgstr or msgstr[0]) of each message of a catalogue, joined and
    unescaped."""
    entries = []
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        key = ""
        for line in block.splitlines():
            if line.startswith("#"):
                continue
            match = re.match(r'^(msgctxt|msgid_plural|msgid|msgstr\[0\]|msgstr)\s+(".*")$', line)
            if match:
                key = match.group(1)
                fields[key] = unquote(match.group(2))
            elif line.startswith('"') and key:
                fields[key] += unquote(line)
        msgid = fields.get("msgid", "")
        if msgid:
            msgstr = fields.get("msgstr", fields.get("msgstr[0]", ""))
            entries.append((fields.get("msgctxt", ""), msgid, msgstr))
    return entries


def unquote(quoted: str) -> str:
    # A catalogue's strings are quoted and escaped as Python's are (\\", \\n, \\\\).
    return str(ast.literal_eval(quoted))


def unmarked_text(template: str) -> list[str]:
    """Words of ``template`` a reader sees that no translate tag holds."""
    text = re.sub(
        r"{%\s*blocktranslate.*?%}.*?{%\s*endblocktranslate\s*%}", " ", template, flags=re.S
    )
    # A block that names CSS classes holds no words for a reader.
    text = re.sub(r"{%\s*block main_class\s*%}.*?{%\s*endblock\s*%}", " ", text)
    text = re.sub(r"{%.*?%}|{{.*?}}|{#.*?#}", " ", text, flags=re.S)
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", text, flags=re.S)
    # Attributes a reader sees (title, aria-label, placeholder, alt) must be marked too.
    shown = re.findall(r'\b(?:title|aria-label|placeholder|alt)="([^"]*)"', text)
    text = re.sub(r"<[^>]*>", " ", text) + " " + " ".join(shown)
    text = re.sub(r"&\w+;", " ", text)
    words = re.findall(r"[A-Za-z][A-Za-z'\u2019-]+", text)
    return [word for word in words if word not in UNTRANSLATED]


@pytest.mark.parametrize("name", PARTICIPANT_TEMPLATES)
def test_it_marks_every_word_a_participant_reads(name: str) -> None:
    assert unmarked_text((TEMPLATES / name).read_text()) == []


def test_it_finds_a_word_left_unmarked() -> None:
    marked = '{% load i18n %}<p title="{% translate \'Hi\' %}">{% translate "Hello" %}</p>'
    assert unmarked_text(marked) == []
    assert unmarked_text('<p>Hello <kbd>Esc</kbd></p><a title="Go back">x</a>') == [
        "Hello",
        "Go",
        "back",
    ]


GLOSSARIES = (ROOT / "docs" / "i18n.md", ROOT / "docs" / "i18n-glossary.md")


def glossary_terms(path: Path) -> list[tuple[str, str]]:
    """(English, Korean) of each glossary row; a row naming several terms ("practice,
    qualification" / "연습, 자격 평가") gives one pair per term."""
    text = path.read_text()
    table = text[text.index("| English | 한국어 |") :]
    pairs: list[tuple[str, str]] = []
    for line in table.splitlines()[2:]:
        if not line.startswith("|"):
            break
        english, korean = (cell.strip() for cell in line.strip("|").split("|")[:2])
        names, words = english.split(", "), korean.split(", ")
        if len(names) == len(words):
            pairs += zip(names, words, strict=True)
    return pairs


def test_the_two_glossaries_give_each_term_one_korean_word() -> None:
    """The participants' glossary (docs/i18n.md) and the managers' (docs/i18n-glossary.md) are
    one vocabulary: "qualification" was 자격 평가 in one and 자격 심사 in the other."""
    words: dict[str, set[str]] = {}
    for path in GLOSSARIES:
        for english, korean in glossary_terms(path):
            words.setdefault(english, set()).add(korean)
    assert "qualification" in words
    assert {term: sorted(found) for term, found in words.items() if len(found) > 1} == {}
