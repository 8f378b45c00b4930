"""``transformers serve`` (transformers' own OpenAI-compatible server) on a free local port,
for the tests of judges behind an endpoint. Started on CPU, offline; stopped with its process
group when the block ends."""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

START_SECONDS = 300  # a cold start imports torch and FastAPI: slow on a busy machine


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_up(url: str, server: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"transformers serve stopped: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2):
                return
        except OSError:
            time.sleep(1)
    pytest.fail(f"transformers serve did not answer within {START_SECONDS} s")


@contextmanager
def serve(model: Path | None, log: Path) -> Iterator[str]:
    """The API base URL (``http://127.0.0.1:PORT/v1``) of a server running while the block
    runs: ``model`` alone, or (None) any local model folder a request names."""
    port = free_port()
    command = Path(sys.executable).with_name("transformers")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_VERBOSITY": "error"}
    forced = [] if model is None else [str(model)]
    with log.open("w") as output:
        server = subprocess.Popen(
            [str(command), "serve", *forced, "--port", str(port), "--device", "cpu"],
            stdout=output,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_up(url, server, log)
        yield f"{url}/v1"
    finally:
        os.killpg(server.pid, signal.SIGTERM)  # the server and any worker it started
        server.wait(timeout=30)
