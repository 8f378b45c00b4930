"""What the manager's pages offer is what the app then does: a closed campaign's split votes are
sent to the adjudication queue, not to annotators nobody asks; leaving answers out of an
imported campaign asks for more imported answers, not a reopening it refuses; a manager who is
not staff is linked to no page that refuses them; the dashboard does not promise an extension
the audit page cannot make; a background recompute keeps the page's resamples."""

import re
from typing import Any

from django.contrib.auth.models import User
from django.test import Client

from prb_annotate.audit.campaign_audit import campaign_verdicts
from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.models import Campaign, Dataset, Job, Membership
from tests.support.audit import add_item, annotate_all, annotators, make_campaign
from tests.support.sampling import TARGETS, planned_dataset

AGREE: dict[str, Any] = {}


def messages_of(response: Any) -> list[str]:
    return [str(message) for message in response.context["messages"]]


def test_a_closed_campaigns_split_votes_go_to_adjudication_not_to_annotators(
    dataset: Dataset, manager: User, login
) -> None:
    """The button once raised the pair's slots on a campaign nobody is handed items of: the
    split vote turned into "too few annotations", off the adjudication queue's front."""
    campaign = make_campaign(dataset, seed=11, annotations_per_pair=3)
    raters = annotators(4)
    pairs = list(dataset.pairs.order_by("external_id"))
    split = add_item(campaign, pairs[1], extra_annotations=1)
    annotate_all(split, raters, [AGREE, AGREE, {"fit": "rejected"}, {"fit": "rejected"}])
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.CLOSED)
    client = login(manager)
    page = client.get(f"/campaigns/{campaign.pk}/audit/").content.decode()
    assert 'id="split-votes-closed"' in page
    assert "Ask one more annotator for each" not in page
    sent = client.post(f"/campaigns/{campaign.pk}/audit/request-extra/", follow=True)
    assert any("decide the split votes in the adjudication queue" in m for m in messages_of(sent))
    split.refresh_from_db()
    assert split.extra_annotations == 1
    assert campaign_verdicts(campaign)[split.pair_id].reasons == ("undecided_split_vote",)


def test_leaving_answers_out_of_an_imported_campaign_asks_for_more_imported_answers(
    dataset: Dataset, manager: User, login
) -> None:
    campaign = make_campaign(
        dataset, seed=11, annotations_per_pair=3, external=True, status=Campaign.Status.CLOSED
    )
    raters = annotators(3)
    for rater in raters:
        Membership.objects.get_or_create(campaign=campaign, user=rater)
    for pair in list(dataset.pairs.order_by("external_id"))[:3]:
        annotate_all(add_item(campaign, pair), raters, [AGREE, AGREE, AGREE])
    client = login(manager)
    excluded = client.post(
        f"/campaigns/{campaign.pk}/exclusions/",
        {"annotator": raters[0].pk, "reason": "copied"},
        follow=True,
    )
    said = " ".join(messages_of(excluded))
    assert "3 pairs now lack answers" in said
    assert "import more answers for them" in said
    assert "reopen" not in said


def test_a_manager_who_is_not_staff_is_linked_to_no_page_that_refuses_them(
    dataset: Dataset, outsider: User, login
) -> None:
    campaign = make_campaign(dataset, seed=11, annotations_per_pair=3)
    item = add_item(campaign, dataset.pairs.order_by("external_id")[0])
    annotate_all(item, annotators(3), [AGREE, AGREE, AGREE])
    Membership.objects.create(campaign=campaign, user=outsider, role=Membership.Role.MANAGER)
    client = login(outsider)
    refused = []
    for url in (f"/campaigns/{campaign.pk}/", f"/campaigns/{campaign.pk}/pairs/{item.pair_id}/"):
        page = client.get(url)
        assert page.status_code == 200
        for link in sorted(set(re.findall(r'href="(/[^"#?]*)', page.content.decode()))):
            if not link.startswith("/static") and "logout" not in link:
                status = client.get(link).status_code
                if status not in (200, 302):
                    refused.append((url, link, status))
    assert refused == []
    staff = Client()
    staff.force_login(User.objects.create(username="staffer", is_staff=True))
    page = staff.get(f"/campaigns/{campaign.pk}/").content.decode()
    assert f'href="/datasets/{dataset.pk}/"' in page


def test_the_dashboard_promises_no_extension_of_a_closed_campaigns_sample(
    manager: User, login
) -> None:
    campaign = create_campaign(planned_dataset(), "planned", k=1, sample_targets=TARGETS, seed=5)
    client = login(manager)
    assert "extending the sample" in client.get(f"/campaigns/{campaign.pk}/").content.decode()
    Campaign.objects.filter(pk=campaign.pk).update(status=Campaign.Status.CLOSED)
    page = client.get(f"/campaigns/{campaign.pk}/").content.decode()
    assert "extending the sample" not in page
    assert "closed campaign&#x27;s sample is not extended" in page.replace("'", "&#x27;")


def test_a_background_recompute_keeps_the_pages_resamples(
    dataset: Dataset, manager: User, login, settings: Any
) -> None:
    """It once always asked for 1,000 resamples, so a page read at 200 found no report."""
    settings.PRB_BACKGROUND_AUDIT_PAIRS = 1
    campaign = make_campaign(dataset, seed=11, annotations_per_pair=3)
    for pair in dataset.pairs.order_by("external_id")[:2]:
        add_item(campaign, pair)
    client = login(manager)
    page = client.get(f"/campaigns/{campaign.pk}/audit/?resamples=200")
    assert page.status_code == 200
    client.post(f"/campaigns/{campaign.pk}/audit/recompute/?resamples=200")
    (job,) = Job.objects.filter(campaign=campaign, kind="audit")
    assert job.options["resamples"] == 200
