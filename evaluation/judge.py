"""A causal language model as a pairwise judge: which of two answers fits this user better?

Each pair is shown as Answer A and Answer B. Which of chosen and rejected is A is drawn per pair
from the seed and the pair's id (so a pair gets the same order on any number of processes), or
both orders are asked with ``both_orders``. With ``paper_settings`` the order is drawn as the
benchmark draws it (:func:`paper_positions`). The prompt is the project's own, or a template
read from files (:mod:`evaluation.judge_templates`).

The verdict is parsed from the reply, which may reason first (:func:`parse_verdict`); a reply
that names no answer, or both, is an ``unparsed`` verdict: counted and reported, never given to
a side. The benchmark reads such a reply as "A"; :mod:`evaluation.paper_protocol` gives that
figure beside ours.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from tqdm import tqdm

from evaluation.batching import pad_batch, plan_batches
from evaluation.config import ScoreConfig
from evaluation.errors import EvaluationError
from evaluation.inputs import Mode, encode_chats, profile_text, user_turn
from evaluation.interrupt import batch_done
from evaluation.judge_order import judge_positions
from evaluation.models import LoadedModel
from evaluation.records import PairRecord
from evaluation.results import JudgeVerdict, PairScore, RunStats

INSTRUCTIONS = (
    "Two assistants answered the user's message below. Decide which answer better fits this "
    "particular user: what they ask for, what they care about and how they would like to be "
    "answered. Both answers may be good; pick the one that suits this user better."
)
VERDICT_REQUEST = 'Reply with "A" or "B" only.'


@dataclass(frozen=True)
class FirstToken:
    """The first token of a greedy reply (-1 when none was generated) and the probabilities the
    model gave the watched tokens at that step."""

    token: int
    chances: Mapping[int, float]


# "[[A]]" anywhere (the MT-Bench convention), else a reply that starts with the letter,
# optionally as "Answer A", "**B**", "(A)", "A." ... The letter itself must be upper case so
# that "a better answer ..." does not read as a verdict.
BRACKETED = re.compile(r"\[\[\s*([AB])\s*\]\]")
LEADING = re.compile(
    r"""^[\s*_"'(\[]*(?:(?i:answer|response|assistant)\s*)?([AB])(?![A-Za-z0-9])"""
)
# A reply that reasons first: a reasoning model's thoughts end with "</think>", and the verdict
# follows the last "Result:" in any case, Markdown emphasis allowed ("**Result:** B").
THINK_END = "</think>"
RESULT = re.compile(r"result[*_\s]*:", re.IGNORECASE)


def judge_chat(
    record: PairRecord, first: str, second: str, config: ScoreConfig, posts: int
) -> list[dict[str, str]]:
    """The chat sent to the judge: the project's prompt, or the template's turns filled in."""
    template = config.judge_template
    if template is None:
        message = judge_message(record, first, second, config.mode, posts, config.profile_format)
        return [{"role": "user", "content": message}]
    values = {
        "question": record.question,
        "profile": profile_text(record, posts, config.profile_format),
        "Response_A": first,
        "Response_B": second,
    }
    return template.messages(values)


def judge_message(
    record: PairRecord,
    first: str,
    second: str,
    mode: Mode,
    top_k: int,
    profile_format: str = "plain",
) -> str:
    """The one user turn of the project's own prompt."""
    return (
        f"{INSTRUCTIONS}\n\n[User's message]\n{user_turn(record, mode, top_k, profile_format)}\n\n"
        f"[Answer A]\n{first}\n[End of Answer A]\n\n[Answer B]\n{second}\n[End of Answer B]\n\n"
        f"{VERDICT_REQUEST}"
    )


def parse_verdict(reply: str) -> str | None:
    """``"A"``, ``"B"`` or ``None`` when the reply does not name exactly one answer.

    Everything up to the last ``</think>`` is dropped; when ``Result:`` follows, the verdict is
    read after its last occurrence; then the letter is read as below.

    >>> [parse_verdict(text) for text in ["B", "**A**", "Answer B.", "[[A]] because", "a tie", ""]]
    ['B', 'A', 'B', 'A', None, None]
    >>> parse_verdict("<think>A is wrong</think>**Reasoning:** B fits. **Result:** B")
    'B'
    """
    reply = reply.rsplit(THINK_END, 1)[-1]
    results = list(RESULT.finditer(reply))
    if results:
        reply = reply[results[-1].end() :]
    return _letter(reply)


