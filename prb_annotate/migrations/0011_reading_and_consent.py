from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("prb_annotate", "0010_qualification"),
    ]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="reading_check",
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name="campaign",
            name="consent_text",
            field=models.TextField(blank=True),
        ),
        migrations.AddField(
            model_name="membership",
            name="consent_given_at",
            field=models.DateTimeField(blank=True, null=True),
        ),
    ]
