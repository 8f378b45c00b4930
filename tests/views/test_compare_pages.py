"""The evaluations page is the campaign's leaderboard, and the API gives the same JSON, computed
in the web process from stored pair scores (no torch), on SQLite and PostgreSQL."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import reverse

from evaluation.compare_formats import as_json
from evaluation.metrics import ACCURACY_INTERVAL_NAME
from evaluation.paired import TANGO_CC
from evaluation.significance import TWO_PROPORTIONS_NAMES
from prb_annotate.campaigns.evaluating import evaluate_campaign
from prb_annotate.campaigns.leaderboard import campaign_leaderboard
from prb_annotate.models import Campaign, EvaluationRun
from tests.support.audit import add_item, annotate_all, annotators, make_campaign

ROOT = Path(__file__).resolve().parents[2]
VALID = {"fit": "chosen", "differentiator": "preference"}
QUALITY_GAP = {"fit": "chosen", "differentiator": "quality", "rejected": 2}
BASELINES = ("builtin:length", "builtin:profile-overlap", "builtin:random")


def leaderboard_campaign(dataset) -> Campaign:
    """Twelve pairs: p0000-p0007 validated, p0008-p0011 excluded (a quality gap).

    Chosen answers echo the question's words (plan, week) and are shorter than the rejected
    ones, which share no content word with the user: profile overlap is right on p0000-p0008
    and ties on p0009-p0011 ("Rest." against the same long answer: 0 words each), length is
    wrong on every pair."""
    campaign = make_campaign(dataset, seed=5)
    raters = annotators(3)
    for index, pair in enumerate(dataset.pairs.order_by("external_id")):
        pair.chosen = "Plan your week around runs." if index < 9 else "Rest."
        pair.rejected = f"A long, detailed answer with many sections, number {index}."
        pair.save()
        answers = VALID if index < 8 else QUALITY_GAP
        annotate_all(add_item(campaign, pair), raters, [answers] * 3)
    for model in BASELINES:
        evaluate_campaign(campaign, model=model, subset="all", resamples=0, self_check=4)
    return campaign


@pytest.fixture
def campaign(dataset) -> Campaign:
    return leaderboard_campaign(dataset)


def page(client, campaign: Campaign, **query) -> str:
    response = client.get(reverse("campaign_evaluations", args=[campaign.pk]), query)
    assert response.status_code == 200
    return response.content.decode()


def test_it_shows_the_leaderboard_with_subset_tabs_and_groups(campaign, manager, login):
    html = page(login(manager), campaign)
    for subset in ("all", "validated", "excluded", "category:Lifestyle"):
        assert f'data-subset="{subset}"' in html
    assert 'data-subset="all" aria-current="page"' in html
    rows = html.split('class="leaderboard-row')[1:]
    assert [row.split('data-model="')[1].split('"')[0] for row in rows] == [
        "builtin:profile-overlap",
        "builtin:random",
        "builtin:length",
    ]
    # Profile overlap is right on nine pairs length gets wrong: p = 2 / 2^9, Holm-adjusted
    # over the three pairs of models three times that at most: length is not in #1's group.
    length = rows[2]
    assert 'data-group="1"' not in length
    assert '<td class="num lb-p">0.004</td>' in length
    assert "best of this subset" in rows[0]
    # The groups are worded as tested, and #2's power line says what its pairs can show.
    assert "Holm-adjusted over all 3 pairs of the 3 models" in html.split('id="grouping-words"')[1]
    assert "discordant pair(s) of" in html.split('id="power-line"')[1].split("</p>")[0]
    assert 'id="validated-vs-excluded"' in html
    # Each column names its method from the code that computes the figure.
    assert f"CI ({TANGO_CC.name})<" in html
    assert f"CI ({ACCURACY_INTERVAL_NAME})<" in html
    assert f"CI ({TWO_PROPORTIONS_NAMES['interval']})<" in html
    assert f'<th class="num">{TWO_PROPORTIONS_NAMES["test"]} p</th>' in html
    assert 'id="kendall-tau"' in html
    assert html.count('class="card run"') == 3  # each run's own card, below the leaderboard
    assert html.count('<details class="run-card">') == 3
    assert "no decision flips" in html
    for run in EvaluationRun.objects.all():
        assert f'<code class="hash">{run.summary["card"]["code_sha256"]}</code>' in html


def test_it_switches_subset_and_tie_policy_by_links(campaign, manager, login):
    client = login(manager)
    html = page(client, campaign, subset="excluded", policy="as-wrong")
    assert 'data-subset="excluded" aria-current="page"' in html
    assert 'id="subset-title" data-subset="excluded"' in html
    assert "ties counted as wrong" in html
    # On the four excluded pairs profile overlap ties three times: as wrong, it has 1/4.
    overlap = html.split('data-model="builtin:profile-overlap"')[1].split("</tr>")[0]
    assert "25.0%" in overlap
    # The tab links keep the policy.
    assert "subset=validated&amp;policy=as-wrong" in html


def test_it_ranks_only_the_runs_ticked(campaign, manager, login):
    chosen = list(
        EvaluationRun.objects.filter(model_name__in=BASELINES[:2]).values_list("pk", flat=True)
    )
    html = page(login(manager), campaign, run=chosen)
    assert html.count('class="leaderboard-row') == 2
    assert (
        'data-model="builtin:random"'
        not in html.split('id="leaderboard-table"')[1].split("</table>")[0]
    )


def test_it_compares_runs_over_other_pairs_on_the_pairs_they_share(campaign, manager, login):
    excluded_only = evaluate_campaign(campaign, model="builtin:length", subset="excluded")
    every = list(EvaluationRun.objects.values_list("pk", flat=True))
    html = page(login(manager), campaign, run=every)
    assert "compared on the 4 pairs every run scored" in html
    # The second run of a model is named apart, in words that do not read as a rank.
    assert excluded_only.name == "builtin:length (run 2)"
    assert 'data-model="builtin:length (run 2)"' in html


def test_it_serves_the_same_json_from_the_api(campaign, manager, login):
    client = login(manager)
    response = client.get(reverse("api_campaign_leaderboard", args=[campaign.pk]))
    assert response.status_code == 200

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in the JSON")

    data = json.loads(response.content, parse_constant=refuse)
    assert data == json.loads(as_json(campaign_leaderboard(campaign)))
    assert data["subsets"][0]["best"] == "builtin:profile-overlap"
    assert {run["card"]["kind"] for run in data["runs"]} == {"built-in baseline"}
    assert all(run["self_check"]["flips"] == 0 for run in data["runs"])
    # Ties left out, profile overlap decided one excluded pair (p0008; it ties on the other
    # three): its accuracy there rests on that single pair.
    excluded = next(s for s in data["subsets"] if s["key"] == "excluded")
    overlap = next(e for e in excluded["entries"] if e["model"] == "builtin:profile-overlap")
    assert (overlap["accuracy"]["successes"], overlap["accuracy"]["n"]) == (1, 1)
    page_html = page(client, campaign)
    assert reverse("api_campaign_leaderboard", args=[campaign.pk]) in page_html


def test_it_answers_bad_queries_with_field_errors(campaign, manager, login, outsider):
    client = login(manager)
    url = reverse("api_campaign_leaderboard", args=[campaign.pk])
    for query, field in (
        ({"policy": "sometimes"}, "policy"),
        ({"runs": "1,x"}, "runs"),
        ({"runs": "999999"}, "runs"),
    ):
        response = client.get(url, query)
        assert response.status_code == 400, query
        assert field in response.json()["errors"], query
    # Nothing in the leaderboard is resampled (Tango's interval): it names no resamples or seed.
    settings = client.get(url).json()["settings"]
    assert "resamples" not in settings
    assert "seed" not in settings
    assert login(outsider).get(url).status_code == 404
    other = make_campaign(campaign.dataset, name="other")
    foreign = evaluate_campaign_quietly(other)
    response = client.get(url, {"runs": str(foreign.pk)})
    assert response.status_code == 400
    assert "not a reward-model run of this campaign" in response.json()["errors"]["runs"][0]


def evaluate_campaign_quietly(campaign: Campaign) -> EvaluationRun:
    for pair in campaign.dataset.pairs.all()[:2]:
        add_item(campaign, pair)
    return evaluate_campaign(campaign, model="builtin:length", resamples=0)


def test_it_shows_an_empty_board_and_hides_it_from_annotators(dataset, manager, annotator, login):
    campaign = make_campaign(dataset)
    html = page(login(manager), campaign)
    assert "no reward model has been scored yet" in html
    url = reverse("campaign_evaluations", args=[campaign.pk])
    assert login(annotator).get(url).status_code == 404
    api = login(manager).get(reverse("api_campaign_leaderboard", args=[campaign.pk]))
    assert api.status_code == 200
    assert api.json()["models"] == []


def test_it_computes_the_leaderboard_without_torch():
    """The code the page and the API run (the view and API modules, the leaderboard service and
    evaluation's statistics and renderers) loads neither torch nor transformers."""
    probe = (
        "import os, sys, django\n"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'prb_annotate.settings')\n"
        "django.setup()\n"
        "import prb_annotate.urls, prb_annotate.views.evaluations, prb_annotate.api.leaderboard\n"
        "import prb_annotate.campaigns.leaderboard\n"
        "from evaluation.compare import PairLabel, RunOutcomes, Settings, build_leaderboard\n"
        "from evaluation.compare_formats import as_json\n"
        "from evaluation.runs import subset_of\n"
        "runs = [RunOutcomes('a', {'x': 'correct', 'y': 'wrong'}),\n"
        "        RunOutcomes('b', {'x': 'tie', 'y': 'correct'})]\n"
        "labels = {'x': PairLabel('Art', 'validated'),\n"
        "          'y': PairLabel('Art', subset_of('excluded'))}\n"
        "as_json(build_leaderboard(runs, labels, Settings('left-out')))\n"
        "print('torch' in sys.modules, 'transformers' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "False"], result.stderr
