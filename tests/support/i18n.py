"""Finding what a person reads in a template or a view that is not marked for translation.

A template is read with Django's own lexer: text inside {% translate %}, {% trans %},
{% blocktranslate %} / {% blocktrans %} and {% comment %} is marked (or never shown); every
variable becomes a placeholder that is not a word. What is left is parsed as HTML: its text nodes
(outside <script>, <style>, <code>, <pre>, <kbd>) and the attributes a person reads (title,
placeholder, aria-label, alt, and the value of a submit button) must hold no word. A word is two
letters or more; single letters (k, n, p) and the project's proper names are not words to
translate.

A view's message (messages.success / error / warning / info) may be a value computed elsewhere
(an error's text, a report's summary: those are the domain's words), but never a string literal
or an f-string written in the view: those must go through gettext.

A form field declared without ``label=`` is labelled by Django from its name, in English; and the
audit's label dicts (reasons, coefficients' names) keep English words for the report, so each word
must be marked (``gettext_noop``) where it is written for the pages to translate it.
"""

import ast
import re
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path

from django.template.base import Lexer, TokenType

TEMPLATES = Path(__file__).resolve().parent.parent.parent / "prb_annotate" / "templates"

# What a variable becomes: a character that is neither a letter nor a space.
VARIABLE = "\ufffc"
WORD = re.compile(r"[^\W\d_]{2,}")
IDENTIFIER = re.compile(r"[\d/_]")
# Names and notations that read the same in every language.
UNTRANSLATED = {
    "prb-annotate",
    "JSON",
    "JSONL",
    "CSV",
    "API",
    "LaTeX",
    "Markdown",
    "Prolific",
    "PPI++",
    "Holm",
    "Fisher",
    "Krippendorff",
    "Wilson",
    "Cohen",
    "Dawid-Skene",
    "OpenAPI",
    "Swagger",
    "ReDoc",
    "ID",
    "URL",
    "IPv4",
    "IPv6",
}
READ_ATTRIBUTES = {"title", "placeholder", "aria-label", "alt"}
SUBMIT_TYPES = {"submit", "button", "reset"}
HIDDEN_ELEMENTS = {"script", "style", "code", "pre", "kbd", "svg"}
TRANSLATE_TAGS = {"trans", "translate"}
BLOCK_TRANSLATE = {"blocktrans": "endblocktrans", "blocktranslate": "endblocktranslate"}
SKIPPED_BLOCKS = {"comment": "endcomment", "verbatim": "endverbatim", **BLOCK_TRANSLATE}


def unmarked_in_template(name: str) -> list[str]:
    """The unmarked strings a person reads in the template `name` (relative to the templates
    folder), in the order they come."""
    skeleton = _skeleton((TEMPLATES / name).read_text(encoding="utf-8"))
    reader = _Reader()
    reader.feed(skeleton)
    reader.close()
    return [text for text in reader.found if is_prose(text)]


def is_prose(text: str) -> bool:
    """Whether `text` (variables already placeholders) holds a word to translate. An
    identifier (a word with a digit, a slash or an underscore: float16, org/model) is not."""
    words = text.replace(VARIABLE, " ").split()
    return any(
        WORD.search(word)
        and word.strip(".,:;()·") not in UNTRANSLATED
        and not IDENTIFIER.search(word)
        for word in words
    )


def _skeleton(source: str) -> str:
    """The template as HTML with marked text and variables replaced by placeholders and every
    other template tag by a space."""
    parts: list[str] = []
    closing: str | None = None
    for token in Lexer(source).tokenize():
        head = token.contents.split()[0] if token.token_type == TokenType.BLOCK else ""
        if closing is not None:
            if head == closing:
                closing = None
            continue
        if token.token_type == TokenType.TEXT:
            parts.append(token.contents)
        elif token.token_type == TokenType.VAR:
            parts.append(VARIABLE)
        elif token.token_type == TokenType.BLOCK and token.contents.split()[1:2] == ["main_class"]:
            closing = "endblock"  # the page's CSS classes, never read
            parts.append(" ")
        elif head in SKIPPED_BLOCKS:
            closing = SKIPPED_BLOCKS[head]
            parts.append(VARIABLE if head in BLOCK_TRANSLATE else " ")
        elif head in TRANSLATE_TAGS:
            parts.append(VARIABLE)
        elif token.token_type == TokenType.BLOCK:
            parts.append(" ")
    return "".join(parts)


