"""A simulated model annotator of known accuracy: answers to the model annotator's questions
(rubric fit, main difference, both A/B orders) written as a real model annotator's run would
be, so that the audit's model sections and its prediction-powered estimate have something
known to show. Marked simulated everywhere: the run's model name and ``settings.simulated``.

On each pair it gives the true answers (what a careful annotator answers) with probability
``accuracy``, in both orders; otherwise it misjudges the pair whichever way would change its
verdict (it validates a flawed pair, or rejects a sound one). Beside each answer it gives a
probability, as a model annotator that reads its token probabilities does: its confidence in
the pair, drawn from ``CONFIDENT`` when it is right and from ``UNSURE`` when it is wrong (from a
random stream of its own, so the answers are those of the same seed without it), written as the
probability of the validating choice (chosen, preference).
"""

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from prb_annotate.campaigns.model_annotator import dataset_pairs, store_answers
from prb_annotate.models import Campaign, EvaluationRun, Pair

SIMULATED_MODEL = "simulated judge"
SOUND = ("chosen", "preference")
# The simulated model's confidence in its answers: high where it is right, middling where not.
CONFIDENT = (0.6, 1.0)
UNSURE = (0.5, 0.8)


@dataclass(frozen=True)
class SimulatedAnswer:
    """What ``store_answers`` reads of an answer (as ``evaluation.annotator`` gives it)."""

    pair_id: str
    question: str
    chosen_position: str
    reply: str
    answer: str
    probability: float | None = None


def answers_for(truth: tuple[str, str], correct: bool) -> tuple[str, str]:
    """(rubric fit, main difference): the truth, or a misjudgement that flips the verdict."""
    if correct:
        return truth
    return ("rejected", "quality") if truth == SOUND else SOUND


def simulate_model_annotator(
    campaign: Campaign,
    truth: Mapping[str, tuple[str, str]],
    *,
    accuracy: float,
    seed: int,
    pairs: Sequence[Pair] | None = None,
) -> EvaluationRun:
    """A run over ``pairs``, by default every pair of the campaign's dataset (gold, practice
    and qualification pairs set apart); ``truth``: record id -> (rubric fit, main
    difference), sound pairs left out."""
    rng = random.Random(f"prb-simulated-model/{seed}")
    confidence_rng = random.Random(f"prb-simulated-model-confidence/{seed}")
    pairs = list(dataset_pairs(campaign) if pairs is None else pairs)
    answers = []
    for pair in pairs:
        correct = rng.random() < accuracy
        fit, differentiator = answers_for(truth.get(pair.external_id, SOUND), correct)
        confidence = confidence_rng.uniform(*(CONFIDENT if correct else UNSURE))
        for position in ("A", "B"):
            for question, answer, validating in (
                ("rubric_fit", fit, "chosen"),
                ("differentiator", differentiator, "preference"),
            ):
                probability = confidence if answer == validating else 1 - confidence
                answers.append(
                    SimulatedAnswer(
                        pair.external_id, question, position, answer, answer, probability
                    )
                )
    counts = {"replies": len(pairs) * 2, "parsed": len(pairs) * 2, "unparsed": 0}
    both = {"pairs_consistent": len(pairs), "pairs_parsed_in_both_orders": len(pairs)}
    settings = {
        "model": f"{SIMULATED_MODEL} (accuracy {accuracy:.0%})",
        "simulated": True,
        "accuracy": accuracy,
        "seed": seed,
        "pairs": "dataset" if len(pairs) == len(dataset_pairs(campaign)) else "some",
        "both_orders": True,
    }
    summary = {question: {**counts, **both} for question in ("rubric_fit", "differentiator")}
    return store_answers(campaign, pairs, answers, settings, summary)
