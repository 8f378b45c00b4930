import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("prb_annotate", "0015_run_names"),
    ]

    operations = [
        migrations.CreateModel(
            name="AnswerDraft",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("values", models.JSONField(default=dict)),
                ("saved_at", models.DateTimeField(auto_now=True)),
                (
                    "assignment",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="draft",
                        to="prb_annotate.assignment",
                    ),
                ),
            ],
        ),
    ]
