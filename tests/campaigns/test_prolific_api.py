"""Prolific's API from the Prolific page, when ``PROLIFIC_API_TOKEN`` is set: decisions sent as
submission transitions (only to submissions awaiting review), the bonus list paid as one bulk
bonus, and statuses read back, a returned participant's reservation freed at once. A study
participant removed with their answers left out is rejected there too; one who only skipped
items is left alone. Without the token the page offers the CSVs alone. What the page says is in
the reader's language; what goes to Prolific stays in English.

``ProlificStandIn`` (``tests/support/prolific.py``) is the only part that is not the real thing:
a local HTTP server that answers the documented endpoints with their documented shapes."""

import struct
from collections.abc import Mapping
from pathlib import Path

from django.conf import settings
from django.test import Client, override_settings
from django.urls import reverse

from prb_annotate.campaigns import prolific
from prb_annotate.campaigns.annotating import skip
from prb_annotate.campaigns.assignment import next_assignment
from prb_annotate.campaigns.joining import StudyIds, join_as_participant
from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.campaigns.members import LEAVE_OUT
from prb_annotate.campaigns.prolific_api import rejection_message
from prb_annotate.models import Assignment, Campaign
from tests.support.campaigns import submit_form
from tests.support.prolific import STUDY, TOKEN, ProlificStandIn, listed, send

# What a Korean catalogue says for the page's messages (the committed one is brought up to date
# on its own schedule): a catalogue of these, put before it, shows the page in its words.
KOREAN: dict[str | tuple[str, str], str] = {
    "Approve and reject on Prolific": "Prolific에서 승인·거절",
    "Pay the bonuses on Prolific": "Prolific에서 보너스 지급",
    "Read statuses back": "상태 다시 읽기",
    "%(amount)s per item beyond %(items)d": "%(items)d개를 넘는 항목마다 %(amount)s",
    "%(amount)s for gold accuracy of %(accuracy)s or more": (
        "골드 정확도 %(accuracy)s 이상이면 %(amount)s"
    ),
    "no bonus": "보너스 없음",
    ("%(count)d item beyond %(beyond)d", "%(count)d items beyond %(beyond)d"): (
        "%(beyond)d개를 넘는 항목 %(count)d개"
    ),
    "gold accuracy %(accuracy)s": "골드 정확도 %(accuracy)s",
    "Give the gold bonus and its accuracy threshold together.": (
        "골드 보너스와 정확도 기준을 함께 주세요."
    ),
    (
        "Sent to Prolific: %(approved)d approved, %(rejected)d rejected; "
        "%(skipped)d not awaiting review there, left as they are."
    ): (
        "Prolific에 보냄: 승인 %(approved)d건, 거절 %(rejected)d건; "
        "검토 대기가 아닌 %(skipped)d건은 그대로 둠."
    ),
    (
        "Bonuses paid on Prolific to %(count)d participant.",
        "Bonuses paid on Prolific to %(count)d participants.",
    ): "Prolific에서 참가자 %(count)d명에게 보너스를 지급함.",
    (
        "Read %(count)d submission back from Prolific.",
        "Read %(count)d submissions back from Prolific.",
    ): "Prolific에서 제출 %(count)d건을 읽어 옴.",
}


def write_catalogue(path: Path, messages: Mapping[str | tuple[str, str], str]) -> None:
    """A compiled gettext catalogue (GNU ``.mo``, laid out as ``msgfmt`` writes it) of
    ``messages``; a plural message is keyed by its two English forms, Korean having one."""
    header = "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=1; plural=0;\n"
    entries = {b"": header.encode()}
    for message, text in messages.items():
        msgid = "\0".join(message) if isinstance(message, tuple) else message
        entries[msgid.encode()] = text.encode()
    msgids = sorted(entries)
    ids = strs = b""
    id_table: list[int] = []
    str_table: list[int] = []
    data_at = 7 * 4 + 16 * len(msgids)  # after the header and the two tables
    for key in msgids:
        id_table += [len(key), len(ids)]
        str_table += [len(entries[key]), len(strs)]
        ids += key + b"\0"
        strs += entries[key] + b"\0"
    id_table[1::2] = [data_at + at for at in id_table[1::2]]
    str_table[1::2] = [data_at + len(ids) + at for at in str_table[1::2]]
    count = len(msgids)
    head = struct.pack("<7I", 0x950412DE, 0, count, 28, 28 + 8 * count, 0, 0)
    table = struct.pack(f"<{4 * count}I", *id_table, *str_table)
    path.parent.mkdir(parents=True)
    path.write_bytes(head + table + ids + strs)


