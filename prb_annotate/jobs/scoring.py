"""The scoring job: ``evaluate_campaign`` (what ``manage.py evaluate`` calls) with the command's
options that make sense on a page, on a built-in baseline, a model folder under one of the
server's ``PRB_MODEL_ROOTS`` or a Hub id the server can load; never an arbitrary path from a form.
A judge's template is a folder or file under the same roots. Options are checked before the job
is queued and again in the worker (the roots may have changed). ``evaluation`` is imported in
functions only, and torch in the worker only."""

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings

from prb_annotate.campaigns.evaluating import accuracy_rows, evaluate_campaign
from prb_annotate.formats.strictjson import dumps
from prb_annotate.jobs.progress import JobCancelled, campaign_of, finish_inside, step
from prb_annotate.models import EvaluationRun, Job

SUBSETS = ("all", "validated", "excluded")


@dataclass(frozen=True)
class Option:
    """One option of a scoring job, as ``manage.py evaluate`` takes it: its type, its default
    (``None``: the scorer's own), the values it may take and its least value."""

    kind: type
    default: Any = None
    choices: tuple[str, ...] = ()
    least: int | None = None


# Every option a scoring job takes. "model", "subset", "name" and "judge_template" are the job's
# own; the others go to ``evaluation.config.ScoreConfig`` as given.
SCORE_OPTIONS: dict[str, Option] = {
    "model": Option(str, ""),
    "name": Option(str),
    "subset": Option(str, "all", SUBSETS),
    "mode": Option(str, "question", ("question", "profile")),
    "judge": Option(bool, False),
    "both_orders": Option(bool, False),
    "judge_template": Option(str),
    "max_new_tokens": Option(int, least=1),
    "top_k": Option(int, 10, least=0),
    "profile_format": Option(str, None, ("plain", "benchmark")),
    "device": Option(str),
    "dtype": Option(str, None, ("float32", "bfloat16", "float16")),
    "max_batch_tokens": Option(int, least=1),
    "max_length": Option(int, least=1),
    "prefix_reuse": Option(str, "auto", ("auto", "on", "off")),
    "padding_side": Option(str, None, ("left", "right")),
    "label_index": Option(int, least=0),
    "tie_tolerance": Option(float, 0.0),
    "seed": Option(int, 0),
    "self_check": Option(int, 0, least=0),
    "allow_flips": Option(bool, False),
    "paper_settings": Option(bool, False),
}
JOB_OWN = ("model", "subset", "name", "judge_template")
SCORE_DEFAULTS = {name: option.default for name, option in SCORE_OPTIONS.items()}


def builtin_models() -> list[str]:
    """The built-in baselines, named as ``evaluate --model`` takes them (no torch)."""
    from evaluation.baselines import BASELINES, PREFIX

    return [PREFIX + name for name in BASELINES]


def model_roots() -> list[Path]:
    return [Path(root).resolve() for root in settings.PRB_MODEL_ROOTS]


def under_roots(name: str, *, folder: bool = True) -> Path | None:
    """``name`` resolved under one of ``PRB_MODEL_ROOTS`` (given by its path or relative to a
    root), a folder (or with ``folder=False`` a file too), never a root itself; None otherwise."""
    for root in model_roots():
        found = (root / name).resolve()
        exists = found.is_dir() or (not folder and found.is_file())
        if found.is_relative_to(root) and exists and found != root:
            return found
    return None


def roots_words() -> str:
    return ", ".join(str(root) for root in model_roots()) or "none (PRB_MODEL_ROOTS is unset)"


def allowed_model(model: str) -> str:
    """The model to score: a built-in baseline, a folder under one of ``PRB_MODEL_ROOTS``
    (resolved), or a Hub id the server can load (the Hub reached, or the model in its cache);
    ValueError otherwise, with the command's own message for a Hub id it cannot load."""
    if model in builtin_models():
        return model
    if model.startswith("builtin:"):
        raise ValueError(
            f"Unknown baseline {model!r}; choose one of {', '.join(builtin_models())}."
        )
    folder = under_roots(model)
    if folder is not None:
        return str(folder)
    from evaluation.errors import EvaluationError
    from evaluation.locations import check_model_location, is_hub_id

    # A Hub id must not name anything on the server: the loader would read that first.
    if not model or model.startswith(("/", ".", "~")) or Path(model).exists():
        raise ValueError(
            f"model {model!r} is no baseline and no model folder under {roots_words()}."
        )
    if not is_hub_id(model) or model.count("/") > 1:
        raise ValueError(
            f"model {model!r} is no baseline, no model folder under {roots_words()} and no Hub id."
        )
    try:
        check_model_location(model)
    except EvaluationError as error:
        raise ValueError(str(error)) from error
    return model


