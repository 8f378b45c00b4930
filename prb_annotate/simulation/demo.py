"""The demo's finished campaign: the demo pairs answered by simulated annotators, one of each
behaviour (two careful ones), so that the audit, the quality-control panel, the exports and
the evaluation page have something true to show as soon as the demo starts. Like the demo's
active campaign, it has two practice pairs and a three-pair qualification
(``fixtures/prb_demo_qualification.json``); the annotators are study participants (their
usernames are their Prolific ids), and the careless one fails the qualification twice and is
screened out, so the Prolific approval and bonus lists have every kind of row.

What a careful annotator answers is known: ``fixtures/prb_demo_flaws.json`` gives the answer
for each deliberately flawed pair, and every other pair is sound. Everything that appears on
the pages says "simulated": the campaign's name and guidelines and the annotators' usernames.
"""

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from prb_annotate.audit.campaign_audit import request_extra_annotations
from prb_annotate.audit.sampling import PlanTargets
from prb_annotate.campaigns.annotating import Answers
from prb_annotate.campaigns.lifecycle import add_member, create_campaign, set_status
from prb_annotate.models import Campaign, Dataset
from prb_annotate.simulation.behaviours import DESCRIPTIONS, Behaviour
from prb_annotate.simulation.driver import SimulatedAnnotator, run_campaign
from prb_annotate.simulation.model_annotator import simulate_model_annotator

SIMULATED_CAMPAIGN = "PRB demo, simulated annotators"
SEED = 2026
# Sound pairs used as gold items. They check the question the guidelines stress, what mainly
# separates the answers, so that gold catches the annotator who misreads it; the better-fit
# question is left to the agreement and position-bias figures.
GOLD_PAIRS = ("art-02", "life-03", "soc-05", "soc-10")
GOLD_ANSWERS = {"differentiator": "preference"}
GOLD_RATE = 0.2
MIN_GOLD_ACCURACY = 0.75
# (username, behaviour, pace, most answers): careful annotators answer three pairs while the
# others answer two; the one who fails gold items gives up early, as such people do. The one
# who favours the left answer keeps the careful pace: at two a round they answered about 16
# pairs, and whether the position mark found them then hung on where the queue's
# counterbalancing (seeded by row ids) happened to put the chosen answers (in 5 of 25 fresh id
# ranges it did not); at three, about 24 pairs, it found them in 25 of 25.
ROSTER: tuple[tuple[str, Behaviour, int, int | None], ...] = (
    ("simulated-careful-1", Behaviour.CAREFUL, 3, None),
    ("simulated-careful-2", Behaviour.CAREFUL, 3, None),
    ("simulated-noisy", Behaviour.NOISY, 2, None),
    ("simulated-favours-left", Behaviour.FAVOURS_LEFT, 3, None),
    ("simulated-too-fast", Behaviour.TOO_FAST, 2, None),
    ("simulated-fails-gold", Behaviour.FAILS_GOLD, 1, 8),
    ("simulated-careless", Behaviour.CARELESS, 1, None),
)
# Prolific bonuses: 0.10 per pair beyond 10, and 0.50 for gold accuracy of 75 % or more.
BONUS_RULE = {
    "per_item": "0.10",
    "items_beyond": 10,
    "gold_amount": "0.50",
    "gold_min_accuracy": 0.75,
}
# The simulated clock: the campaign "ran" on this day.
START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
# Rounds of "ask for one more annotator on split votes, let them answer".
EXTRA_ROUNDS = 2


def guidelines() -> str:
    lines = [
        "**Simulated campaign.** Nobody answered these pairs: simulated annotators did, through",
        "the same queue and submit functions as people (`prb_annotate/simulation/`). Each one",
        "has a known behaviour, so the audit and the quality-control panel can be checked",
        "against it:",
        "",
    ]
    lines += [f"- `{name}`: {DESCRIPTIONS[behaviour]}" for name, behaviour, _, _ in ROSTER]
    return "\n".join(lines) + "\n"


def expected_answers(flaws_path: Path) -> dict[str, Answers]:
    """A careful annotator's answer to each flawed pair (dataset orientation)."""
    flaws = json.loads(flaws_path.read_text(encoding="utf-8"))
    answers = {}
    for external_id, flaw in flaws.items():
        careful = flaw["careful_annotation"]
        answers[external_id] = Answers(
            quality_chosen=dict(careful["quality_chosen"]),
            quality_rejected=dict(careful["quality_rejected"]),
            rubric_fit=careful["rubric_fit"],
            differentiator=careful["differentiator"],
            confidence=careful.get("confidence", "high"),
            flagged=bool(careful.get("flagged", False)),
        )
    return answers


