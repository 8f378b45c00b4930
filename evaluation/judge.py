"""A causal language model as a pairwise judge: which of two answers fits this user better?

Each pair is shown as Answer A and Answer B. Which of chosen and rejected is A is drawn per pair
from the seed and the pair's id (so a pair gets the same order on any number of processes), or
both orders are asked with ``both_orders``. The verdict is parsed from the reply; a reply that
names no answer, or both, is an ``unparsed`` verdict: counted and reported, never given to a
side.
"""

import random
import re
from collections.abc import Sequence
from typing import Any

import torch
from tqdm import tqdm

from evaluation.batching import pad_batch, plan_batches
from evaluation.config import ScoreConfig
from evaluation.errors import EvaluationError
from evaluation.inputs import Mode, encode_chats, user_turn
from evaluation.models import LoadedModel
from evaluation.records import PairRecord
from evaluation.results import JudgeVerdict, PairScore, RunStats

INSTRUCTIONS = (
    "Two assistants answered the user's message below. Decide which answer better fits this "
    "particular user: what they ask for, what they care about and how they would like to be "
    "answered. Both answers may be good; pick the one that suits this user better."
)
VERDICT_REQUEST = 'Reply with "A" or "B" only.'

# "[[A]]" anywhere (the MT-Bench convention), else a reply that starts with the letter,
# optionally as "Answer A", "**B**", "(A)", "A." ... The letter itself must be upper case so
# that "a better answer ..." does not read as a verdict.
BRACKETED = re.compile(r"\[\[\s*([AB])\s*\]\]")
LEADING = re.compile(
    r"""^[\s*_"'(\[]*(?:(?i:answer|response|assistant)\s*)?([AB])(?![A-Za-z0-9])"""
)


def judge_message(record: PairRecord, first: str, second: str, mode: Mode, top_k: int) -> str:
    """The one user turn sent to the judge."""
    return (
        f"{INSTRUCTIONS}\n\n[User's message]\n{user_turn(record, mode, top_k)}\n\n"
        f"[Answer A]\n{first}\n[End of Answer A]\n\n[Answer B]\n{second}\n[End of Answer B]\n\n"
        f"{VERDICT_REQUEST}"
    )


def parse_verdict(reply: str) -> str | None:
    """``"A"``, ``"B"`` or ``None`` when the reply does not name exactly one answer.

    >>> [parse_verdict(text) for text in ["B", "**A**", "Answer B.", "[[A]] because", "a tie", ""]]
    ['B', 'A', 'B', 'A', None, None]
    """
    bracketed = set(BRACKETED.findall(reply))
    if bracketed:
        return bracketed.pop() if len(bracketed) == 1 else None
    match = LEADING.match(reply)
    return match.group(1) if match else None


def chosen_positions(pair_id: str, seed: int, both_orders: bool) -> list[str]:
    """Where the chosen answer is shown in each of the pair's judgements."""
    if both_orders:
        return ["A", "B"]
    # Seeded by the pair, not by its place in the run, so sharding cannot change it.
    return ["A" if random.Random(f"{seed}:{pair_id}").random() < 0.5 else "B"]


def verdict_of(position: str, reply: str) -> JudgeVerdict:
    named = parse_verdict(reply)
    picked = None if named is None else ("chosen" if named == position else "rejected")
    return JudgeVerdict(chosen_position=position, reply=reply, named=named, picked=picked)


def pair_score(
    record: PairRecord,
    verdicts: Sequence[JudgeVerdict],
    posts: int,
    answer_tokens: tuple[int, int] = (0, 0),
) -> PairScore:
    """The pair's outcome from its verdicts; ``answer_tokens``: the lengths of the chosen and
    rejected answers in tokens."""
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
        verdicts=tuple(verdicts),
    )