def checked_value(name: str, value: Any) -> None:
    """ValueError naming the option when ``value`` is not of its type, choices and bounds."""
    option = SCORE_OPTIONS[name]
    if value is None and option.default is None:
        return
    numeric = option.kind is float and isinstance(value, int)
    if isinstance(value, bool) is not (option.kind is bool) or not (
        isinstance(value, option.kind) or numeric
    ):
        raise ValueError(f"{name} must be {option.kind.__name__}, not {value!r}.")
    if option.choices and value not in option.choices:
        raise ValueError(f"{name} must be one of {', '.join(option.choices)}, not {value!r}.")
    if option.least is not None and value < option.least:
        raise ValueError(f"{name} must be {option.least} or more, not {value}.")


def check_score_options(options: dict[str, Any]) -> None:
    """Refuse, naming the option, what the command would refuse, before the job is queued."""
    unknown = set(options) - set(SCORE_OPTIONS)
    if unknown:
        raise ValueError(f"Unknown scoring option(s): {', '.join(sorted(unknown))}.")
    for name, value in options.items():
        checked_value(name, value)
    score_config({**SCORE_DEFAULTS, **options})


def judge_template_of(options: dict[str, Any]) -> Any:
    """The judge's prompts from a folder or file under ``PRB_MODEL_ROOTS``; None: the project's."""
    name = options.get("judge_template")
    if not name:
        return None
    from evaluation.errors import EvaluationError
    from evaluation.judge_templates import load_judge_template

    path = under_roots(str(name), folder=False)
    if path is None:
        raise ValueError(f"judge_template {name!r} is no folder or file under {roots_words()}.")
    if not options.get("judge"):
        raise ValueError("judge_template goes with judge: true.")
    try:
        return load_judge_template([path])
    except EvaluationError as error:
        raise ValueError(f"judge_template: {error}") from error


def score_config(options: dict[str, Any]) -> dict[str, Any]:
    """The options for ``ScoreConfig`` (the model and template checked), checked as the scorer
    checks them: ValueError with its message."""
    from evaluation.config import ScoreConfig
    from evaluation.errors import EvaluationError

    model = allowed_model(str(options["model"]))
    chosen = {name: value for name, value in options.items() if name not in JOB_OWN}
    chosen = {name: value for name, value in chosen.items() if value is not None}
    chosen["judge_template"] = judge_template_of(options)
    try:
        ScoreConfig(model=model, **chosen)
    except (EvaluationError, TypeError) as error:
        raise ValueError(str(error)) from error
    return {"model": model, **chosen}


def score_job(job: Job, folder: Path) -> Path:
    """Score the campaign's pairs and store the run; the result file is the run's accuracy.

    A cancel during the model pass stops it at its next batch (``evaluation.interrupt``; a
    judge behind an endpoint finishes its requests first), and the run is stored only with the
    job's end, in one transaction (``finish_inside``), so a cancelled job never leaves a run
    and a job that stored its run is done."""
    options = {**SCORE_DEFAULTS, **job.options}
    config = score_config(options)  # checked again: the roots may have changed
    step(job, 0, 2, f"scoring {options['subset']} pairs with {config['model']}")
    written: list[Path] = []

    def end_with(run: EvaluationRun) -> None:
        written.append(write_run_file(folder, run))
        lines = [f"stored run #{run.pk}", f"wrote {written[0].name}"]
        try:
            finish_inside(job, lines, 2, result_file=str(written[0]))
        except JobCancelled:
            written[0].unlink(missing_ok=True)  # the run it describes is rolled back
            raise

    from evaluation.interrupt import between_batches  # evaluation/ loads when a run starts

    with between_batches(cancel_check(job)):
        evaluate_campaign(
            campaign_of(job),
            subset=options["subset"],
            name=options["name"],
            on_stored=end_with,
            **config,
        )
    return written[0]


# A batch can take milliseconds on a GPU: the job's row is read at most this often.
CANCEL_CHECK_S = 1.0


def cancel_check(job: Job) -> Callable[[], None]:
    """A model pass's check at each batch: JobCancelled once a manager has cancelled the job
    (its row read at most every ``CANCEL_CHECK_S``)."""
    last = [float("-inf")]

    def check() -> None:
        now = time.monotonic()
        if now - last[0] < CANCEL_CHECK_S:
            return
        last[0] = now
        if Job.objects.filter(pk=job.pk, status=Job.Status.CANCELLED).exists():
            raise JobCancelled()

    return check


def write_run_file(folder: Path, run: EvaluationRun) -> Path:
    """The scoring job's result file: the run's accuracy."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"run-{run.pk}.json"
    body = {"run": run.pk, "model": run.model_name, "accuracy": accuracy_rows(run)}
    target.write_text(dumps(body, indent=2) + "\n", encoding="utf-8")
    return target
