"""The README runs as written: its everyday commands, in order, on the state `make demo` leaves,
then the Python snippets of README.md and docs/*.md against a live server, so that the pages a
newcomer follows cannot drift from the code.

Everything happens in a temporary folder that looks like a checkout (links to manage.py, the
packages, the fixtures and the virtualenv running the tests), with its own SQLite database
(``PRB_DATA_DIR``), so the files the commands write (out/audit.html, out/export/, ...) land there.
A block preceded by ``<!-- readme-test: skip (why) -->`` only illustrates (a deployment, an
optional package) and is left out.
"""

import json
import os
import re
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CHECKOUT_ENTRIES = ("manage.py", "prb_annotate", "evaluation", "fixtures")
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
DEMO_ADDRESS = "127.0.0.1:8000"
DEMO_PORT_LINE = "PORT = 8000"
SKIP_MARKER = re.compile(r"<!--\s*readme-test:\s*skip\b")
SKIP_REASON = re.compile(r"<!--\s*readme-test:\s*skip \([^)]+\)\s*-->")
FENCE = re.compile(r"^```(?P<language>\w*)\n(?P<code>.*?)^```", re.MULTILINE | re.DOTALL)

# The demo database is a SQLite file of its own whatever DATABASE_URL says: one run (the
# SQLite pass of `make test`) proves as much as two.
ONE_PASS = pytest.mark.skipif(
    bool(os.environ.get("DATABASE_URL")),
    reason="runs on a SQLite demo database of its own, in the SQLite pass",
)


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    language: str
    code: str
    skipped: bool

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)} line {self.line}"


def code_blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, each marked skipped when the last non-blank
    line before it is a skip marker."""
    text = path.read_text(encoding="utf-8")
    blocks = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip().splitlines()
        blocks.append(
            Block(
                path=path,
                line=text.count("\n", 0, match.start()) + 1,
                language=match["language"],
                code=match["code"],
                skipped=bool(before) and bool(SKIP_MARKER.search(before[-1])),
            )
        )
    return blocks


def runnable(paths: list[Path], language: str) -> list[Block]:
    return [
        block
        for path in paths
        for block in code_blocks(path)
        if block.language == language and not block.skipped
    ]


def demo_commands() -> list[str]:
    """What `make demo` runs before it starts the server, read from the Makefile."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipe = makefile.split("\ndemo:", 1)[1].split("\n\n", 1)[0]
    commands = []
    for line in recipe.splitlines()[1:]:
        command = line.strip()
        if "manage.py" in command and "runserver" not in command:
            command = command.replace("$(PY)", "python").replace("$(HOST):$(PORT)", DEMO_ADDRESS)
            commands.append(command)
    return commands


def checkout(folder: Path) -> Path:
    """A folder that works like the repository root for the README's commands."""
    folder.mkdir()
    for name in CHECKOUT_ENTRIES:
        (folder / name).symlink_to(ROOT / name)
    (folder / ".venv").symlink_to(Path(sys.prefix))
    return folder


def environment(data_dir: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env["PRB_DATA_DIR"] = str(data_dir)
    env["PATH"] = f"{Path(sys.prefix) / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTHONPATH", None)
    return env


