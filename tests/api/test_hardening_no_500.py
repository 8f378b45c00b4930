"""No 500 from hostile input the fourth review found: a NUL in a cookie (PostgreSQL refused
the session lookup), a NUL in an imported answer's fields, a Label Studio ``lead_time`` that
is not a finite number of seconds, a figure label that reads like math; and an API error that
does happen is JSON, never a page. Cookies are fuzzed too: any names and values, NUL and
octal escapes included, on a page, the API and the login form."""

import json
import sys
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, RequestFactory
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from prb_annotate.campaigns.lifecycle import create_campaign
from prb_annotate.db.outage import server_error
from prb_annotate.models import AnswerImport, Campaign, Dataset
from prb_annotate.paper.figures import Figure, Row, draw

NUL_COOKIES = [
    'sessionid="ab\\000cd"',
    'sessionid="abcdefgh\\000ijklmnop"',
    'csrftoken="ab\\000cd"',
    'sessionid=abc; csrftoken="x\\000y"',
    '"a\\000b"=c',
]
PAGES = ["/", "/login/", "/campaigns/", "/api/campaigns/", "/datasets/"]


@pytest.mark.parametrize("cookie", NUL_COOKIES)
def test_a_nul_in_a_cookie_is_as_if_it_was_not_sent(db: None, cookie: str) -> None:
    client = Client()
    for url in PAGES:
        response = client.get(url, HTTP_COOKIE=cookie)
        assert response.status_code < 500, (url, cookie)
        if url.startswith("/api/"):
            assert response["Content-Type"].startswith("application/json")


def test_a_logged_in_user_with_a_nul_cookie_beside_the_session_stays_in(
    manager: User, login: Any
) -> None:
    client = login(manager)
    session = client.cookies["sessionid"].value
    response = client.get("/campaigns/", HTTP_COOKIE=f'sessionid={session}; other="a\\000b"')
    assert response.status_code == 200


@pytest.fixture
def elsewhere(dataset: Dataset, manager: User) -> Campaign:
    return create_campaign(dataset, "elsewhere", k=1, external=True, created_by=manager)


def api_import(client: Client, campaign: Campaign, name: str, content: bytes) -> Any:
    return client.post(
        f"/api/campaigns/{campaign.pk}/answers/import/",
        {"file": SimpleUploadedFile(name, content)},
    )


@pytest.mark.parametrize("field", ["annotator", "comment", "pair_id"])
def test_a_nul_in_an_imported_answer_is_a_problem_naming_its_field(
    manager: User, login: Any, elsewhere: Campaign, field: str
) -> None:
    pair = elsewhere.items.select_related("pair").first()
    assert pair is not None
    row = {
        "pair_id": pair.pair.external_id,
        "annotator": "a1",
        "rubric_fit": "chosen",
        "differentiator": "preference",
        "comment": "fine",
    }
    row[field] = row[field] + "\x00x"
    client = login(manager)
    content = (json.dumps(row) + "\n").encode()
    response = api_import(client, elsewhere, "answers.jsonl", content)
    assert response.status_code == 400
    problems = response.json()["problems"]
    assert [(p["field"], p["message"]) for p in problems] == [(field, "contains a NUL character")]
    page = client.post(
        reverse("campaign_answers_import", args=[elsewhere.pk]),
        {"file": SimpleUploadedFile("answers.jsonl", content)},
    )
    assert page.status_code == 400
    assert not AnswerImport.objects.exists()


@pytest.mark.parametrize("lead_time", ["NaN", "Infinity", "-Infinity", "1.8e305", "1e300"])
def test_a_lead_time_that_is_no_finite_number_is_no_500(
    manager: User, login: Any, elsewhere: Campaign, lead_time: str
) -> None:
    pair = elsewhere.items.select_related("pair").first()
    assert pair is not None
    task = {
        "id": 1,
        "data": {"pair_id": pair.pair.external_id, "chosen_side": "left"},
        "annotations": [{"id": 1, "completed_by": 7, "lead_time": 0, "result": []}],
    }
    content = json.dumps([task]).replace('"lead_time": 0', f'"lead_time": {lead_time}')
    response = api_import(login(manager), elsewhere, "export.json", content.encode())
    assert response.status_code == 400
    assert response["Content-Type"].startswith("application/json")
    fields = {problem["field"] for problem in response.json()["problems"]}
    # NaN is an empty cell, as in every reader; the others are no whole milliseconds.
    assert ("time_on_task_ms" in fields) is (lead_time != "NaN")
    assert not AnswerImport.objects.exists()


@pytest.mark.parametrize(
    "label",
    ["$\\frac{1}{$", "$x$ and $", "\\$5 $", "a_b^c {x}", "평가 범주", "≥ → 🙂", "two\n\nlines"],
)
def test_a_figure_label_is_drawn_as_plain_text(label: str) -> None:
    figure = Figure("labels", "caption", (Row(label, 0.5, 0.4, 0.6), Row("plain", 0.2)), "share")
    drawn = draw(figure)
    assert set(drawn) == {"labels.pdf", "labels.svg"}
    assert drawn["labels.pdf"].startswith(b"%PDF")


def test_an_api_error_is_json_and_a_page_error_a_page() -> None:
    factory = RequestFactory()
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        assert sys.exc_info()[0] is RuntimeError
        api = server_error(factory.get("/api/campaigns/"))
        page = server_error(factory.get("/campaigns/"))
    assert api.status_code == 500
    assert api["Content-Type"] == "application/json"
    assert set(json.loads(api.content)) == {"detail", "errors"}
    assert page.status_code == 500
    assert page["Content-Type"].startswith("text/html")


COOKIE_NAMES = st.sampled_from(["sessionid", "csrftoken", "prb_known_login", "other", "a\x00b"])


def cookie_header(pairs: list[tuple[str, str]]) -> str:
    """``name="value"`` pairs, every character outside printable ASCII (NUL included) written
    as the octal escape a cookie may carry."""

    def quoted(text: str) -> str:
        return "".join(
            c if 32 < ord(c) < 127 and c not in '"\\;,' else f"\\{ord(c) % 256:03o}" for c in text
        )

    return "; ".join(f'{quoted(name)}="{quoted(value)}"' for name, value in pairs)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(pairs=st.lists(st.tuples(COOKIE_NAMES, st.text(max_size=40)), min_size=1, max_size=3))
def test_no_cookie_makes_a_500(db: None, pairs: list[tuple[str, str]]) -> None:
    client = Client(raise_request_exception=False)
    header = cookie_header(pairs)
    for url in ("/", "/api/campaigns/", "/login/"):
        response = client.get(url, HTTP_COOKIE=header)
        assert response.status_code < 500, (url, header)