class _Reader(HTMLParser):
    """Collects text nodes and read attributes, outside the elements that hold code."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._hidden_depth = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in HIDDEN_ELEMENTS:
            self._hidden_depth += 1
        values = dict(attrs)
        for name, value in attrs:
            if value and (name in READ_ATTRIBUTES or self._is_button_label(tag, name, values)):
                self.found.append(value.strip())

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value and (name in READ_ATTRIBUTES or self._is_button_label(tag, name, dict(attrs))):
                self.found.append(value.strip())

    def handle_endtag(self, tag: str) -> None:
        if tag in HIDDEN_ELEMENTS and self._hidden_depth:
            self._hidden_depth -= 1

    def handle_data(self, data: str) -> None:
        if not self._hidden_depth and data.strip():
            self.found.append(" ".join(data.split()))

    @staticmethod
    def _is_button_label(tag: str, name: str, values: dict[str, str | None]) -> bool:
        return tag == "input" and name == "value" and values.get("type") in SUBMIT_TYPES


MESSAGE_LEVELS = {"success", "error", "warning", "info", "debug"}


def unmarked_messages(path: Path) -> Iterator[str]:
    """'line: text' for each messages.<level>(request, ...) call in `path` whose message is a
    string literal or an f-string rather than a gettext call."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in MESSAGE_LEVELS
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "messages"
            and len(node.args) >= 2
        ):
            continue
        message = node.args[1]
        if _written_here(message):
            yield f"{node.lineno}: {ast.unparse(message)}"


def _written_here(node: ast.expr) -> bool:
    """Whether the expression is (or holds at its top) text written in the code itself."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return True
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.IfExp):
        return _written_here(node.body) or _written_here(node.orelse)
    if isinstance(node, ast.BinOp):
        return _written_here(node.left) or _written_here(node.right)
    return False


def unmarked_keywords(path: Path, names: set[str]) -> Iterator[str]:
    """'line: text' for each keyword argument in `names` (label=, help_text= ...) given a
    string literal rather than a gettext call."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.keyword)
            and node.arg in names
            and _written_here(node.value)
            and not (isinstance(node.value, ast.Constant) and not str(node.value.value).strip())
        ):
            yield f"{node.value.lineno}: {ast.unparse(node.value)}"


def unmarked_errors(path: Path) -> Iterator[str]:
    """'line: text' for each form error written in the code without gettext: the message of
    ``add_error(field, ...)`` or of ``ValidationError(...)``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = (
            node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        )
        position = {"add_error": 1, "ValidationError": 0}.get(name)
        if (
            position is not None
            and len(node.args) > position
            and _written_here(node.args[position])
        ):
            yield f"{node.lineno}: {ast.unparse(node.args[position])}"


def unlabelled_fields(path: Path) -> Iterator[str]:
    """'line: Class.field' for each form field declared in a class body without ``label=``:
    Django would label it from its name, in English. A hidden field has no label to read."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for cls in (node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)):
        for statement in cls.body:
            if not (
                isinstance(statement, ast.Assign)
                and isinstance(statement.value, ast.Call)
                and isinstance(statement.value.func, ast.Attribute)
                and isinstance(statement.value.func.value, ast.Name)
                and statement.value.func.value.id == "forms"
                and statement.value.func.attr.endswith("Field")
            ):
                continue
            keywords = {keyword.arg: keyword.value for keyword in statement.value.keywords}
            hidden = "Hidden" in ast.unparse(keywords.get("widget", ast.Constant("")))
            if "label" not in keywords and not hidden:
                names = ", ".join(ast.unparse(target) for target in statement.targets)
                yield f"{statement.lineno}: {cls.name}.{names}"


def unmarked_words(path: Path, names: set[str]) -> Iterator[str]:
    """'line: text' for each string written directly as a value of the dicts ``names`` (the
    audit's words: reason labels, coefficient names) rather than through ``gettext_noop`` or
    another gettext call, which would leave it out of the catalogue."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        value: ast.expr | None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        else:
            continue
        if not any(isinstance(target, ast.Name) and target.id in names for target in targets):
            continue
        if isinstance(value, ast.Dict):
            for item in value.values:
                if _written_here(item):
                    yield f"{item.lineno}: {ast.unparse(item)}"
