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
    "name",
    [
        "agreement.py",
        "dawid_skene.py",
        "rule.py",
        "explain.py",
        "summaries.py",
        "questions.py",
        "annotators.py",
        "assembly.py",
        "quality.py",
        "sampling.py",
        "plan_odds.py",
        "model_agreement.py",
        "ppi.py",
        "ppi_designs.py",
    ],
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


# The plain-Python formats both halves use, defined once in evaluation/ (which imports nothing of
# the app): the app imports these at module level, the rest of evaluation/ only inside the
# functions that start a run.
SHARED_FORMATS = {
    "evaluation",
    "evaluation.errors",
    "evaluation.latex",
    "evaluation.levels",
    "evaluation.records",
    "evaluation.spreadsheet_cells",
    "evaluation.strict_json",
}


def test_it_serves_the_web_app_without_loading_torch() -> None:
    """Loading the URL map (every view and API module) in a fresh interpreter leaves torch and
    transformers unloaded, and of evaluation/ only the shared formats: the scorer is imported
    only when a run starts, matplotlib only when the paper's figures are drawn."""
    probe = (
        "import os, sys, django\n"
        "os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'prb_annotate.settings')\n"
        "django.setup()\n"
        "import prb_annotate.urls\n"
        "from django.urls import get_resolver\n"
        "get_resolver().url_patterns\n"
        "heavy = ('torch', 'transformers', 'matplotlib')\n"
        "print(*(name in sys.modules for name in heavy))\n"
        "print(*sorted(name for name in sys.modules if name.split('.')[0] == 'evaluation'))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    )
    heavy, loaded = result.stdout.splitlines()
    assert heavy.split() == ["False", "False", "False"], result.stderr
    assert set(loaded.split()) <= SHARED_FORMATS, loaded


def module_level_imports(path: Path) -> set[str]:
    """The modules a file imports in its body, outside any function or class."""
    tree = ast.parse(path.read_text(), filename=str(path))
    modules: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            modules.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            modules.add(node.module)
    return modules


def test_the_app_imports_only_the_shared_formats_of_evaluation_at_module_level() -> None:
    """What the app shares with the scorer (strict JSON, CSV cells, LaTeX escapes, the export's
    manifest) is defined once, in evaluation/; nothing else of evaluation/ is imported before a
    run starts."""
    wrong = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path in sorted((ROOT / "prb_annotate").rglob("*.py"))
        if "migrations" not in path.parts
        for module in module_level_imports(path)
        if top_level(module) == "evaluation" and module not in SHARED_FORMATS
    ]
    assert not wrong, "\n".join(wrong)


def test_it_keeps_commands_away_from_template_tags() -> None:
    """A command shares formatting with the pages through formats/numbers.py, not templatetags."""
    commands = ROOT / "prb_annotate" / "management" / "commands"
    for path in commands.glob("*.py"):
        with_tags = [m for m in imported_modules(path) if "templatetags" in m]
        assert not with_tags, f"{path.name} imports {with_tags}"


def classes_built_on(path: Path, bases: set[str]) -> list[str]:
    """The classes of a file whose bases include one of ``bases`` (``forms.Form``...)."""
    return [
        node.name
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path)))
        if isinstance(node, ast.ClassDef)
        and any(ast.unparse(base).split("[")[0] in bases for base in node.bases)
    ]


FORM_BASES = {"forms.Form", "forms.ModelForm", "Form", "ModelForm"}


def test_it_finds_a_form_class() -> None:
    assert classes_built_on(ROOT / "prb_annotate" / "web" / "forms.py", FORM_BASES)


def test_it_declares_the_pages_forms_in_web_not_in_views() -> None:
    """A page's form lives in web/, beside the others, never in the views module using it."""
    views = ROOT / "prb_annotate" / "views"
    found = {
        path.name: classes
        for path in views.rglob("*.py")
        if (classes := classes_built_on(path, FORM_BASES))
    }
    assert not found, found


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


