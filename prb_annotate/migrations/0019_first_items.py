from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("prb_annotate", "0018_model_answer_probability"),
    ]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="first_reservation_minutes",
            field=models.PositiveIntegerField(default=10),
        ),
        migrations.AddField(
            model_name="membership",
            name="proven_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