def test_it_sends_decisions_pays_bonuses_and_reads_statuses_back(
    study: Campaign, manager, login, prolific_server: str
) -> None:
    client = login(manager)
    with override_settings(PROLIFIC_API_TOKEN=TOKEN, PROLIFIC_API_URL=prolific_server):
        page = send(client, study, "decisions")
        assert "Sent to Prolific: 1 approved, 1 rejected; 1 not awaiting review there" in page
        transitions = {path: body for _, path, body in ProlificStandIn.calls}
        assert transitions["/api/v1/submissions/s-good/transition/"] == {"action": "APPROVE"}
        rejected = transitions["/api/v1/submissions/s-bad/transition/"]
        assert rejected["action"] == "REJECT"
        assert "copied answers" in rejected["message"]
        assert "/api/v1/submissions/s-gone/transition/" not in transitions

        ProlificStandIn.calls = []
        assert "Bonuses paid on Prolific to 1 participant." in send(client, study, "bonuses")
        assert ProlificStandIn.calls[0][2] == {"study_id": STUDY, "csv_bonuses": "PIDGOOD,0.20"}
        assert ProlificStandIn.calls[1][1] == "/api/v1/bulk-bonus-payments/bonus-1/pay/"

        held = Assignment.objects.get(annotator__username="gone", status="reserved")
        page = send(client, study, "statuses")
        assert "Read 3 submissions back from Prolific." in page
        assert '<tr data-participant="PIDGONE"><td><code>PIDGONE</code></td><td>RETURNED' in page
        held.refresh_from_db()
        assert held.status == Assignment.Status.EXPIRED


def test_it_says_why_prolific_refused_and_changes_nothing(
    study: Campaign, manager, login, prolific_server: str
) -> None:
    client = login(manager)
    with override_settings(PROLIFIC_API_TOKEN="wrong", PROLIFIC_API_URL=prolific_server):
        page = send(client, study, "decisions")
    assert "Prolific answered 401 to GET studies/study-1/submissions/" in page
    assert ProlificStandIn.calls == []


def test_without_a_token_the_page_offers_the_csvs_alone(study: Campaign, manager, login) -> None:
    client = login(manager)
    page = client.get(reverse("campaign_prolific", args=[study.pk])).content.decode()
    assert 'id="prolific-api"' not in page
    assert 'id="approvals-csv"' in page
    assert "not configured: use the CSVs" in send(client, study, "decisions")


def test_it_rejects_a_removed_participant_and_leaves_a_skipper_alone(
    dataset, manager, login, prolific_server: str
) -> None:
    """Three study participants who came by the link and submitted on Prolific: one worked,
    one worked and was then removed on the dashboard with their answers left out, one only
    skipped. The removed one's submission is rejected with the removal as its message, the
    worker's approved, the skipper's left awaiting review."""
    campaign = create_campaign(dataset, "study", k=2, seed=5, activate=True)
    campaign.prolific_study_id = STUDY
    campaign.save(update_fields=["prolific_study_id"])
    joined = {}
    for number, pid in enumerate(("PIDWORKER", "PIDREMOVED", "PIDSKIPPER")):
        ids = StudyIds(pid, STUDY, f"session-{pid}")
        network = f"192.0.{number}.0/24"
        joined[pid] = join_as_participant(campaign.invite_token, ids, address=network).membership
    for pid, user in ((pid, m.user) for pid, m in joined.items()):
        assignment = next_assignment(campaign, user)
        assert assignment is not None
        if pid == "PIDSKIPPER":
            skip(assignment.pk, user, reason="not my field")
        else:
            submit_form(assignment)
    client = login(manager)
    removal = reverse("campaign_remove_member", args=[campaign.pk, joined["PIDREMOVED"].user_id])
    assert client.post(removal, {"answers": LEAVE_OUT}).status_code == 302
    ProlificStandIn.submissions = listed(
        "PIDWORKER", "PIDREMOVED", "PIDSKIPPER", status="AWAITING REVIEW"
    )
    with override_settings(PROLIFIC_API_TOKEN=TOKEN, PROLIFIC_API_URL=prolific_server):
        page = send(client, campaign, "decisions")
    assert "Sent to Prolific: 1 approved, 1 rejected; 0 not awaiting review there" in page
    transitions = {path: body for _, path, body in ProlificStandIn.calls}
    assert transitions == {
        "/api/v1/submissions/s-PIDWORKER/transition/": {"action": "APPROVE"},
        "/api/v1/submissions/s-PIDREMOVED/transition/": {
            "action": "REJECT",
            "message": rejection_message("excluded by a manager: removed from the campaign"),
            "rejection_category": "LOW_EFFORT",
        },
    }