def project_modules() -> dict[str, Path]:
    """Every module of prb_annotate/ and evaluation/ (migrations aside), by dotted name."""
    modules = {}
    for package in ("prb_annotate", "evaluation"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if "migrations" in parts:
                continue
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def import_graph() -> dict[str, set[str]]:
    """Module -> the project modules it imports, anywhere in its body (a function-level import
    closes a circle as surely as a top-level one). ``from package import name`` points at the
    module ``package.name`` when there is one, else at the package."""
    modules = project_modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names if alias.name in modules)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    candidate = f"{node.module}.{alias.name}"
                    if candidate in modules:
                        targets.add(candidate)
                    elif node.module in modules:
                        targets.add(node.module)
        # A package's __init__ importing its own modules is not a circle with them.
        graph[name] = {target for target in targets if target != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as a path that returns to its start, or None (depth-first search)."""
    state: dict[str, str] = {}
    stack: list[str] = []

    def visit(module: str) -> list[str] | None:
        state[module] = "open"
        stack.append(module)
        for target in sorted(graph.get(module, ())):
            if state.get(target) == "open":
                return [*stack[stack.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        stack.pop()
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state and (found := visit(module)):
            return found
    return None


def test_it_finds_a_circle_when_there_is_one() -> None:
    """The circle finder itself, on a graph with a circle and one without."""
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}) is None


def test_it_has_no_import_cycle() -> None:
    """No module imports, directly or through others, a module that imports it back."""
    cycle = find_cycle(import_graph())
    assert cycle is None, "import circle: " + " -> ".join(cycle or [])


# Each package and the packages of the app it must never import (the layers of ARCHITECTURE.md).
ABOVE = ("campaigns", "exports", "jobs", "views", "api", "management", "simulation", "web")
LAYERS = {
    # The rows sit under every capability: a model module imports only other model modules.
    "models": ("formats", "security", "db", "datasets", "audit", "paper", *ABOVE),
    # The shared file formats and the guards sit under everything that reads or writes files.
    "formats": ("db", "security", "datasets", "audit", "paper", *ABOVE),
    "security": ("datasets", "audit", "paper", *ABOVE),
    "db": ("security", "datasets", "audit", "paper", *ABOVE),
    "datasets": ("audit", "paper", *ABOVE),
    "audit": ("paper", *ABOVE),
    "campaigns": ("paper", "jobs", "views", "api", "management", "simulation", "web"),
    "exports": ("paper", "jobs", "views", "api", "management", "simulation", "web"),
    "paper": ("jobs", "views", "api", "management", "simulation", "web"),
    # Background jobs run the work of the layers below; the pages and the API start them.
    "jobs": ("views", "api", "management", "simulation", "web"),
    # The web layer's helpers serve the pages and the API only.
    "web": ("views", "api", "management", "simulation"),
}


def test_it_keeps_the_layers_in_order() -> None:
    """formats/, security/, db/, datasets/ and audit/ import nothing above them; web/ serves
    only views/ and api/ (and the template tags); only views/ and api/ import the forms and
    the serializers."""
    wrong = []
    for module, targets in import_graph().items():
        parts = module.split(".")
        package = parts[1] if len(parts) > 2 and parts[0] == "prb_annotate" else None
        for target in targets:
            target_parts = target.split(".")
            if package in LAYERS and len(target_parts) > 1 and target_parts[1] in LAYERS[package]:
                wrong.append(f"{module} imports {target}")
            presentation = target.startswith(
                ("prb_annotate.web.forms", "prb_annotate.web.qualification_forms")
            ) or target.startswith("prb_annotate.api.serializers")
            if presentation and package not in {"views", "api", "web"}:
                wrong.append(f"{module} imports {target}")
    assert not wrong, "\n".join(sorted(wrong))


def json_writers(path: Path) -> list[ast.Call]:
    """Every ``json.dump`` / ``json.dumps`` call and every ``JsonResponse`` in a file."""
    calls = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if not isinstance(node, ast.Call):
            continue
        function = node.func
        dumping = (
            isinstance(function, ast.Attribute)
            and function.attr in {"dump", "dumps"}
            and isinstance(function.value, ast.Name)
            and function.value.id == "json"
        )
        responding = isinstance(function, ast.Name) and function.id == "JsonResponse"
        if dumping or responding:
            calls.append(node)
    return calls


def test_every_json_writer_refuses_nan() -> None:
    """No bare NaN or Infinity in any JSON the project writes: every ``json.dump(s)`` passes
    ``allow_nan=False`` (the strict helpers ``prb_annotate/formats/strictjson.py`` and
    ``evaluation/strict_json.py`` write undefined figures as null first), and every
    ``JsonResponse`` passes ``json_dumps_params``."""
    wrong = []
    for folder in ("prb_annotate", "evaluation", "bench", "fixtures"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for call in json_writers(path):
                keywords = {keyword.arg: keyword.value for keyword in call.keywords}
                if isinstance(call.func, ast.Name):
                    ok = "json_dumps_params" in keywords
                else:
                    flag = keywords.get("allow_nan")
                    ok = isinstance(flag, ast.Constant) and flag.value is False
                if not ok:
                    wrong.append(f"{path.relative_to(ROOT)}:{call.lineno}")
    assert not wrong, "JSON written without allow_nan=False: " + ", ".join(wrong)
