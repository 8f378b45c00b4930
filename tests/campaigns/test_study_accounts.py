"""Annotator accounts from the campaign page, the shell and the API: one or many names
(pasted, or a CSV), accounts made for the unknown ones, each with a one-time "set your
password" link shown once and mailed only when email is configured; a list with a bad line
writes nothing; a manager without staff rights reaches only their own campaigns."""

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client, override_settings
from django.urls import reverse

from prb_annotate.campaigns.accounts import (
    AnnotatorEntry,
    AnnotatorListError,
    add_annotators,
    parse_annotators,
)
from prb_annotate.campaigns.lifecycle import add_member
from prb_annotate.models import Campaign, Dataset, Membership
from tests.conftest import PASSWORD, make_user
from tests.support.pages import active_campaign

NEW_PASSWORD = "a-long-new-password-42"


def test_it_reads_pasted_names_with_emails_and_csv_columns() -> None:
    """Several names per line, an email after its name, comments and blank lines skipped; a
    CSV read by its header, whatever the column order."""
    pasted = "alice alice@example.org, bob\n\n# later\ncarol;dave\tdave@example.org\n"
    assert parse_annotators(pasted) == [
        AnnotatorEntry("alice", "alice@example.org", 1),
        AnnotatorEntry("bob", "", 1),
        AnnotatorEntry("carol", "", 4),
        AnnotatorEntry("dave", "dave@example.org", 4),
    ]
    table = "\ufeffemail,username\nerin@example.org,erin\n,frank\n"
    assert parse_annotators(table) == [
        AnnotatorEntry("erin", "erin@example.org", 2),
        AnnotatorEntry("frank", "", 3),
    ]


def test_it_names_every_bad_line_of_a_list() -> None:
    with pytest.raises(AnnotatorListError) as failed:
        parse_annotators("alice\nbad/name\nALICE\n" + "x" * 151)
    assert (
        failed.value.problems[0]
        == "line 2: username 'bad/name' may hold only letters, digits and @ . + - _"
    )
    assert failed.value.problems[1] == "line 3: ALICE is listed already (line 1)"
    assert failed.value.problems[2].startswith("line 4: username 'xxxxx")
    with pytest.raises(AnnotatorListError) as no_email:
        parse_annotators("username,email\nbob,not-an-address\n")
    assert no_email.value.problems == ["line 2: 'not-an-address' is not an email address"]
    with pytest.raises(AnnotatorListError, match="no username given"):
        parse_annotators(" \n# nobody\n")


@pytest.fixture
def campaign(dataset: Dataset) -> Campaign:
    return active_campaign(dataset)


