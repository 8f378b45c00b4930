from pathlib import PurePath

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def base_name(model: str) -> str:
    """A folder's base name; anything else as it was given (as ``run_names.default_name``,
    without looking at the disk: an old row's folder may be gone)."""
    if model.startswith(("/", "~", ".")) or "\\" in model:
        return PurePath(model.replace("\\", "/").rstrip("/")).name or "model"
    return model


def name_runs(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    """Existing runs get their default names, suffixed where two of a campaign would clash."""
    runs = apps.get_model("prb_annotate", "EvaluationRun")
    taken: dict[int, set[str]] = {}
    for run in runs.objects.order_by("created_at", "pk"):
        names = taken.setdefault(run.campaign_id, set())
        wanted = base_name(run.model_name)[:180]
        name, number = wanted, 1
        while name in names:
            number += 1
            name = f"{wanted} (run {number})"
        names.add(name)
        run.name = name
        run.save(update_fields=["name"])


class Migration(migrations.Migration):
    dependencies = [("prb_annotate", "0014_background_jobs")]

    operations = [
        migrations.AddField(
            model_name="evaluationrun",
            name="name",
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.AddField(
            model_name="evaluationrun",
            name="random_weights",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="evaluationrun",
            name="removed_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.RunPython(name_runs, migrations.RunPython.noop),
    ]
