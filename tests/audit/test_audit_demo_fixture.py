"""The demo dataset's deliberately flawed pairs come out of the audit excluded, for the reasons
fixtures/prb_demo_flaws.json expects, once annotated as careful people would; the others
come out validated."""

import json
import random
from pathlib import Path
from typing import Any

import pytest

from prb_annotate.audit import rule
from prb_annotate.audit.campaign_audit import campaign_audit, campaign_verdicts
from prb_annotate.datasets.importing import import_path
from prb_annotate.models import Dataset
from tests.support.audit import add_item, annotate, annotators, make_campaign

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
DEMO = FIXTURES / "prb_demo.jsonl"
FLAWS = FIXTURES / "prb_demo_flaws.json"

pytestmark = pytest.mark.skipif(
    not (DEMO.exists() and FLAWS.exists()),
    reason="fixtures/prb_demo.jsonl or fixtures/prb_demo_flaws.json is missing",
)


def sound_answer() -> dict[str, Any]:
    """What a careful annotator says about a valid pair: both good, preference, chosen fits."""
    criteria = rule.DEFAULT_CRITERIA
    return {
        "quality_chosen": dict.fromkeys(criteria, 5),
        "quality_rejected": dict.fromkeys(criteria, 5),
        "rubric_fit": "chosen",
        "differentiator": "preference",
        "confidence": "high",
    }


def with_noise(answer: dict[str, Any], rng: random.Random, *, dissent: bool) -> dict[str, Any]:
    """One annotator's version of a careful answer: good ratings wobble between 4 and 5, poor
    ones between 1 and 3 (never across the threshold of 4), and a dissenting annotator picks a
    different answer to one of the two choices."""

    def wobble(rating: int) -> int:
        return (
            rng.choice([4, 5]) if rating >= 4 else min(3, max(1, rating + rng.choice([-1, 0, 1])))
        )

    fit, differentiator = answer["rubric_fit"], answer["differentiator"]
    if dissent:
        if rng.random() < 0.5:
            fit = rng.choice([value for value in rule.RUBRIC_FIT if value != fit])
        else:
            differentiator = rng.choice(
                [value for value in rule.DIFFERENTIATOR if value != differentiator]
            )
    return {
        "chosen": {c: wobble(r) for c, r in answer["quality_chosen"].items()},
        "rejected": {c: wobble(r) for c, r in answer["quality_rejected"].items()},
        "fit": fit,
        "differentiator": differentiator,
        "confidence": answer.get("confidence", "high"),
        "flagged": bool(answer.get("flagged", False)),
        "position": rng.choice("AB"),
        "time_ms": rng.randint(20_000, 240_000),
    }


def test_it_excludes_the_flawed_demo_pairs_for_the_expected_reasons(db):
    """Import the demo file, annotate every pair with k = 3 (the flaws file's careful answer for
    flawed pairs, a sound answer for the others; the third annotator sometimes dissents), and
    audit: flawed pairs excluded with exactly their expected reasons, every other validated."""
    import_path(DEMO, "prb-demo")
    dataset = Dataset.objects.get(name="prb-demo")
    flaws = json.loads(FLAWS.read_text())
    pairs = list(dataset.pairs.order_by("external_id"))
    assert flaws
    assert set(flaws) <= {pair.external_id for pair in pairs}

    campaign = make_campaign(dataset, annotations_per_pair=3, seed=2)
    raters = annotators(3, prefix="careful")
    rng = random.Random(7)
    for pair in pairs:
        item = add_item(campaign, pair)
        careful = (
            flaws[pair.external_id]["careful_annotation"] if pair.external_id in flaws else None
        )
        for index, user in enumerate(raters):
            dissent = index == 2 and rng.random() < 0.4
            annotate(item, user, **with_noise(careful or sound_answer(), rng, dissent=dissent))

    verdicts = {verdict.external_id: verdict for verdict in campaign_verdicts(campaign).values()}
    assert set(verdicts) == {pair.external_id for pair in pairs}
    for external_id, verdict in verdicts.items():
        if external_id in flaws:
            assert verdict.verdict == "excluded", external_id
            expected = set(flaws[external_id]["expected_reasons"])
            assert set(verdict.reasons) == expected, external_id
        else:
            assert verdict.verdict == "validated", (external_id, verdict.reasons)

    report = campaign_audit(campaign, resamples=100)
    assert report["counts"]["excluded"] == len(flaws)
    assert report["counts"]["validated"] == len(pairs) - len(flaws)