def test_it_makes_the_missing_accounts_each_with_a_link_that_works_once(
    campaign: Campaign, annotator: User
) -> None:
    """alice exists and is only added; dave is made without a usable password, sets one
    through his link (and is logged in), and the same link refuses a second use."""
    added = add_annotators(
        campaign, parse_annotators("alice dave dave@example.org"), site="http://testserver"
    )
    assert [(row.username, row.created) for row in added] == [("alice", False), ("dave", True)]
    assert added[0].set_password_url == ""
    dave = User.objects.get(username="dave")
    assert dave.email == "dave@example.org"
    assert not dave.has_usable_password()
    assert set(
        Membership.objects.filter(campaign=campaign).values_list("user__username", flat=True)
    ) == {"alice", "dave"}

    link = added[1].set_password_url
    assert link.startswith("http://testserver/set-password/")
    client = Client()
    form_page = client.get(link, follow=True)
    assert form_page.status_code == 200
    assert "Your username is <strong>dave</strong>" in form_page.content.decode()
    done = client.post(
        form_page.redirect_chain[-1][0],
        {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
        follow=True,
    )
    assert "Your password is set" in done.content.decode()
    assert client.get(reverse("annotate", args=[campaign.pk])).status_code == 200
    dave.refresh_from_db()
    assert dave.check_password(NEW_PASSWORD)

    again = Client().get(link, follow=True)
    assert "This link no longer works" in again.content.decode()
    assert Client().login(username="dave", password=NEW_PASSWORD)


def test_it_mails_links_only_when_email_is_configured(campaign: Campaign) -> None:
    add_annotators(campaign, parse_annotators("erin erin@example.org"), site="http://x")
    assert mail.outbox == []
    with override_settings(PRB_SEND_EMAIL=True):
        added = add_annotators(
            campaign, parse_annotators("frank frank@example.org gina"), site="http://x"
        )
    assert [row.emailed for row in added] == [True, False]  # gina has no address
    (message,) = mail.outbox
    assert message.to == ["frank@example.org"]
    assert added[0].set_password_url in message.body
    assert campaign.name in message.subject


def test_it_refuses_a_whole_list_with_a_reserved_or_scoped_name(
    campaign: Campaign, dataset: Dataset
) -> None:
    other = active_campaign(dataset, name="other")
    participant = Client()
    url = reverse("join", args=[other.invite_token])
    participant.post(url, {"PROLIFIC_PID": "P1", "STUDY_ID": "s", "SESSION_ID": "x"})
    scoped = Membership.objects.get(campaign=other).user.username
    with pytest.raises(AnnotatorListError) as failed:
        add_annotators(
            campaign, parse_annotators(f"henry\nprolific-9-zz\n{scoped}"), site="http://x"
        )
    assert [problem.split(":")[0] for problem in failed.value.problems] == ["line 2", "line 3"]
    assert not User.objects.filter(username="henry").exists()
    assert not Membership.objects.filter(campaign=campaign).exists()


def test_it_adds_annotators_from_the_dashboard_pasted_and_from_a_csv(
    campaign: Campaign, manager: User, login
) -> None:
    """The dashboard's form: the answer lists each new account's link once, never cached; a
    bad list answers 400 on the dashboard with the line, and nothing is added."""
    client = login(manager)
    url = reverse("campaign_add_annotators", args=[campaign.pk])
    assert (
        reverse("campaign_add_annotators", args=[campaign.pk])
        in client.get(reverse("campaign_detail", args=[campaign.pk])).content.decode()
    )
    upload = SimpleUploadedFile("team.csv", b"username,email\nivy,ivy@example.org\n", "text/csv")
    preview = client.post(url, {"usernames": "jack", "csv_file": upload})
    assert preview.status_code == 200
    # Shown first, nothing made: a typo would be seen before it became an account.
    assert [(row.username, row.outcome) for row in preview.context["planned"]] == [
        ("jack", "new"),
        ("ivy", "new"),
    ]
    assert not User.objects.filter(username__in=["jack", "ivy"]).exists()
    confirmed = {"usernames": preview.context["list_text"], "confirm": "yes"}
    response = client.post(url, confirmed)
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    html = response.content.decode()
    assert [row.username for row in response.context["new_accounts"]] == ["jack", "ivy"]
    for row in response.context["new_accounts"]:
        assert row.set_password_url in html
    assert "This page shows these links once." in html

    refused = client.post(url, {"usernames": "kate\nbad/name"})
    assert refused.status_code == 400
    assert "the list line 2: username &#x27;bad/name&#x27;" in refused.content.decode()
    both = SimpleUploadedFile("more.csv", b"username\nlena\nkate\n", "text/csv")
    refused = client.post(url, {"usernames": "kate", "csv_file": both})
    assert refused.status_code == 400
    assert "more.csv line 3: kate is in the list too" in refused.content.decode()
    assert not User.objects.filter(username__in=["kate", "lena"]).exists()


def test_it_lets_a_manager_without_staff_rights_add_only_to_their_campaigns(
    campaign: Campaign, dataset: Dataset, annotator: User, login
) -> None:
    """Their own campaign: yes; another: 404, nothing made; and the members API shows a text
    box, not the list of every account."""
    lead = make_user("lead")
    add_member(campaign, lead, role=Membership.Role.MANAGER)
    other = active_campaign(dataset, name="someone else's")
    client = login(lead)
    mine = client.post(
        reverse("campaign_add_annotators", args=[campaign.pk]),
        {"usernames": "liam", "confirm": "yes"},
    )
    assert mine.status_code == 200
    assert User.objects.filter(username="liam").exists()
    theirs = client.post(
        reverse("campaign_add_annotators", args=[other.pk]), {"usernames": "mia", "confirm": "yes"}
    )
    assert theirs.status_code == 404
    assert not User.objects.filter(username="mia").exists()
    api = client.post(
        f"/api/campaigns/{other.pk}/annotators/", {"text": "mia"}, content_type="application/json"
    )
    assert api.status_code == 404
    browsable = client.get(f"/api/campaigns/{campaign.pk}/members/", HTTP_ACCEPT="text/html")
    assert browsable.status_code == 200
    assert f'<option value="{annotator.username}"' not in browsable.content.decode()
    assert "mallory" not in browsable.content.decode()


def test_it_adds_annotators_through_the_api(campaign: Campaign, manager: User, login) -> None:
    client = login(manager)
    url = f"/api/campaigns/{campaign.pk}/annotators/"
    created = client.post(
        url,
        {"annotators": [{"username": "nora", "email": "nora@example.org"}, {"username": "alice"}]},
        content_type="application/json",
    )
    assert created.status_code == 201
    body = created.json()
    assert [row["created"] for row in body] == [True, True]
    assert body[0]["set_password_url"].startswith("http://testserver/set-password/")
    bad = client.post(url, {"text": "oscar\nbad/name"}, content_type="application/json")
    assert bad.status_code == 400
    assert bad.json()["errors"]["text"][0].startswith("line 2:")
    assert not User.objects.filter(username="oscar").exists()
    neither = client.post(url, {}, content_type="application/json")
    assert neither.status_code == 400


def test_it_adds_annotators_from_the_shell_with_full_links(
    campaign: Campaign, annotator: User, tmp_path
) -> None:
    out = StringIO()
    call_command(
        "add_annotators",
        "--campaign",
        str(campaign.pk),
        "alice",
        "pat",
        "--base-url",
        "https://annotate.example.org",
        stdout=out,
    )
    text = out.getvalue()
    assert "alice: existing account, added" in text
    assert (
        "pat: new account, set a password at\n  https://annotate.example.org/set-password/" in text
    )
    table = tmp_path / "team.csv"
    table.write_text("username\nquinn\n", encoding="utf-8")
    call_command(
        "add_annotators", "--campaign", str(campaign.pk), "--csv", str(table), stdout=StringIO()
    )
    assert Membership.objects.filter(campaign=campaign, user__username="quinn").exists()
    with pytest.raises(CommandError, match="line 1"):
        call_command(
            "add_annotators", "--campaign", str(campaign.pk), "bad/name", stdout=StringIO()
        )
    with pytest.raises(CommandError, match="no campaign"):
        call_command("add_annotators", "--campaign", "999999", "x", stdout=StringIO())
    assert User.objects.get(username="alice").check_password(PASSWORD)


def test_the_preview_says_what_each_line_does_and_makes_nothing(
    campaign: Campaign, annotator: User, manager: User, login
) -> None:
    """A pasted typo shows as a new account before any is made; an existing account is added,
    a member is left as they are; confirming makes exactly what was shown."""
    add_member(campaign, annotator)
    make_user("bob")
    client = login(manager)
    url = reverse("campaign_add_annotators", args=[campaign.pk])
    preview = client.post(url, {"usernames": "alice\nBob bob@example.org\nbo_b"})
    html = preview.content.decode()
    assert preview.status_code == 200
    assert [(row.username, row.outcome) for row in preview.context["planned"]] == [
        ("alice", "member"),
        ("bob", "existing"),
        ("bo_b", "new"),
    ]
    assert "1 new account</strong> will be made" in html
    assert not User.objects.filter(username="bo_b").exists()
    assert not Membership.objects.filter(campaign=campaign, user__username="bob").exists()
    added = client.post(url, {"usernames": preview.context["list_text"], "confirm": "yes"})
    assert [row.username for row in added.context["new_accounts"]] == ["bo_b"]
    assert Membership.objects.filter(campaign=campaign, user__username="bob").exists()


def test_adding_a_member_again_leaves_their_role_and_counts_the_campaigns_annotators(
    campaign: Campaign, annotator: User, manager: User
) -> None:
    """A manager listed by mistake was once made an annotator ("existing account, added"), and
    the count was the list's length, not the campaign's annotators."""
    add_member(campaign, manager, role=Membership.Role.MANAGER)
    out = StringIO()
    call_command("add_annotators", "--campaign", str(campaign.pk), manager.username, stdout=out)
    role = Membership.objects.get(campaign=campaign, user=manager).role
    assert role == Membership.Role.MANAGER
    annotators = campaign.memberships.filter(role=Membership.Role.ANNOTATOR).count()
    assert f"{manager.username}: a member already, unchanged" in out.getvalue()
    assert f"0 added; {annotators} annotator(s) in campaign {campaign.pk}" in out.getvalue()