def _letter(reply: str) -> str | None:
    bracketed = set(BRACKETED.findall(reply))
    if bracketed:
        return bracketed.pop() if len(bracketed) == 1 else None
    match = LEADING.match(reply)
    return match.group(1) if match else None


def verdict_of(position: str, reply: str) -> JudgeVerdict:
    named = parse_verdict(reply)
    picked = None if named is None else ("chosen" if named == position else "rejected")
    return JudgeVerdict(chosen_position=position, reply=reply, named=named, picked=picked)


def pair_score(
    record: PairRecord,
    verdicts: Sequence[JudgeVerdict],
    posts: int,
    answer_tokens: tuple[int, int] = (0, 0),
    posts_dropped: int = 0,
) -> PairScore:
    """The pair's outcome from its verdicts; ``posts``: the profile posts its prompts showed
    (the fewest of any), ``posts_dropped``: those left out to fit the length limit;
    ``answer_tokens``: the lengths of the chosen and rejected answers in tokens."""
    picks = [verdict.picked for verdict in verdicts]
    if any(pick is None for pick in picks):
        outcome = "unparsed"
    elif all(pick == "chosen" for pick in picks):
        outcome = "correct"
    elif all(pick == "rejected" for pick in picks):
        outcome = "wrong"
    else:
        outcome = "tie"  # the pick followed the position, not the answer
    return PairScore(
        id=record.id,
        category=record.category,
        outcome=outcome,
        chosen_score=float(picks.count("chosen")),
        rejected_score=float(picks.count("rejected")),
        chosen_tokens=answer_tokens[0],
        rejected_tokens=answer_tokens[1],
        profile_posts=posts,
        profile_posts_dropped=posts_dropped,
        verdicts=tuple(verdicts),
    )


def judge_pairs(
    loaded: LoadedModel,
    records: Sequence[PairRecord],
    config: ScoreConfig,
    positions: Mapping[str, list[str]] | None = None,
) -> tuple[list[PairScore], RunStats]:
    """Judge every pair; scores in record order, and the work done. ``positions``: where the
    chosen answer is shown in each judgement of each pair (by default drawn for ``records``)."""
    if positions is None:
        positions = judge_positions(records, config)
    jobs: list[tuple[int, str]] = [
        (index, position)
        for index, record in enumerate(records)
        for position in positions[record.id]
    ]
    max_length, _ = config.length_limit(loaded.max_length)
    prompt_limit = None if max_length is None else max_length - config.new_tokens
    fitted = [
        _prompt_ids(loaded.tokenizer, records[index], position, config, prompt_limit)
        for index, position in jobs
    ]
    replies = generate_replies(loaded, [prompt.ids for prompt in fitted], config)
    verdicts: list[list[JudgeVerdict]] = [[] for _ in records]
    posts_shown: list[list[int]] = [[] for _ in records]
    for (index, position), reply, prompt in zip(jobs, replies, fitted, strict=True):
        verdicts[index].append(verdict_of(position, reply))
        posts_shown[index].append(prompt.posts)
    scores = [
        _judged_pair(record, got, shown, tokens, config)
        for record, got, shown, tokens in zip(
            records, verdicts, posts_shown, answer_lengths(loaded.tokenizer, records), strict=True
        )
    ]
    lengths = [len(prompt.ids) for prompt in fitted]
    batches = plan_batches(
        [n + config.new_tokens for n in lengths], config.batch_tokens(loaded.device)
    )
    computed = sum(len(batch) * max(lengths[i] for i in batch) for batch in batches)
    stats = RunStats(
        pairs=len(records),
        sequences=len(fitted),
        real_tokens=sum(lengths),
        computed_positions=computed,
        padding_positions=computed - sum(lengths),
    )
    return scores, stats


def _judged_pair(
    record: PairRecord,
    verdicts: Sequence[JudgeVerdict],
    posts_shown: Sequence[int],
    answer_tokens: tuple[int, int],
    config: ScoreConfig,
) -> PairScore:
    """The pair's score, with the posts its prompts showed (the fewest, when it was asked in
    both orders) and those dropped to fit, counted against what it would have been shown."""
    shown = min(posts_shown, default=shown_posts(record, config))
    dropped = shown_posts(record, config) - shown
    return pair_score(record, verdicts, shown, answer_tokens, dropped)


