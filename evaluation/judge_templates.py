"""Judge prompts from files: a system prompt and a user template with named fields.

A paper's judge protocol is reproduced by pointing at its prompt files, so that no copy of them
lives here. The fields are the ones the Personalized RewardBench prompts use: ``{question}``,
``{profile}`` (the user's posts, written as ``--profile-format`` says), ``{Response_A}`` and
``{Response_B}``. A field is a name in braces; any other brace is text. A field outside that set
is refused, naming the file and the field, rather than sent to the model as written.

The fields are filled in one pass, so an answer that happens to contain ``{Response_B}`` is
shown as written and never filled in again.
"""

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from evaluation.errors import EvaluationError

FIELDS = ("question", "profile", "Response_A", "Response_B")
FIELD = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
# What a template folder holds: our names, or those of the benchmark's own prompts folder.
FOLDER_NAMES = (("system.txt", "user.txt"), ("pairwise_system.txt", "pairwise_user.txt"))
# A template asking for "Result: A" wants the reasons first: the reply needs room for them.
# 512 new tokens is what the benchmark's judge is given; a bare letter needs a few.
ASKS_FOR_RESULT = re.compile(r"result\W{0,4}:", re.IGNORECASE)
REASONING_NEW_TOKENS = 512
VERDICT_NEW_TOKENS = 16


@dataclass(frozen=True)
class JudgeTemplate:
    """A system prompt (or none) and a user template, with where each came from."""

    user: str
    system: str | None = None
    user_source: str = ""
    system_source: str | None = None

    @property
    def fields(self) -> frozenset[str]:
        return frozenset(FIELD.findall(self.user)) | frozenset(FIELD.findall(self.system or ""))

    @property
    def asks_for_reasoning(self) -> bool:
        """Whether the reply is asked to end with ``Result: <A or B>`` after its reasons."""
        return any(ASKS_FOR_RESULT.search(text or "") for text in (self.system, self.user))

    @property
    def default_max_new_tokens(self) -> int:
        return REASONING_NEW_TOKENS if self.asks_for_reasoning else VERDICT_NEW_TOKENS

    def messages(self, values: dict[str, str]) -> list[dict[str, str]]:
        """The chat sent to the judge: the system turn (when there is one), then the user's."""
        chat = []
        if self.system is not None:
            chat.append({"role": "system", "content": fill(self.system, values)})
        chat.append({"role": "user", "content": fill(self.user, values)})
        return chat

    def describe(self) -> dict[str, str | bool | None]:
        """For the run card: the files and what they ask."""
        return {
            "system": self.system_source,
            "system_sha256": None if self.system is None else sha256_text(self.system),
            "user": self.user_source,
            "user_sha256": sha256_text(self.user),
            "asks_for_reasoning": self.asks_for_reasoning,
        }


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def fill(text: str, values: dict[str, str]) -> str:
    return FIELD.sub(lambda match: values[match.group(1)], text)


def load_judge_template(paths: list[str | Path]) -> JudgeTemplate:
    """A template from a folder (``user.txt`` and, when there is one, ``system.txt``; or the
    benchmark's ``pairwise_user.txt`` and ``pairwise_system.txt``), one user file, or a system
    file and a user file. Raises EvaluationError naming the file and the field at fault."""
    system_path: Path | None
    if len(paths) == 2:
        system_path, user_path = Path(paths[0]), Path(paths[1])
    elif len(paths) == 1 and Path(paths[0]).is_dir():
        system_path, user_path = _folder_files(Path(paths[0]))
    elif len(paths) == 1:
        system_path, user_path = None, Path(paths[0])
    else:
        raise EvaluationError("--judge-template takes a folder, a user file, or system and user")
    system = None if system_path is None else _read(system_path)
    template = JudgeTemplate(
        user=_read(user_path),
        system=system,
        user_source=str(user_path),
        system_source=None if system_path is None else str(system_path),
    )
    if system_path is not None:
        _check_fields(system_path, template.system or "")
    _check_fields(user_path, template.user)
    missing = [name for name in ("Response_A", "Response_B") if name not in template.fields]
    if missing:
        raise EvaluationError(
            f"judge template {user_path}: no {{{missing[0]}}} field: the judge would not see "
            "both answers"
        )
    return template


def _folder_files(folder: Path) -> tuple[Path | None, Path]:
    for system, user in FOLDER_NAMES:
        if (folder / user).is_file():
            return (folder / system if (folder / system).is_file() else None), folder / user
    wanted = " or ".join(user for _, user in FOLDER_NAMES)
    raise EvaluationError(f"judge template folder {folder}: no {wanted}")


def _read(path: Path) -> str:
    try:
        # The benchmark strips its prompt files; a trailing newline is not part of the prompt.
        text = path.read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError) as error:
        raise EvaluationError(f"judge template {path}: cannot be read ({error})") from None
    if not text:
        raise EvaluationError(f"judge template {path}: the file is empty")
    return text


def _check_fields(path: Path, text: str) -> None:
    unknown = sorted(set(FIELD.findall(text)) - set(FIELDS))
    if unknown:
        allowed = ", ".join("{" + name + "}" for name in FIELDS)
        raise EvaluationError(
            f"judge template {path}: unknown field {{{unknown[0]}}} (the fields are {allowed})"
        )