def qualification_settings(path: Path) -> dict[str, Any]:
    """The demo's practice pairs, qualification pairs and pass rule, as ``create_campaign``
    takes them."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return {
        "practice_pairs": data["practice"],
        "qualification_pairs": data["qualification"],
        "qualification_rule": data["rule"],
    }


def simulated_annotators() -> list[SimulatedAnnotator]:
    annotators = []
    for username, behaviour, pace, limit in ROSTER:
        user, created = User.objects.get_or_create(
            username=username,
            defaults={"first_name": "Simulated", "last_name": f"annotator ({behaviour})"},
        )
        if created:
            user.set_unusable_password()  # nobody logs in as a simulated annotator
            user.save(update_fields=["password"])
        annotators.append(SimulatedAnnotator(user, behaviour, pace, limit))
    return annotators


@transaction.atomic
def create_simulated_campaign(
    dataset: Dataset,
    manager: User,
    flaws_path: Path,
    *,
    seed: int = SEED,
    qualification_path: Path | None = None,
) -> Campaign:
    """Create the campaign, let the simulated annotators finish it, and close it."""
    qualification = qualification_settings(qualification_path or _qualification_beside(flaws_path))
    campaign = create_campaign(
        dataset,
        SIMULATED_CAMPAIGN,
        k=3,
        seed=seed,
        gold_pair_ids=dict.fromkeys(GOLD_PAIRS, GOLD_ANSWERS),
        gold_rate=GOLD_RATE,
        min_gold_accuracy=MIN_GOLD_ACCURACY,
        created_by=manager,
        guidelines=guidelines(),
        bonus_rule=BONUS_RULE,
        activate=True,
        **qualification,
    )
    add_member(campaign, manager, role="manager")
    annotators = simulated_annotators()
    _answer(campaign, annotators, expected_answers(flaws_path), seed)
    return set_status(campaign, Campaign.Status.CLOSED)


def _answer(
    campaign: Campaign,
    annotators: list[SimulatedAnnotator],
    expected: dict[str, Answers],
    seed: int,
) -> None:
    """The annotators join and answer, with a round a day for the extra answers split votes
    ask for, up to EXTRA_ROUNDS."""
    for annotator in annotators:
        add_member(campaign, annotator.user, participant_id=annotator.user.username)
    run_campaign(campaign, annotators, expected, seed=seed, start=START)
    for day in range(1, EXTRA_ROUNDS + 1):
        if not request_extra_annotations(campaign):
            break
        run_campaign(campaign, annotators, expected, seed=seed, start=START + timedelta(days=day))


PLANNED_CAMPAIGN = "PRB demo, planned sample and a simulated model annotator"
# ±20 points per category at an expected share of 70 %: 10 of each category's 14 pairs, the
# size at which the reported interval (corrected Wilson under the FPC) reaches the target.
PLANNED_TARGETS = PlanTargets(category_half_width=0.2, expected_share=0.7)
# The simulated model annotator answers both questions right on this share of the pairs.
MODEL_ACCURACY = 0.85


def planned_guidelines() -> str:
    return (
        "**Simulated campaign.** A planned sample of the demo pairs, answered by the two "
        "careful simulated annotators and one noisy one, and a **simulated model annotator** "
        f"that answers both model questions right on {MODEL_ACCURACY:.0%} of the pairs "
        "over the whole dataset, so that the audit shows the prediction-powered estimate "
        "beside the humans-only one ([how it works](/guides/ppi/)).\n"
    )


@transaction.atomic
def create_planned_campaign(
    dataset: Dataset, manager: User, flaws_path: Path, *, seed: int = SEED
) -> Campaign:
    """A planned sample answered by simulated annotators, a simulated model annotator over
    the whole dataset, closed."""
    campaign = create_campaign(
        dataset,
        PLANNED_CAMPAIGN,
        k=3,
        seed=seed,
        sample_targets=PLANNED_TARGETS,
        created_by=manager,
        guidelines=planned_guidelines(),
        activate=True,
    )
    add_member(campaign, manager, role="manager")
    annotators = [
        annotator
        for annotator in simulated_annotators()
        if annotator.behaviour in (Behaviour.CAREFUL, Behaviour.NOISY)
    ]
    expected = expected_answers(flaws_path)
    _answer(campaign, annotators, expected, seed)
    truth = {pair: (answer.rubric_fit, answer.differentiator) for pair, answer in expected.items()}
    simulate_model_annotator(campaign, truth, accuracy=MODEL_ACCURACY, seed=seed)
    return set_status(campaign, Campaign.Status.CLOSED)


def _qualification_beside(flaws_path: Path) -> Path:
    return flaws_path.with_name("prb_demo_qualification.json")
