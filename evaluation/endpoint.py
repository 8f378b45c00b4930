"""A judge served by an inference engine, asked over the OpenAI chat-completions protocol.

A judge too large for one process is served by a tensor-parallel engine (vLLM, SGLang, TGI, or
``transformers serve``); they all answer ``POST {url}/chat/completions``. The scorer sends the
same chats it would generate from in process, greedily (temperature 0), several at a time, and
parses the replies the same way.

The API key is read from the environment variable the endpoint names, when a request is made;
it is never stored, printed or written into a run card. A request that fails for a reason that
passes (no connection, a timeout, or an answer in ``RETRY_STATUSES``: 408, 429, 500,
502, 503, 504) is sent again after a back-off that
doubles each time; one that fails for good is an error naming the endpoint and the reason.
No torch here.
"""

import argparse
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from evaluation.errors import EvaluationError

Chat = list[dict[str, str]]
# Answers worth asking again: too many requests, and the server's own failures.
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
FIRST_BACKOFF_SECONDS = 0.5


def add_endpoint_options(score: argparse.ArgumentParser, *, needs: str = "") -> None:
    """A judge served elsewhere, over the OpenAI chat-completions protocol: the options of
    ``python -m evaluation score`` and ``manage.py evaluate`` alike (``needs``: what
    ``--judge-endpoint`` goes with, "with --judge: ", where it is not implied)."""
    score.add_argument(
        "--judge-endpoint",
        metavar="URL",
        help=f"{needs}ask the judge served at this OpenAI-compatible API (http://host:8000/v1: "
        "vLLM, SGLang, TGI, transformers serve) instead of loading --model",
    )
    score.add_argument(
        "--judge-model", help="the model name the endpoint serves (default: the first it lists)"
    )
    score.add_argument(
        "--api-key-env",
        default="OPENAI_API_KEY",
        metavar="NAME",
        help="environment variable holding the endpoint's API key (never recorded)",
    )
    score.add_argument("--concurrency", type=int, default=4, help="requests in flight at once")
    score.add_argument(
        "--retries", type=int, default=3, help="further attempts after a failure that passes"
    )
    score.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for a reply")


def endpoint_from_options(options: Mapping[str, Any]) -> "Endpoint | None":
    """The endpoint the options of ``add_endpoint_options`` name (parsed: ``vars(args)`` or a
    command's options), or None where ``--judge-endpoint`` is not given."""
    if not options.get("judge_endpoint"):
        return None
    return Endpoint(
        url=options["judge_endpoint"],
        model=options["judge_model"],
        api_key_env=options["api_key_env"],
        concurrency=options["concurrency"],
        retries=options["retries"],
        timeout=options["timeout"],
    )