def answer_lengths(tokenizer: Any, records: Sequence[PairRecord]) -> list[tuple[int, int]]:
    """Tokens in each record's chosen and rejected answer, as the judge's tokenizer splits them."""
    if not records:
        return []
    texts = [answer for record in records for answer in (record.chosen, record.rejected)]
    lengths = [len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]]
    return list(zip(lengths[0::2], lengths[1::2], strict=True))


def shown_posts(record: PairRecord, config: ScoreConfig) -> int:
    """Profile posts the judge is shown at most: in profile mode, or when the template asks."""
    template = config.judge_template
    wanted = config.mode == "profile" if template is None else "profile" in template.fields
    return min(config.top_k, len(record.profile)) if wanted else 0


def ordered(record: PairRecord, position: str) -> tuple[str, str]:
    """The answers as shown: A first. ``position``: where the chosen answer is."""
    if position == "A":
        return record.chosen, record.rejected
    return record.rejected, record.chosen


@dataclass(frozen=True)
class FittedPrompt:
    """One judge prompt's token ids and the profile posts it shows after fitting the limit."""

    ids: list[int]
    posts: int


def _prompt_ids(
    tokenizer: Any, record: PairRecord, position: str, config: ScoreConfig, limit: int | None
) -> FittedPrompt:
    first, second = ordered(record, position)
    posts = shown_posts(record, config)
    while True:
        chat = judge_chat(record, first, second, config, posts)
        [ids] = encode_chats(tokenizer, [chat], add_generation_prompt=True)
        if limit is None or len(ids) <= limit:
            return FittedPrompt(ids, posts)
        if posts == 0:
            raise EvaluationError(
                f"record {record.id!r}: the judge prompt has {len(ids)} tokens, more than {limit} "
                f"(the length limit less {config.new_tokens} new tokens for the reply; "
                f"{config.too_long_advice()}, or give a smaller --max-new-tokens)"
            )
        posts -= 1


@torch.inference_mode()
def generate_replies(
    loaded: LoadedModel, prompts: Sequence[list[int]], config: ScoreConfig
) -> list[str]:
    """Greedy replies to each prompt, in prompt order; batched by length, padded on the left."""
    return generate_with_first_token(loaded, prompts, config, ())[0]


@torch.inference_mode()
def generate_with_first_token(
    loaded: LoadedModel, prompts: Sequence[list[int]], config: ScoreConfig, watched: Sequence[int]
) -> tuple[list[str], list[FirstToken]]:
    """Greedy replies, and for each the first token it generated with the probabilities (over
    the whole vocabulary) of the ``watched`` token ids at that step."""
    from transformers import GenerationConfig

    tokenizer = loaded.tokenizer
    generation = GenerationConfig(
        max_new_tokens=config.new_tokens,
        do_sample=False,
        num_beams=1,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.bos_token_id,
        output_scores=bool(watched),
        return_dict_in_generate=True,
    )
    lengths = [len(ids) + config.new_tokens for ids in prompts]
    replies = [""] * len(prompts)
    firsts = [FirstToken(-1, {})] * len(prompts)
    watch = torch.tensor(sorted(set(watched)), dtype=torch.long)
    batches = plan_batches(lengths, config.batch_tokens(loaded.device))
    for batch in tqdm(batches, unit="batch", disable=not config.progress, leave=False):
        batch_done()  # before the batch: generating one is the slow part
        ids, mask = pad_batch([prompts[i] for i in batch], loaded.pad_id, "left")
        output = loaded.model.generate(
            input_ids=ids.to(loaded.device),
            attention_mask=mask.to(loaded.device),
            generation_config=generation,
        )
        sequences = output.sequences
        chances = (
            torch.softmax(output.scores[0].float(), dim=-1)[:, watch.to(sequences.device)].cpu()
            if watched
            else None
        )
        for row, index in enumerate(batch):
            replies[index] = tokenizer.decode(
                sequences[row, ids.shape[1] :], skip_special_tokens=True
            ).strip()
            if chances is not None and sequences.shape[1] > ids.shape[1]:
                firsts[index] = FirstToken(
                    int(sequences[row, ids.shape[1]]),
                    dict(zip(watch.tolist(), chances[row].tolist(), strict=True)),
                )
    return replies, firsts
