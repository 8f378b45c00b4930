"""Settings of a scoring run: one typed object for the library and the command line."""

import argparse
import math
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from evaluation.errors import EvaluationError
from evaluation.inputs import LARGER_LIMIT, MODES, PROFILE_FORMATS, Mode
from evaluation.judge_templates import VERDICT_NEW_TOKENS, JudgeTemplate

if TYPE_CHECKING:  # the built-in baselines use this module without torch
    import torch

    from evaluation.endpoint import Endpoint

PrefixReuse = Literal["auto", "on", "off"]
# How a classifier's logits become one reward: a label's logit (``--label-index``), the
# paper's ``softmax(logits)[-1]`` for heads with several labels, or by default (None) the single
# logit, or the log-odds of label 1 for two labels (:func:`evaluation.forward.readout_rule`).
SOFTMAX_LAST: Literal["softmax-last"] = "softmax-last"
Readout: TypeAlias = int | Literal["softmax-last"] | None

# The paper's length limit, in tokens, whatever the model's own limit.
PAPER_MAX_LENGTH = 8192
# The seed of the benchmark's judge order (its --seed default), used with --paper-settings
# when no --seed is given.
PAPER_JUDGE_SEED = 42

# Token positions (rows x padded length) per forward pass. A CPU gains nothing from big batches
# once matmuls are a few thousand rows tall; a GPU wants them large.
CPU_BATCH_TOKENS = 4096
CUDA_BATCH_TOKENS = 32768


# The level of the intervals the commands print, unless ``--confidence`` says otherwise.
CONFIDENCE = 0.95


