"""A pairwise judge run through an endpoint (:mod:`evaluation.endpoint`) instead of in process.

The chats are the ones :mod:`evaluation.judge` builds (the same template, the same order of the
answers, the same posts) and the replies are parsed the same way, so a run through an endpoint
and a run in process on the same weights give the same verdicts when both decode greedily. No
model is loaded here and no tokenizer: the server applies the chat template, and a prompt too
long for it is its error, reported with the endpoint's words. A run is one process: the engine
behind the endpoint does the parallel work.
"""

import platform
import time
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from evaluation.config import ScoreConfig
from evaluation.endpoint import Endpoint
from evaluation.errors import EvaluationError
from evaluation.judge import judge_chat, ordered, pair_score, shown_posts, verdict_of
from evaluation.judge_order import judge_positions
from evaluation.records import PairRecord, as_pair_records
from evaluation.results import JudgeVerdict, PairScore, RunStats, ScoreResult
from evaluation.run_card import BASELINE_LIBRARIES, libraries
from evaluation.run_summary import ranked, summarize


def judge_remote(
    endpoint: Endpoint,
    records: Sequence[PairRecord],
    config: ScoreConfig,
    positions: Mapping[str, list[str]],
) -> tuple[list[PairScore], RunStats]:
    """Judge every pair through ``endpoint``; scores in record order, and the requests made."""
    jobs = [(index, position) for index, r in enumerate(records) for position in positions[r.id]]
    posts = [shown_posts(record, config) for record in records]
    chats = [
        judge_chat(records[index], *ordered(records[index], position), config, posts[index])
        for index, position in jobs
    ]
    replies = endpoint.replies(chats, config.new_tokens)
    verdicts: list[list[JudgeVerdict]] = [[] for _ in records]
    for (index, position), reply in zip(jobs, replies, strict=True):
        verdicts[index].append(verdict_of(position, reply))
    scores = [
        pair_score(record, got, count)
        for record, got, count in zip(records, verdicts, posts, strict=True)
    ]
    return scores, RunStats(pairs=len(records), sequences=len(chats))


def score_remote(
    records: Iterable[Mapping[str, Any] | PairRecord], config: ScoreConfig
) -> ScoreResult:
    """:func:`evaluation.scoring.score_records` for a judge behind ``config.endpoint``."""
    endpoint = config.endpoint
    assert endpoint is not None
    if config.self_check:
        raise EvaluationError(
            "--self-check compares batched scores with scores one at a time in process; a judge "
            "behind --judge-endpoint is batched by its server: leave out --self-check"
        )
    pairs = ranked(as_pair_records(records), config)
    started = time.perf_counter()
    scores, stats = judge_remote(endpoint, pairs, config, judge_positions(pairs, config))
    stats.seconds = time.perf_counter() - started
    result = summarize(pairs, scores, stats, config, None, {"device": "endpoint"})
    result.settings = config.as_dict()  # now with the model name the server reported
    result.card = endpoint_card(endpoint, config)
    return result


def endpoint_card(endpoint: Endpoint, config: ScoreConfig) -> dict[str, Any]:
    """The run card of a judge behind an endpoint: where it was asked and which model answered
    (the name the server reported), how, and with which prompts; never the API key."""
    template = config.judge_template
    return {
        "model": config.model,
        "kind": "judge behind an endpoint",
        "endpoint": endpoint.describe(),
        "model_files": None,
        "model_files_reason": "served elsewhere: the endpoint's model name identifies it",
        "judge_template": None if template is None else template.describe(),
        "max_new_tokens": config.new_tokens,
        "mode": config.mode,
        "top_k": config.top_k,
        "profile_format": config.profile_format,
        "rank_profile": config.rank_profile,
        "libraries": {**libraries(BASELINE_LIBRARIES), "python": platform.python_version()},
        "devices": {"device": "endpoint", "name": endpoint.served_model, "processes": 1},
    }
