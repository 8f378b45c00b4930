"""What the home page and the API's my-progress say of a member the qualification keeps from
the pairs: one who has it still to answer is sent to it (not told pairs are open, nor that
others hold them), one who failed it is told no pairs will come (finished), and a manager
letting them in brings the pairs back."""

from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from prb_annotate.campaigns.qualification.setup import admit
from tests.support.qualification import fail_twice, screening_campaign

NOT_PASSED = "You did not pass its qualification"
COMES_FIRST = "Its practice and qualification pairs come first"
COUNT = "available to you"


def progress(client: Client, campaign_id: int) -> dict[str, object]:
    answer = client.get(reverse("api_my_progress", args=[campaign_id]))
    assert answer.status_code == 200
    return {key: answer.json()[key] for key in ("held", "finished", "waiting", "available")}


def test_a_member_not_yet_qualified_is_sent_to_the_qualification(
    dataset, annotator: User, login
) -> None:
    campaign = screening_campaign(dataset, annotator)
    client = login(annotator)
    home = client.get(reverse("home")).content.decode()
    assert COMES_FIRST in home
    assert COUNT not in home
    assert progress(client, campaign.pk) == {
        "held": "qualification",
        "finished": False,
        "waiting": False,
        "available": 0,
    }


def test_a_member_who_failed_is_told_no_pairs_will_come_until_let_in(
    dataset, annotator: User, manager: User, login
) -> None:
    campaign = screening_campaign(dataset, annotator)
    fail_twice(campaign, annotator)
    client = login(annotator)
    home = client.get(reverse("home")).content.decode()
    assert NOT_PASSED in home
    assert COUNT not in home
    assert progress(client, campaign.pk) == {
        "held": "screened-out",
        "finished": True,
        "waiting": False,
        "available": 0,
    }

    admit(campaign, annotator, "a second look", by=manager)
    home = client.get(reverse("home")).content.decode()
    assert NOT_PASSED not in home
    assert COUNT in home
    after = progress(client, campaign.pk)
    # The 12 pairs less the 2 practice and 3 qualification ones.
    assert after == {"held": "", "finished": False, "waiting": False, "available": 7}