def run_script(
    interpreter: list[str], script: str, cwd: Path, env: dict[str, str], what: str
) -> str:
    result = subprocess.run(
        [*interpreter, "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, f"{what} failed (exit {result.returncode}):\n{output}"
    return output


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until_up(url: str, server: subprocess.Popen[bytes], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        assert server.poll() is None, "the server exited"
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answered
        except OSError:
            time.sleep(0.2)
    raise AssertionError(f"no answer from {url} within {seconds} s")


@pytest.fixture
def demo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The state `make demo` leaves, built by its own commands in a checkout-like folder:
    (folder, environment of the commands)."""
    folder = checkout(tmp_path / "repo")
    env = environment(tmp_path / "var")
    run_script(["bash", "-e"], "\n".join(demo_commands()), folder, env, "make demo's set-up")
    return folder, env


@pytest.mark.slow
@ONE_PASS
def test_it_runs_the_readme_and_the_docs_as_written(
    demo: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    """The README's shell blocks, in order, on the demo state, then every shell block of docs/:
    a non-empty audit, a validated export, stored evaluations with accuracy on validated and
    excluded pairs, and nothing written outside out/. Then, against a
    live server, the Python snippets of the README and docs/export.md in the same folder, and
    docs/api.md's in a folder of its own (it makes its own campaign and export)."""
    folder, env = demo
    shell = runnable([ROOT / "README.md"], "sh")
    assert shell, "README.md has no runnable sh block"
    # Then every shell block of docs/, page by page: each runs as written against the demo (a
    # template's files ship in fixtures/), or says why it cannot with a skip marker.
    shell += runnable(DOCS[1:], "sh")
    for block in shell:
        run_script(["bash", "-euo", "pipefail"], block.code, folder, env, str(block))

    audit = json.loads((folder / "out" / "audit.json").read_text(encoding="utf-8"))
    assert audit["counts"]["annotations"] > 0
    assert audit["counts"]["validated"] > 0
    assert audit["counts"]["excluded"] > 0
    assert (folder / "out" / "audit.html").stat().st_size > 0
    manifest = json.loads((folder / "out" / "export" / "manifest.json").read_text(encoding="utf-8"))
    # Everything the commands wrote is in out/, which git ignores.
    written = {path.name for path in folder.iterdir()} - {*CHECKOUT_ENTRIES, ".venv"}
    assert written == {"out"}, written
    assert manifest["subset"] == "validated"
    assert manifest["counts"]["exported_pairs"] > 0
    assert evaluated_groups(Path(env["PRB_DATA_DIR"])) >= {"validated", "excluded"}

    port = free_port()
    address = f"127.0.0.1:{port}"
    gunicorn = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "prb_annotate.wsgi", "-w", "2", "-b", address],
        cwd=folder,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until_up(f"http://{address}/api/", gunicorn)
        python = [str(Path(sys.prefix) / "bin" / "python")]
        for block in runnable([ROOT / "README.md", ROOT / "docs" / "export.md"], "python"):
            run_script(python, for_server(block.code, port), folder, env, str(block))
        api_folder = checkout(tmp_path / "api")
        for block in runnable([ROOT / "docs" / "api.md"], "python"):
            run_script(python, for_server(block.code, port), api_folder, env, str(block))
    finally:
        gunicorn.terminate()
        gunicorn.wait(timeout=30)
    assert (api_folder / "export" / "manifest.json").is_file()


def for_server(code: str, port: int) -> str:
    """A snippet aimed at the test's server: snippets name the port once (``PORT = 8000``)."""
    return code.replace(DEMO_PORT_LINE, f"PORT = {port}").replace(DEMO_ADDRESS, f"127.0.0.1:{port}")


def evaluated_groups(data_dir: Path) -> set[str]:
    """The audit subsets with an accuracy in the stored reward-model runs of the demo database
    (a model annotator's run has reply counts, not accuracies)."""
    with sqlite3.connect(data_dir / "prb_annotate.sqlite3") as connection:
        summaries = [
            json.loads(row[0])
            for row in connection.execute(
                "SELECT summary FROM prb_annotate_evaluationrun WHERE mode != 'annotator'"
            )
        ]
    return {
        group
        for summary in summaries
        for group, stats in summary["accuracy"]["by_group"].items()
        if stats["accuracy"] is not None
    }


def test_it_finds_every_block_the_docs_mean_to_run() -> None:
    """The extraction itself: the skip markers sit right before the blocks they name, and the
    README keeps an everyday block and its API snippets."""
    readme = [block for block in code_blocks(ROOT / "README.md") if block.language == "sh"]
    assert any(block.skipped for block in readme)
    assert any(not block.skipped and "manage.py audit" in block.code for block in readme)
    assert demo_commands(), "the Makefile's demo target runs no manage.py command"
    for path in DOCS:
        text = path.read_text(encoding="utf-8")
        markers = len(SKIP_MARKER.findall(text))
        assert markers == sum(block.skipped for block in code_blocks(path)), path
        # A block left out says why, so that a reader knows what it needs.
        assert len(SKIP_REASON.findall(text)) == markers, f"{path}: a skip marker without (why)"
    assert runnable([ROOT / "README.md"], "python")
    assert runnable([ROOT / "docs" / "api.md"], "python")
    # A snippet that reaches the server takes its port from one variable, nothing hard-coded.
    for block in runnable([ROOT / "README.md", ROOT / "docs" / "api.md"], "python"):
        if "requests" in block.code:
            assert DEMO_PORT_LINE in block.code, block
            assert DEMO_ADDRESS not in block.code, block


def test_clean_demo_removes_the_demo_and_says_what(tmp_path: Path) -> None:
    """``make clean-demo`` removes the demo's data folder and out/, names both, and leaves the
    rest of the checkout alone."""
    (tmp_path / "Makefile").symlink_to(ROOT / "Makefile")
    for folder in ("var", "out", "prb_annotate"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "kept-or-not.txt").write_text("x")
    env = {key: value for key, value in os.environ.items() if key != "PRB_DATA_DIR"}
    result = subprocess.run(
        ["make", "--no-print-directory", "clean-demo"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert "Removing var/" in result.stdout
    assert "out/" in result.stdout
    assert sorted(path.name for path in tmp_path.iterdir()) == ["Makefile", "prb_annotate"]
