"""Manager pages: create a campaign through the form, read its dashboard (progress, invite
link, members), add annotators by username, and pause, resume and close it."""

from django.urls import reverse

from prb_annotate.models import Campaign, CampaignItem, Membership
from tests.support.pages import active_campaign, campaign_form, form_answers, reserve, submit_url


def test_it_creates_a_campaign_from_the_form(dataset, manager, login) -> None:
    client = login(manager)
    assert client.get(reverse("campaign_create")).status_code == 200
    response = client.post(reverse("campaign_create"), campaign_form(dataset))
    campaign = Campaign.objects.get(name="spring pilot")
    assert response["Location"] == reverse("campaign_detail", args=[campaign.pk])
    assert campaign.status == Campaign.Status.DRAFT
    assert (campaign.annotations_per_pair, campaign.reservation_minutes, campaign.seed) == (
        2,
        20,
        11,
    )
    assert campaign.quota_per_annotator == 4
    assert campaign.completion_url.endswith("cc=ABC")
    assert campaign.guidelines == "Read **carefully**."
    assert campaign.created_by == manager
    assert CampaignItem.objects.filter(campaign=campaign).count() == 5


def test_it_creates_gold_items_from_the_listed_ids(dataset, manager, login) -> None:
    client = login(manager)
    data = campaign_form(dataset, gold_pair_ids="p0001, p0002\np0003", gold_rate="0.2")
    assert client.post(reverse("campaign_create"), data).status_code == 302
    campaign = Campaign.objects.get()
    gold = CampaignItem.objects.filter(campaign=campaign, kind=CampaignItem.Kind.GOLD)
    assert sorted(gold.values_list("pair__external_id", flat=True)) == ["p0001", "p0002", "p0003"]
    assert campaign.gold_rate == 0.2


def test_it_reports_form_errors_and_creates_nothing(dataset, manager, login) -> None:
    client = login(manager)
    cases = [
        {"annotations_per_pair": "0"},
        {"sample": "999"},
        {"gold_rate": "1.5"},
        {"completion_url": "not a url"},
        {"name": ""},
        {"gold_rate": "0.1"},  # without gold pairs
        {"gold_pair_ids": "p0001 nope", "gold_rate": "0.1"},
    ]
    for changes in cases:
        response = client.post(reverse("campaign_create"), campaign_form(dataset, **changes))
        assert response.status_code == 200, changes
        assert 'class="errorlist' in response.content.decode(), changes
    assert not Campaign.objects.exists()
    active_campaign(dataset, name="taken")
    response = client.post(reverse("campaign_create"), campaign_form(dataset, name="taken"))
    assert "already exists" in response.content.decode()
    assert Campaign.objects.count() == 1


def test_it_shows_progress_and_the_invite_link_on_the_dashboard(
    dataset, manager, annotator, other_annotator, login
) -> None:
    campaign = active_campaign(dataset, annotator, other_annotator)
    alice = login(annotator)
    assignment = reserve(alice, campaign)
    alice.post(submit_url(assignment), form_answers(campaign))
    reserve(login(other_annotator), campaign)
    response = login(manager).get(reverse("campaign_detail", args=[campaign.pk]))
    assert response.status_code == 200
    html = response.content.decode()
    invite = f"http://testserver/join/{campaign.invite_token}/"
    assert invite in html
    assert "PROLIFIC_PID={{%PROLIFIC_PID%}}" in html
    for username in ("alice", "bob"):
        assert username in html
    progress = response.context["progress"]
    assert progress.items_total == dataset.pairs.count()
    assert (progress.items_in_progress, progress.items_complete) == (1, 0)
    for path in ["audit/", "export/", "evaluations/"]:
        assert f"/campaigns/{campaign.pk}/{path}" in html


def test_it_adds_an_annotator_by_username(dataset, manager, annotator, login) -> None:
    campaign = active_campaign(dataset)
    client = login(manager)
    url = reverse("campaign_add_member", args=[campaign.pk])
    response = client.post(url, {"username": "nobody"})
    assert response.status_code == 400
    assert "No user named" in response.content.decode()
    response = client.post(url, {"username": "alice"})
    assert response["Location"] == reverse("campaign_detail", args=[campaign.pk])
    membership = Membership.objects.get(campaign=campaign, user=annotator)
    assert membership.role == Membership.Role.ANNOTATOR
    assert login(annotator).get(reverse("annotate", args=[campaign.pk])).status_code == 200


def test_it_pauses_resumes_and_closes(dataset, manager, annotator, login) -> None:
    campaign = active_campaign(dataset, annotator)
    client = login(manager)
    url = reverse("campaign_status", args=[campaign.pk])
    steps = [
        ("paused", "paused"),
        ("paused", "paused"),  # not offered twice; nothing changes
        ("active", "active"),
        ("closed", "closed"),
        ("active", "closed"),  # closing is final
    ]
    for wanted, expected in steps:
        response = client.post(url, {"status": wanted, "confirmed": "yes"})
        assert response["Location"] == reverse("campaign_detail", args=[campaign.pk])
        campaign.refresh_from_db()
        assert campaign.status == expected, wanted
    html = client.get(reverse("campaign_detail", args=[campaign.pk])).content.decode()
    assert 'name="status"' not in html


def test_it_offers_the_buttons_of_the_current_status(dataset, manager, login) -> None:
    campaign = active_campaign(dataset)
    client = login(manager)
    url = reverse("campaign_detail", args=[campaign.pk])
    html = client.get(url).content.decode()
    assert 'value="paused"' in html
    assert 'value="closed"' in html
    assert 'value="active"' not in html
    client.post(reverse("campaign_status", args=[campaign.pk]), {"status": "paused"})
    html = client.get(url).content.decode()
    assert 'value="active"' in html
    assert 'value="paused"' not in html


def test_it_lists_campaigns_for_staff(dataset, manager, login) -> None:
    active_campaign(dataset, name="first")
    active_campaign(dataset, name="second")
    html = login(manager).get(reverse("campaign_list")).content.decode()
    assert "first" in html
    assert "second" in html
    assert reverse("campaign_create") in html


def test_it_links_home_to_the_work_and_the_dashboards(dataset, manager, annotator, login) -> None:
    campaign = active_campaign(dataset, annotator)
    assert reverse("annotate", args=[campaign.pk]) in login(annotator).get("/").content.decode()
    manager_home = login(manager).get("/").content.decode()
    assert reverse("campaign_detail", args=[campaign.pk]) in manager_home