def judge_pairs(
    loaded: LoadedModel, records: Sequence[PairRecord], config: ScoreConfig
) -> tuple[list[PairScore], RunStats]:
    """Judge every pair; scores in record order, and the work done."""
    jobs: list[tuple[int, str]] = [
        (index, position)
        for index, record in enumerate(records)
        for position in chosen_positions(record.id, config.seed, config.both_orders)
    ]
    max_length, _ = config.length_limit(loaded.max_length)
    prompt_limit = None if max_length is None else max_length - config.max_new_tokens
    prompts = []
    posts_used = [
        min(config.top_k, len(r.profile)) if config.mode == "profile" else 0 for r in records
    ]
    for index, position in jobs:
        ids, posts_used[index] = _prompt_ids(
            loaded.tokenizer, records[index], position, config, prompt_limit
        )
        prompts.append(ids)
    replies = generate_replies(loaded, prompts, config)
    verdicts: list[list[JudgeVerdict]] = [[] for _ in records]
    for (index, position), reply in zip(jobs, replies, strict=True):
        verdicts[index].append(verdict_of(position, reply))
    scores = [
        pair_score(r, v, posts, tokens)
        for r, v, posts, tokens in zip(
            records, verdicts, posts_used, answer_lengths(loaded.tokenizer, records), strict=True
        )
    ]
    lengths = [len(ids) for ids in prompts]
    batches = plan_batches(
        [n + config.max_new_tokens for n in lengths], config.batch_tokens(loaded.device)
    )
    computed = sum(len(batch) * max(lengths[i] for i in batch) for batch in batches)
    stats = RunStats(
        pairs=len(records),
        sequences=len(prompts),
        real_tokens=sum(lengths),
        computed_positions=computed,
        padding_positions=computed - sum(lengths),
    )
    return scores, stats


def answer_lengths(tokenizer: Any, records: Sequence[PairRecord]) -> list[tuple[int, int]]:
    """Tokens in each record's chosen and rejected answer, as the judge's tokenizer splits them."""
    if not records:
        return []
    texts = [answer for record in records for answer in (record.chosen, record.rejected)]
    lengths = [len(ids) for ids in tokenizer(texts, add_special_tokens=False)["input_ids"]]
    return list(zip(lengths[0::2], lengths[1::2], strict=True))


def _prompt_ids(
    tokenizer: Any, record: PairRecord, position: str, config: ScoreConfig, limit: int | None
) -> tuple[list[int], int]:
    first, second = (
        (record.chosen, record.rejected) if position == "A" else (record.rejected, record.chosen)
    )
    posts = min(config.top_k, len(record.profile)) if config.mode == "profile" else 0
    while True:
        message = judge_message(record, first, second, config.mode, posts)
        [ids] = encode_chats(
            tokenizer, [[{"role": "user", "content": message}]], add_generation_prompt=True
        )
        if limit is None or len(ids) <= limit:
            return ids, posts
        if config.mode != "profile" or posts == 0:
            raise EvaluationError(
                f"record {record.id!r}: the judge prompt has {len(ids)} tokens, more than {limit} "
                "(set a larger --max-length if the model allows it)"
            )
        posts -= 1


@torch.inference_mode()
def generate_replies(
    loaded: LoadedModel, prompts: Sequence[list[int]], config: ScoreConfig
) -> list[str]:
    """Greedy replies to each prompt, in prompt order; batched by length, padded on the left."""
    from transformers import GenerationConfig

    tokenizer = loaded.tokenizer
    generation = GenerationConfig(
        max_new_tokens=config.max_new_tokens,
        do_sample=False,
        num_beams=1,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.bos_token_id,
    )
    lengths = [len(ids) + config.max_new_tokens for ids in prompts]
    replies = [""] * len(prompts)
    batches = plan_batches(lengths, config.batch_tokens(loaded.device))
    for batch in tqdm(batches, unit="batch", disable=not config.progress, leave=False):
        ids, mask = pad_batch([prompts[i] for i in batch], loaded.pad_id, "left")
        output = loaded.model.generate(
            input_ids=ids.to(loaded.device),
            attention_mask=mask.to(loaded.device),
            generation_config=generation,
        )
        for row, index in enumerate(batch):
            replies[index] = tokenizer.decode(
                output[row, ids.shape[1] :], skip_special_tokens=True
            ).strip()
    return replies
