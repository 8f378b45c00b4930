"""The invariants of ARCHITECTURE.md that can be checked mechanically."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imported_modules(path: Path) -> set[str]:
    """Every module a file imports, at any depth (inside functions too)."""
    modules: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
    return modules


def top_level(module: str) -> str:
    return module.split(".")[0]


@pytest.mark.parametrize(
    "path", sorted((ROOT / "evaluation").rglob("*.py")), ids=lambda path: path.name
)
def test_it_keeps_evaluation_free_of_django(path: Path) -> None:
    """evaluation/ is plain Python: it meets the web app at a file format only."""
    forbidden = {top_level(module) for module in imported_modules(path)} & {
        "django",
        "rest_framework",
        "prb_annotate",
    }
    assert not forbidden, f"{path.relative_to(ROOT)} imports {sorted(forbidden)}"


@pytest.mark.parametrize(
    "name", ["agreement.py", "verdicts.py", "quality.py", "sampling.py", "model_agreement.py"]
)
def test_it_keeps_the_statistics_free_of_the_orm(name: str) -> None:
    """The statistics are pure functions over arrays and frames."""
    path = ROOT / "prb_annotate" / "audit" / name
    reaching_the_database = {
        module
        for module in imported_modules(path)
        if module.startswith(("django.db", "prb_annotate.models", "prb_annotate.db"))
        or module == "django"
    }
    assert not reaching_the_database, f"{name} imports {sorted(reaching_the_database)}"


def test_it_serves_the_web_app_without_loading_torch() -> None:
    """Loading the URL map (every view and API module) in a fresh interpreter leaves torch
    unloaded: evaluation/ is imported only when a run starts."""
    probe = (
        "import os, sys, django\n"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'prb_annotate.settings')\n"
        "django.setup()\n"
        "import prb_annotate.urls\n"
        "from django.urls import get_resolver\n"
        "get_resolver().url_patterns\n"
        "print(*(name in sys.modules for name in ('torch', 'transformers', 'evaluation')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["False", "False", "False"], result.stderr


def test_it_keeps_commands_away_from_template_tags() -> None:
    """A command shares formatting with the pages through formatting.py, not templatetags."""
    commands = ROOT / "prb_annotate" / "management" / "commands"
    for path in commands.glob("*.py"):
        with_tags = [m for m in imported_modules(path) if "templatetags" in m]
        assert not with_tags, f"{path.name} imports {with_tags}"


def test_it_names_every_package_in_the_code_map() -> None:
    """ARCHITECTURE.md's code map names each package of the app and evaluation/."""
    text = (ROOT / "ARCHITECTURE.md").read_text()
    packages = [
        path.parent.name
        for path in (ROOT / "prb_annotate").glob("*/__init__.py")
        if path.parent.name not in {"migrations", "templatetags", "management"}
    ]
    missing = [name for name in [*packages, "evaluation"] if f"`{name}/`" not in text]
    assert not missing, f"ARCHITECTURE.md does not mention {missing}"
