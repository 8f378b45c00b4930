"""Rank a user's profile posts against the question with a local dense retriever.

The benchmark shows a model the user's posts ranked by a dense retriever (Contriever fine-tuned
on MS MARCO) against the question, best first, and keeps the first ten. The same is done here
with any encoder transformers loads from a folder: the question and each post are encoded,
truncated to the encoder's limit, mean-pooled over their real tokens (as Contriever is used),
and posts are ordered by the dot product of their vector with the question's, highest first
(equal scores keep the record's order). ``--top-k`` then keeps the first posts as usual.

A pair is ranked once per run: its ranking is kept by its question and posts, so a pair asked in
both orders, or again by the self-check, is not encoded twice. Nothing is fetched: the retriever
is a local folder (the run card records the sha256 of its files).
"""

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from evaluation.errors import EvaluationError
from evaluation.interrupt import batch_done
from evaluation.models import first_line, quiet_transformers, resolve_device
from evaluation.records import PairRecord, ProfilePost

POOLING = "mean over the real tokens, dot product with the question's (as Contriever)"
BATCH_SIZE = 16


def mean_pooling(hidden: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The mean of each row's hidden states over its real tokens."""
    weights = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1)


class Retriever:
    """An encoder and its tokenizer, loaded from a local folder."""

    def __init__(self, folder: str, device: str | None = None) -> None:
        from transformers import AutoModel, AutoTokenizer

        if not (Path(folder) / "config.json").is_file():
            raise EvaluationError(f"--rank-profile {folder}: not a model folder (no config.json)")
        try:
            with quiet_transformers():
                self.tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
                self.model = AutoModel.from_pretrained(folder, local_files_only=True)
        except (OSError, ValueError, KeyError) as error:
            raise EvaluationError(f"--rank-profile {folder}: {first_line(error)}") from None
        self.device = resolve_device(device)
        self.model.to(self.device).eval()
        self.rankings: dict[tuple[str, tuple[str, ...]], list[int]] = {}

    @torch.inference_mode()
    def encode(self, texts: Sequence[str]) -> torch.Tensor:
        vectors = []
        for start in range(0, len(texts), BATCH_SIZE):
            batch_done()
            batch = self.tokenizer(
                list(texts[start : start + BATCH_SIZE]),
                padding=True,
                truncation=True,
                return_tensors="pt",
            ).to(self.device)
            hidden = self.model(**batch).last_hidden_state
            vectors.append(mean_pooling(hidden.float(), batch["attention_mask"]).cpu())
        return torch.cat(vectors)

    def ranking(self, question: str, posts: Sequence[str]) -> list[int]:
        """The posts' indices, best match first; kept for the next pair with the same text."""
        key = (question, tuple(posts))
        if key not in self.rankings:
            vectors = self.encode([question, *posts])
            scores = (vectors[1:] @ vectors[0]).tolist()
            self.rankings[key] = sorted(range(len(posts)), key=lambda i: -scores[i])
        return self.rankings[key]

    def rank(self, pair: PairRecord) -> PairRecord:
        if len(pair.profile) < 2:
            return pair
        order = self.ranking(pair.question, [post.text for post in pair.profile])
        ranked: tuple[ProfilePost, ...] = tuple(pair.profile[i] for i in order)
        return replace(pair, profile=ranked)


def rank_profiles(
    pairs: Sequence[PairRecord], folder: str, *, device: Any = None
) -> list[PairRecord]:
    """``pairs`` with each profile ranked against its question by the retriever in ``folder``."""
    retriever = Retriever(folder, device)
    return [retriever.rank(pair) for pair in pairs]