def level(text: str) -> float:
    """``--confidence`` and ``--alpha``: a number strictly between 0 and 1. Outside it an
    interval is empty or the whole line, and a test rejects always or never."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value < 1:  # NaN too
        raise argparse.ArgumentTypeError(f"must be a number between 0 and 1, not {text!r}")
    return value


def add_confidence_option(parser: argparse.ArgumentParser, intervals: str) -> None:
    """``--confidence``, the level of ``intervals``, as ``score``, ``compare`` and
    ``correlate`` take it."""
    parser.add_argument(
        "--confidence",
        type=level,
        default=CONFIDENCE,
        help=f"level of {intervals} (default: {CONFIDENCE:g})",
    )


def add_retired_option(
    parser: argparse.ArgumentParser, name: str, default: int | None = None
) -> None:
    """An integer option older command lines pass that no longer changes any figure (the
    intervals became exact and resample nothing): accepted, kept in the run's settings where
    ``default`` is given, and left out of ``--help``."""
    parser.add_argument(name, type=int, default=default, help=argparse.SUPPRESS)


def add_model_options(parser: argparse.ArgumentParser) -> None:
    """Which model, how it reads a pair and where it runs: the options of
    ``python -m evaluation score`` and ``manage.py evaluate`` alike (the fields of
    :class:`ScoreConfig` of the same names)."""
    parser.add_argument("--model", required=True, help="local folder or Hub id")
    parser.add_argument("--mode", choices=MODES, default="question")
    parser.add_argument(
        "--top-k",
        type=int,
        default=10,
        help="profile posts shown in profile mode, or in a judge template's {profile}",
    )
    parser.add_argument(
        "--judge", action="store_true", help="the model is a causal LM judging pairs"
    )
    parser.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: cuda if present)")
    parser.add_argument(
        "--dtype", help="float32, bfloat16, float16 (default: bf16 on cuda, fp32 on cpu)"
    )
    parser.add_argument("--max-batch-tokens", type=int, help="token positions per forward pass")


@dataclass(frozen=True)
class ScoreConfig:
    """What to score and how.

    Attributes:
        model: local folder or Hub id of the reward model (or of the judge with ``judge``).
        mode: ``question`` (user: question, assistant: answer) or ``profile`` (the user's first
            ``top_k`` profile posts before the question).
        top_k: profile posts shown in profile mode, in the order the record gives them.
        judge: score with a causal LM asked which answer fits the user better, instead of a
            classifier reward model.
        both_orders: judge each pair twice, with the answers swapped; needed for position
            consistency. Otherwise each pair gets one order, drawn from ``seed`` and its id.
        device, dtype: ``None`` picks CUDA + bfloat16 when there is a GPU, else CPU + float32.
        max_batch_tokens: token positions per forward pass (rows x padded length); ``None``
            picks a default for the device.
        max_length: longest sequence allowed; ``None`` takes the model's own limit
            (``max_position_embeddings``; the paper's is 8,192 tokens). A pair shown profile
            posts (profile mode, or a judge template's ``{profile}``) that is longer keeps
            fewer, and the summary counts the posts dropped.
        prefix_reuse: compute the prompt chosen and rejected share once and reuse its KV cache
            for both answers; ``auto`` does so in profile mode, where the prompt is long.
        padding_side: ``left`` or ``right``; ``None`` follows the tokenizer. Scores do not
            depend on it; it is there to prove so.
        label_index: for classifiers with several labels, which logit is the reward. By default
            one label is the reward, and with two labels the reward is ``logit[1] - logit[0]``;
            with ``paper_settings``, ``softmax(logits)[-1]`` (see :attr:`readout`).
        tie_tolerance: scores closer than this count as a tie (default: exactly equal).
        chat_template: a Jinja chat template replacing (or supplying) the tokenizer's.
        max_new_tokens: reply length a judge may generate; ``None`` follows the judge template
            (hundreds for one that asks for reasoning first, see :attr:`new_tokens`).
        judge_template: the judge's system prompt and user template from files
            (:mod:`evaluation.judge_templates`); ``None``: the project's own prompt.
        profile_format: how profile posts are written: ``plain`` (``Post i: text``) or
            ``benchmark`` (``Post i (Category: c):`` then the text).
        rank_profile: a local dense retriever (a folder) that ranks each user's posts against
            the question before the first ``top_k`` are kept (:mod:`evaluation.retrieval`).
        endpoint: a judge served over the OpenAI chat-completions protocol instead of a model
            loaded here (:mod:`evaluation.endpoint`).
        seed: where a judge is shown the chosen answer, the pairs ``self_check`` draws, and
            ``builtin:random``'s rewards. Nothing is resampled: the accuracy intervals are
            worked out from the counts.
        confidence: level of the accuracy intervals (Wilson's, with continuity correction).
        resamples: kept in the run's settings for older command lines; the accuracy
            intervals are computed exactly and resample nothing.
        group_by: a record label (``validation.verdict``, ``split``, any scalar field) to report
            accuracy by; ``None`` uses ``validation.verdict`` when records have it. Grouped by
            ``validation.verdict``, the groups are the audit subsets, as ``compare`` reads them
            (:func:`evaluation.records.audit_subset`: an undecided pair is excluded).
        progress: show a progress bar.
        name: a short name for the run (``rm-8b``), stored in the summary; ``correlate``
            matches downstream rows on it. ``None``: the model as given.
        paper_settings: the paper's protocol where it differs from the defaults: question mode,
            a length limit of 8,192 tokens, exact ties, ``softmax(logits)[-1]`` for heads with
            several labels, the judge's order drawn as the benchmark draws it, and its figure
            with unparsed replies read as "A" beside ours (see docs/evaluation.md). Options
            that contradict it are an error.
        self_check: score this many pairs (drawn from ``seed``) one at a time as well, and
            compare with the batched scores (:mod:`evaluation.self_check`); 0: no check.
        allow_flips: keep a run whose self-check found decisions that flip.
    """

    model: str
    mode: Mode = "question"
    top_k: int = 10
    judge: bool = False
    both_orders: bool = False
    device: str | None = None
    dtype: str | None = None
    max_batch_tokens: int | None = None
    max_length: int | None = None
    prefix_reuse: PrefixReuse = "auto"
    padding_side: str | None = None
    label_index: int | None = None
    tie_tolerance: float = 0.0
    chat_template: str | None = None
    trust_remote_code: bool = False
    max_new_tokens: int | None = None
    seed: int = 0
    resamples: int = 2000
    confidence: float = CONFIDENCE
    group_by: str | None = None
    progress: bool = False
    name: str | None = None
    paper_settings: bool = False
    self_check: int = 0
    allow_flips: bool = False
    judge_template: JudgeTemplate | None = None
    profile_format: str = "plain"
    rank_profile: str | None = None
    endpoint: "Endpoint | None" = None

    def __post_init__(self) -> None:
        if self.self_check < 0:
            raise EvaluationError(f"--self-check takes a number of pairs, not {self.self_check}")
        if self.profile_format not in PROFILE_FORMATS:
            raise EvaluationError(
                f"unknown profile format {self.profile_format!r} "
                f"(use {' or '.join(PROFILE_FORMATS)})"
            )
        if self.max_new_tokens is not None and self.max_new_tokens < 1:
            raise EvaluationError(f"--max-new-tokens must be 1 or more, not {self.max_new_tokens}")
        if not self.paper_settings:
            return
        conflicts = [
            option
            for option, differs in (
                (f"--mode {self.mode}", self.mode != "question"),
                (f"--max-length {self.max_length}", self.max_length is not None),
                (f"--tie-tolerance {self.tie_tolerance}", self.tie_tolerance != 0),
                (f"--label-index {self.label_index}", self.label_index is not None),
            )
            if differs
        ]
        if conflicts:
            raise EvaluationError(
                f"--paper-settings means question mode, a length limit of {PAPER_MAX_LENGTH:,} "
                "tokens, exact ties and softmax(logits)[-1] for several labels: leave out "
                f"{' and '.join(conflicts)}"
            )

    @property
    def new_tokens(self) -> int:
        """The reply length a judge may generate: as given, else what the template needs."""
        if self.max_new_tokens is not None:
            return self.max_new_tokens
        if self.judge_template is not None:
            return self.judge_template.default_max_new_tokens
        return VERDICT_NEW_TOKENS

    @property
    def readout(self) -> Readout:
        """How a classifier's logits become its reward (:func:`evaluation.forward.readout_rule`):
        the paper's ``softmax(logits)[-1]`` with ``paper_settings``, else ``label_index``."""
        return SOFTMAX_LAST if self.paper_settings else self.label_index

    def too_long_advice(self) -> str:
        """What a user can do about a pair longer than the length limit, with the options this
        run may take: ``paper_settings`` fixes the limit and refuses ``--max-length``."""
        if self.paper_settings:
            return (
                f"--paper-settings holds every input to the paper's {PAPER_MAX_LENGTH:,} tokens "
                "and takes no --max-length: leave the pair out of the data, or score without "
                "--paper-settings and set a larger --max-length if the model allows it"
            )
        return LARGER_LIMIT

    def length_limit(self, model_limit: int | None) -> tuple[int | None, str]:
        """The longest sequence allowed, and where that number comes from."""
        if self.max_length is not None:
            return self.max_length, "--max-length"
        if self.paper_settings:
            return PAPER_MAX_LENGTH, "--paper-settings"
        if model_limit is not None:
            return model_limit, "the model's max_position_embeddings"
        return None, "none: the model states no limit"

    @property
    def run_name(self) -> str:
        return self.name or self.model

    def batch_tokens(self, device: "torch.device") -> int:
        """``max_batch_tokens``, or the default for ``device``."""
        if self.max_batch_tokens is not None:
            return self.max_batch_tokens
        return CUDA_BATCH_TOKENS if device.type == "cuda" else CPU_BATCH_TOKENS

    def as_dict(self) -> dict[str, Any]:
        settings = asdict(self)
        settings.pop("progress")
        settings["name"] = self.run_name
        settings["max_new_tokens"] = self.new_tokens if self.judge else self.max_new_tokens
        if settings["chat_template"] is not None:
            settings["chat_template"] = "(given)"
        if self.judge_template is not None:
            settings["judge_template"] = self.judge_template.describe()
        settings["endpoint"] = None if self.endpoint is None else self.endpoint.describe()
        return settings
