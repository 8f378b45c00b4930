"""Build the token sequences a reward model reads, once per run.

Two input modes:

- ``question``: the chat ``user: question`` / ``assistant: answer`` through the tokenizer's chat
  template (the benchmark's reference setting).
- ``profile``: the same chat, with the user's first ``top_k`` profile posts (in the order given,
  or ranked against the question: :mod:`evaluation.retrieval`) placed before the question in the
  user turn, each written ``Post i: text`` (``plain``) or, as the benchmark writes them,
  ``Post i (Category: c):`` and the text on the next line (``benchmark``).

Only :class:`~evaluation.records.PairRecord` fields reach this module, so a record's rubric and
narrative cannot end up in a model input.

>>> from evaluation.records import PairRecord, ProfilePost
>>> record = PairRecord(id="1", question="Which tent?", chosen="A", rejected="B",
...                     profile=(ProfilePost("I hike."), ProfilePost("I camp.")))
>>> print(user_turn(record, "profile", top_k=1))
Here are some of my past posts:
<BLANKLINE>
Post 1: I hike.
<BLANKLINE>
My question: Which tent?
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from evaluation.errors import EvaluationError
from evaluation.records import PairRecord

Mode = Literal["question", "profile"]
MODES: tuple[Mode, ...] = ("question", "profile")
PROFILE_FORMATS = ("plain", "benchmark")
# What to do about a pair longer than the limit, unless the run's settings fix the limit
# (:meth:`evaluation.config.ScoreConfig.too_long_advice`).
LARGER_LIMIT = "set a larger --max-length if the model allows it"


@dataclass(frozen=True)
class TokenizedPair:
    """A pair's two sequences, the profile posts they show, and the posts left out to fit the
    length limit (of those the pair would have shown without it)."""

    chosen: list[int]
    rejected: list[int]
    profile_posts: int = 0
    profile_posts_dropped: int = 0

    @property
    def shared_prefix(self) -> int:
        """Tokens the two sequences share at the start, leaving each at least one of its own."""
        limit = min(len(self.chosen), len(self.rejected)) - 1
        length = 0
        while length < limit and self.chosen[length] == self.rejected[length]:
            length += 1
        return length


def profile_text(record: PairRecord, top_k: int, profile_format: str = "plain") -> str:
    """The user's first ``top_k`` posts as text, in ``profile_format``.

    >>> from evaluation.records import PairRecord, ProfilePost
    >>> record = PairRecord(id="1", question="Q?", chosen="A", rejected="B",
    ...                     profile=(ProfilePost("I hike.", category="Outdoors"),
    ...                              ProfilePost("I camp.", category="Outdoors")))
    >>> print(profile_text(record, 2, "benchmark"))
    Post 1 (Category: Outdoors):
    I hike.
    Post 2 (Category: Outdoors):
    I camp.
    """
    posts = enumerate(record.profile[:top_k], 1)
    if profile_format == "benchmark":
        return "\n".join(f"Post {n} (Category: {post.category}):\n{post.text}" for n, post in posts)
    if profile_format != "plain":
        raise EvaluationError(
            f"unknown profile format {profile_format!r} (use {' or '.join(PROFILE_FORMATS)})"
        )
    return "\n\n".join(f"Post {n}: {post.text}" for n, post in posts)


def user_turn(record: PairRecord, mode: Mode, top_k: int, profile_format: str = "plain") -> str:
    if mode == "question" or not record.profile[:top_k]:
        return record.question
    listed = profile_text(record, top_k, profile_format)
    return f"Here are some of my past posts:\n\n{listed}\n\nMy question: {record.question}"


def conversation(
    record: PairRecord, answer: str, mode: Mode, top_k: int, profile_format: str = "plain"
) -> list[dict[str, str]]:
    return [
        {"role": "user", "content": user_turn(record, mode, top_k, profile_format)},
        {"role": "assistant", "content": answer},
    ]


def require_chat_template(tokenizer: Any, name: str) -> None:
    if not getattr(tokenizer, "chat_template", None):
        raise EvaluationError(
            f"the tokenizer of {name} has no chat template; give one with --chat-template FILE "
            "(a Jinja template) or use a model that ships one"
        )


def encode_chats(
    tokenizer: Any, chats: Sequence[list[dict[str, str]]], **options: Any
) -> list[list[int]]:
    """Token ids of each chat in one batched call, starting with exactly one BOS when the
    tokenizer uses one (see :func:`one_bos`).

    Control tokens that appear inside dataset text (``<|im_end|>`` in an answer, say) are encoded
    as plain text, so a record cannot end a turn early or forge a header.
    """
    if not chats:
        return []
    encoded = tokenizer.apply_chat_template(
        list(chats), tokenize=True, return_dict=False, sanitize_control_tokens=True, **options
    )
    bos = tokenizer.bos_token_id
    adds = adds_bos(tokenizer)
    return [one_bos(list(ids), bos, adds=adds) for ids in encoded]


def adds_bos(tokenizer: Any) -> bool:
    """Whether the tokenizer puts BOS in front of plain text, as Llama's and Gemma's do.

    Such a model was trained with a BOS in front of every sequence, whether or not its chat
    template writes one.
    """
    bos = tokenizer.bos_token_id
    if bos is None:
        return False
    with_special = tokenizer("a", add_special_tokens=True)["input_ids"]
    plain = tokenizer("a", add_special_tokens=False)["input_ids"]
    return with_special[:1] == [bos] and plain[:1] != [bos]


def one_bos(ids: list[int], bos_id: int | None, *, adds: bool) -> list[int]:
    """``ids`` with exactly one BOS at the start when the tokenizer uses one.

    The tokenizer uses BOS when its chat template writes ``{{ bos_token }}`` or when it adds BOS
    to plain text (``adds``). A template that writes BOS for a tokenizer that adds it again
    gives two, which a model trained on one reads as noise (one of reward-bench's known
    pitfalls); a template without ``{{ bos_token }}`` for a tokenizer that adds BOS would give
    none. A tokenizer that neither writes nor adds BOS (GPT-2's, say) gets none.

    >>> one_bos([1, 1, 5, 6], 1, adds=True), one_bos([5, 6], 1, adds=True)
    ([1, 5, 6], [1, 5, 6])
    >>> one_bos([1, 5, 6], 1, adds=False), one_bos([5, 6], 1, adds=False)
    ([1, 5, 6], [5, 6])
    >>> one_bos([5, 6], None, adds=False)
    [5, 6]
    """
    if bos_id is None:
        return ids
    start = 0
    while start < len(ids) and ids[start] == bos_id:
        start += 1
    if start == 0 and not adds:
        return ids
    return [bos_id, *ids[start:]]


def check_mode(records: Sequence[PairRecord], mode: str) -> None:
    if mode not in MODES:
        raise EvaluationError(f"unknown mode {mode!r} (use {' or '.join(MODES)})")
    if mode == "profile" and records and not any(record.profile for record in records):
        raise EvaluationError("profile mode needs records with a 'profile' list; none has one")


def tokenize_pairs(
    tokenizer: Any,
    records: Sequence[PairRecord],
    mode: Mode,
    *,
    top_k: int = 10,
    max_length: int | None = None,
    profile_format: str = "plain",
    too_long_advice: str = LARGER_LIMIT,
) -> list[TokenizedPair]:
    """Chosen and rejected token ids of each record, in record order.

    In profile mode a pair longer than ``max_length`` keeps fewer posts (its last ones go first)
    and records how many it dropped; chosen and rejected always keep the same posts so that they
    share their prompt. A pair still too long raises :class:`EvaluationError` naming it, with
    ``too_long_advice``.
    """
    check_mode(records, mode)
    chats = [
        conversation(record, answer, mode, top_k, profile_format)
        for record in records
        for answer in (record.chosen, record.rejected)
    ]
    ids = encode_chats(tokenizer, chats)
    pairs = [
        TokenizedPair(
            ids[2 * i], ids[2 * i + 1], min(top_k, len(record.profile)) if mode == "profile" else 0
        )
        for i, record in enumerate(records)
    ]
    if max_length is None:
        return pairs
    return [
        _fit(tokenizer, record, pair, mode, max_length, profile_format, too_long_advice)
        for record, pair in zip(records, pairs, strict=True)
    ]


def _fit(
    tokenizer: Any,
    record: PairRecord,
    pair: TokenizedPair,
    mode: Mode,
    max_length: int,
    profile_format: str,
    too_long_advice: str,
) -> TokenizedPair:
    wanted = posts = pair.profile_posts
    while max(len(pair.chosen), len(pair.rejected)) > max_length:
        if mode != "profile" or posts == 0:
            longest = max(len(pair.chosen), len(pair.rejected))
            raise EvaluationError(
                f"record {record.id!r}: {longest} tokens, more than the limit of {max_length} "
                f"({too_long_advice})"
            )
        posts -= 1
        chosen, rejected = encode_chats(
            tokenizer,
            [
                conversation(record, answer, mode, posts, profile_format)
                for answer in (record.chosen, record.rejected)
            ],
        )
        pair = TokenizedPair(chosen, rejected, posts, wanted - posts)
    return pair
