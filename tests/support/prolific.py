"""``ProlificStandIn``: the only part of the Prolific tests that is not the real thing. A local
HTTP server, written here, that answers Prolific's documented endpoints with their documented
shapes: a study's submissions listed in pages linked by ``_links.next.href``, submission
transitions (a decided submission then listed as approved or rejected), bulk bonus payments
set up then paid."""

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

TOKEN = "test-token"
STUDY = "study-1"


class ProlificStandIn(BaseHTTPRequestHandler):
    """The endpoints; ``submissions`` is the study's list (its first row on page 1, the rest on
        page 2), ``calls`` every change asked for, ``reads`` every page asked for, ``refuse_with`` a
    status every call gets instead, ``refuse_paths`` the POST paths answered 503,
    ``fail_paths`` POST paths answered with the status given, ``lose_paths`` the POST paths
    carried out whose answer is lost: the connection closes with none, ``before_paths`` what
    runs (in the server's thread) before a POST path is carried out (each bulk bonus set up
    gets the next id: ``bonus-1``, ``bonus-2``, ...)."""

    submissions: list[dict[str, Any]] = []
    calls: list[tuple[str, str, dict[str, Any]]] = []
    reads: list[str] = []
    refuse_with: int | None = None
    refuse_paths: frozenset[str] = frozenset()
    fail_paths: dict[str, int] = {}
    lose_paths: frozenset[str] = frozenset()
    before_paths: dict[str, Callable[[], None]] = {}
    base = ""

    def _answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _authorised(self) -> bool:
        if self.refuse_with is not None:
            self._answer(self.refuse_with, {"error": {"detail": "Request was throttled."}})
            return False
        if self.headers.get("Authorization") == f"Token {TOKEN}":
            return True
        self._answer(401, {"error": {"detail": "Invalid token."}})
        return False

    def do_GET(self) -> None:
        self.reads.append(self.path)
        if not self._authorised():
            return
        first = f"/api/v1/studies/{STUDY}/submissions/"
        if self.path == first:
            following = {"href": f"{self.base}studies/{STUDY}/submissions/?page=2"}
            self._answer(200, {"results": self.submissions[:1], "_links": {"next": following}})
        elif self.path == first + "?page=2":
            self._answer(200, {"results": self.submissions[1:], "_links": {"next": None}})
        else:
            self._answer(404, {"error": {"detail": "Not found."}})

    def do_POST(self) -> None:
        if not self._authorised():
            return
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        if self.path in self.refuse_paths:
            self._answer(503, {"error": {"detail": "Service unavailable."}})
            return
        if self.path in self.fail_paths:
            self._answer(self.fail_paths[self.path], {"error": {"detail": "Server error."}})
            return
        if self.path in self.before_paths:
            self.before_paths[self.path]()
        self.calls.append(("POST", self.path, body))
        if self.path in self.lose_paths:
            self.close_connection = True  # done, but no answer reaches the caller
            return
        if self.path == "/api/v1/submissions/bonus-payments/":
            number = sum(path == self.path for _, path, _ in self.calls)
            self._answer(201, {"id": f"bonus-{number}", "study": body["study_id"], "amount": 1})
            return
        for row in self.submissions:
            # A decided submission no longer awaits review, as on Prolific.
            if self.path == f"/api/v1/submissions/{row['id']}/transition/":
                row["status"] = {"APPROVE": "APPROVED", "REJECT": "REJECTED"}[body["action"]]
        self._answer(200, {"status": "ok"})

    def log_message(self, *args: Any) -> None:
        pass


@contextmanager
def prolific_stand_in(submissions: list[dict[str, Any]] | None = None) -> Iterator[str]:
    """The stand-in serving on a free local port, listing ``submissions`` when given (else
    what was set before); yields its API address."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), ProlificStandIn)
    base = f"http://127.0.0.1:{server.server_port}/api/v1/"
    ProlificStandIn.base, ProlificStandIn.refuse_with = base, None
    ProlificStandIn.calls, ProlificStandIn.reads = [], []
    ProlificStandIn.refuse_paths = ProlificStandIn.lose_paths = frozenset()
    ProlificStandIn.fail_paths, ProlificStandIn.before_paths = {}, {}
    if submissions is not None:
        ProlificStandIn.submissions = list(submissions)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield base
    finally:
        server.shutdown()
        server.server_close()


def listed(*participant_ids: str, status: str = "ACTIVE") -> list[dict[str, Any]]:
    """Submission rows for these participants, as Prolific lists a study's submissions."""
    return [{"id": f"s-{pid}", "participant_id": pid, "status": status} for pid in participant_ids]


def send(client: Any, campaign: Any, action: str) -> str:
    """A manager's press on one of the Prolific page's API buttons; the page it lands on."""
    from django.urls import reverse

    url = reverse("campaign_prolific_send", args=[campaign.pk, action])
    return str(client.post(url, follow=True).content.decode())