@dataclass
class Endpoint:
    """Where the judge is served and how it is asked.

    Attributes:
        url: the API's base, as engines print it (``http://host:8000/v1``); ``/chat/completions``
            is added unless the URL already ends with it.
        model: the model name sent with each request (``--judge-model``); None: the name the
            server lists first at ``/models``.
        api_key_env: the environment variable holding the API key, sent as a bearer token when
            it is set; never stored.
        concurrency: requests in flight at once.
        retries: further attempts after a failure that passes.
        timeout: seconds to wait for one reply.
    """

    url: str
    model: str | None = None
    api_key_env: str | None = "OPENAI_API_KEY"
    concurrency: int = 4
    retries: int = 3
    timeout: float = 120.0
    # The model name the server reported in its replies, for the run card.
    served_model: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise EvaluationError(f"--judge-endpoint {self.url!r} is not an http(s) URL")
        if parts.username or parts.password:
            raise EvaluationError(
                "--judge-endpoint must not hold credentials; put the key in the environment "
                "variable --api-key-env names"
            )
        if self.concurrency < 1 or self.retries < 0 or self.timeout <= 0:
            raise EvaluationError(
                "--concurrency must be 1 or more, --retries 0 or more, --timeout above 0"
            )

    @property
    def completions_url(self) -> str:
        base = self.url.rstrip("/")
        return base if base.endswith("/chat/completions") else f"{base}/chat/completions"

    @property
    def models_url(self) -> str:
        base = self.completions_url.removesuffix("/chat/completions")
        return f"{base}/models"

    def describe(self) -> dict[str, Any]:
        """For the run card: where, which model, how asked; never the key."""
        parts = urlsplit(self.url)
        return {
            "url": urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")),
            "model": self.model,
            "served_model": self.served_model,
            "api_key_env": self.api_key_env,
            "api_key_set": bool(self.api_key_env and os.environ.get(self.api_key_env)),
            "concurrency": self.concurrency,
            "retries": self.retries,
            "timeout": self.timeout,
            "protocol": "OpenAI chat completions, temperature 0",
        }

    def model_name(self) -> str:
        """``model``, or the first model the server lists."""
        if self.model is None:
            listing = self._request(self.models_url, None)
            models = listing.get("data") or []
            if not models or not isinstance(models[0], dict) or "id" not in models[0]:
                raise EvaluationError(
                    f"{self.models_url} lists no model: give the judge's name with --judge-model"
                )
            self.model = str(models[0]["id"])
        return self.model

    def replies(self, chats: Sequence[Chat], max_new_tokens: int) -> list[str]:
        """The reply to each chat, in order."""
        name = self.model_name()
        with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
            answers = list(pool.map(lambda chat: self.reply(chat, name, max_new_tokens), chats))
        return answers

    def reply(self, chat: Chat, name: str, max_new_tokens: int) -> str:
        body = {
            "model": name,
            "messages": chat,
            "temperature": 0,
            "max_tokens": max_new_tokens,
            "stream": False,
        }
        answer = self._request(self.completions_url, body)
        try:
            text = answer["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise EvaluationError(
                f"{self.completions_url}: the answer has no choices[0].message.content"
            ) from None
        self.served_model = str(answer.get("model") or name)
        return str(text or "").strip()

    def _request(self, url: str, body: dict[str, Any] | None) -> dict[str, Any]:
        """One request, sent again after a back-off while it fails for a reason that passes."""
        delay = FIRST_BACKOFF_SECONDS
        for attempt in range(self.retries + 1):
            try:
                return self._send(url, body)
            except _Passing as error:
                if attempt == self.retries:
                    raise EvaluationError(
                        f"{url}: {error} (after {self.retries + 1} attempts)"
                    ) from None
            time.sleep(delay)
            delay *= 2
        raise AssertionError("unreachable")

    def _send(self, url: str, body: dict[str, Any] | None) -> dict[str, Any]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = os.environ.get(self.api_key_env) if self.api_key_env else None
        if key:
            headers["Authorization"] = f"Bearer {key}"
        data = None if body is None else json.dumps(body, allow_nan=False).encode("utf-8")
        # The scheme is http or https: checked when the endpoint was made.
        request = urllib.request.Request(url, data=data, headers=headers)  # noqa: S310
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                payload = json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as error:
            if error.code in RETRY_STATUSES:
                raise _Passing(f"HTTP {error.code}") from None
            raise EvaluationError(f"{url}: HTTP {error.code} {_detail(error)}") from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
            reason = getattr(error, "reason", error)
            raise _Passing(f"no answer ({reason})") from None
        except json.JSONDecodeError:
            raise EvaluationError(f"{url}: the answer is not JSON") from None
        if not isinstance(payload, dict):
            raise EvaluationError(f"{url}: the answer is not a JSON object")
        return payload


class _Passing(Exception):
    """A failure worth another attempt."""


def _detail(error: urllib.error.HTTPError) -> str:
    """The server's own words, on one line and short (never the request, which holds no key
    but may hold a long prompt)."""
    try:
        text = error.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    return " ".join(text.split())[:200]