def test_the_page_speaks_the_readers_language_and_prolific_gets_english(
    study: Campaign, manager, login, prolific_server: str, tmp_path: Path
) -> None:
    """In Korean, the buttons, the bonus rule, each bonus's "For" and what a send did are the
    catalogue's words, their numbers in place; the CSVs and the rejection's message, which go
    to Prolific, are as in English."""
    english = prolific.approvals_csv(study)
    write_catalogue(tmp_path / "ko" / "LC_MESSAGES" / "django.mo", KOREAN)
    with override_settings(
        LOCALE_PATHS=[tmp_path, *settings.LOCALE_PATHS],
        PROLIFIC_API_TOKEN=TOKEN,
        PROLIFIC_API_URL=prolific_server,
    ):
        client: Client = login(manager)
        chosen = client.post(reverse("set_language"), {"language": "ko", "next": "/"})
        assert chosen.status_code == 302
        page = client.get(reverse("campaign_prolific", args=[study.pk])).content.decode()
        assert '<html lang="ko">' in page
        for action, words in [
            ("decisions", "Prolific에서 승인·거절"),
            ("bonuses", "Prolific에서 보너스 지급"),
            ("statuses", "상태 다시 읽기"),
        ]:
            assert f'<button type="submit" id="prolific-{action}">{words}</button>' in page
        assert '<strong id="bonus-rule-text">1개를 넘는 항목마다 0.10</strong>' in page
        assert "<td>1개를 넘는 항목 2개</td>" in page  # PIDGOOD's three items, beyond 1
        assert "per item" not in page
        assert "items beyond" not in page

        sent = send(client, study, "decisions")
        assert "Prolific에 보냄: 승인 1건, 거절 1건; 검토 대기가 아닌 1건은 그대로 둠." in sent
        rejected = {path: body for _, path, body in ProlificStandIn.calls}
        message = rejected["/api/v1/submissions/s-bad/transition/"]["message"]
        assert message == rejection_message("excluded by a manager: copied answers")
        assert message.endswith("Reason: excluded by a manager: copied answers.")
        assert "Prolific에서 참가자 1명에게 보너스를 지급함." in send(client, study, "bonuses")
        assert "Prolific에서 제출 3건을 읽어 옴." in send(client, study, "statuses")
        download = client.get(reverse("campaign_prolific_approvals", args=[study.pk]))
        assert download.content.decode() == english

        saved = client.post(
            reverse("campaign_prolific_bonus_rule", args=[study.pk]),
            {"per_item": "", "items_beyond": "", "gold_amount": "1.00", "gold_min_accuracy": ""},
            follow=True,
        ).content.decode()
        assert "골드 보너스와 정확도 기준을 함께 주세요." in saved
        client.post(
            reverse("campaign_prolific_bonus_rule", args=[study.pk]),
            {"per_item": "", "items_beyond": "", "gold_amount": "", "gold_min_accuracy": ""},
        )
        page = client.get(reverse("campaign_prolific", args=[study.pk])).content.decode()
        assert '<strong id="bonus-rule-text">보너스 없음</strong>' in page
