"""A judge's run on the campaign's leaderboard: the API gives what its summary.json says,
the benchmark's count of it (unparsed replies read as "A") beside ours."""

import json

import pytest
from django.urls import reverse

from prb_annotate.campaigns.evaluating import evaluate_campaign
from tests.support import tiny
from tests.views.test_compare_pages import leaderboard_campaign


@pytest.fixture(scope="module")
def babbling_judge(tmp_path_factory):
    """A causal LM that never names an answer."""
    tokenizer = tiny.make_tokenizer()
    folder = tmp_path_factory.mktemp("judge") / "babble"
    return tiny.save(tiny.scripted_judge(tokenizer, "bake"), tokenizer, folder)


def test_the_leaderboard_gives_a_judges_count_as_the_paper_counts_it(
    dataset, manager, login, babbling_judge
):
    campaign = leaderboard_campaign(dataset)
    run = evaluate_campaign(
        campaign,
        model=str(babbling_judge),
        subset="all",
        judge=True,
        paper_settings=True,
        max_new_tokens=2,
        device="cpu",
    )
    ours = run.summary["accuracy"]["overall"]
    paper = run.summary["accuracy_paper"]["overall"]
    assert (ours["unparsed"], ours["accuracy"]) == (12, None)
    assert (paper["unparsed"], paper["correct"] + paper["wrong"]) == (0, 12)
    response = login(manager).get(reverse("api_campaign_leaderboard", args=[campaign.pk]))
    assert response.status_code == 200
    runs = {item["run_id"]: item for item in json.loads(response.content)["runs"]}
    assert runs[run.pk]["accuracy_paper"] == run.summary["accuracy_paper"]
    assert {runs[pk]["accuracy_paper"] is None for pk in runs if pk != run.pk} == {True}
