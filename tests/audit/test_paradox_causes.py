"""Alpha and AC1/AC2 apart: the prevalence paradox is named only where one answer dominates;
on a rating without a dominant answer the sentence names AC2's ordinal weights instead, and on
a choice nothing is said."""

import random

import pandas as pd
import pytest

from prb_annotate.audit.questions import (
    agreement_by_question,
    dominant_share,
    prevalence_paradox,
)
from prb_annotate.audit.rule import Thresholds

APART_RATINGS = [{"key": "alpha_ordinal", "value": 0.22}, {"key": "ac2_ordinal", "value": 0.93}]
APART_CHOICES = [{"key": "alpha_nominal", "value": 0.21}, {"key": "ac1", "value": 0.86}]


def test_an_answer_dominates_halfway_from_the_uniform_share_to_all() -> None:
    assert dominant_share(2) == 0.75
    assert dominant_share(3) == pytest.approx(2 / 3)
    assert dominant_share(5) == 0.6
    # At that share, the rest even, alpha's chance agreement is a quarter above Gwet's.
    for values in (2, 3, 4, 5):
        top = dominant_share(values)
        rest = [(1 - top) / (values - 1)] * (values - 1)
        shares = [top, *rest]
        alpha_chance = sum(share**2 for share in shares)
        gwet_chance = sum(share * (1 - share) for share in shares) / (values - 1)
        assert alpha_chance - gwet_chance == pytest.approx(0.25)


def test_a_rating_half_on_one_answer_is_not_called_the_prevalence_paradox() -> None:
    """The sentence the audit printed for a rating whose most common answer held 50 %."""
    sentence = prevalence_paradox(APART_RATINGS, "ordinal", 0.5, values=5)
    assert sentence is not None
    assert "prevalence" not in sentence
    assert "one answer makes up" not in sentence
    assert sentence.startswith(
        "Alpha (0.22) and AC2 (0.93) disagree although no answer dominates (the most common "
        "makes up 50% of the ratings): AC2's ordinal weights count a near miss"
    )
    assert sentence.count(". ") == 0  # one sentence


def test_a_rating_with_a_dominant_answer_is_the_prevalence_paradox() -> None:
    sentence = prevalence_paradox(APART_RATINGS, "ordinal", 0.8, values=5)
    assert sentence is not None
    assert "one answer makes up 80% of the ratings" in sentence
    assert sentence.endswith("(the prevalence paradox).")


def test_a_choice_without_a_dominant_answer_gets_no_sentence() -> None:
    assert prevalence_paradox(APART_CHOICES, "nominal", 0.5, values=3) is None
    assert prevalence_paradox(APART_CHOICES, "nominal", 0.6, values=2) is None
    dominated = prevalence_paradox(APART_CHOICES, "nominal", 0.7, values=3)
    assert dominated is not None
    assert dominated.endswith("(the prevalence paradox).")


def test_the_audit_names_the_cause_its_answers_show() -> None:
    """Sixty pairs, three raters: "chosen" on 93 % of the answers (dominant), the chosen
    answer's correctness a 4 or a 5 at random (no answer dominates)."""
    rng = random.Random(3)
    rows = [
        {
            "annotator": rater,
            "pair_id": pair,
            "rubric_fit": "chosen" if rng.random() < 0.93 else "rejected",
            "differentiator": "preference",
            "quality_chosen_correctness": rng.choice([4, 5]),
            "quality_rejected_correctness": 5,
        }
        for pair in range(60)
        for rater in ("a", "b", "c")
    ]
    found = {
        question["question"]: question
        for question in agreement_by_question(
            pd.DataFrame(rows), Thresholds(quality_criteria=("correctness",)), resamples=0
        )
    }
    fit = found["rubric_fit"]
    assert fit["prevalence"] > dominant_share(3)
    assert fit["paradox"].endswith("(the prevalence paradox).")
    rating = found["quality_chosen_correctness"]
    by_key = {c["key"]: c["value"] for c in rating["coefficients"]}
    assert by_key["ac2_ordinal"] - by_key["alpha_ordinal"] >= 0.3
    assert rating["prevalence"] < dominant_share(5)
    assert "prevalence" not in rating["paradox"]
    assert "AC2's ordinal weights count a near miss" in rating["paradox"]
