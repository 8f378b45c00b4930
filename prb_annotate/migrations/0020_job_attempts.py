import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("prb_annotate", "0019_first_items")]

    operations = [
        migrations.AlterField(
            model_name="job",
            name="campaign",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="jobs",
                to="prb_annotate.campaign",
            ),
        ),
        migrations.AddField(
            model_name="job",
            name="attempts",
            field=models.PositiveSmallIntegerField(default=0),
        ),
    ]
