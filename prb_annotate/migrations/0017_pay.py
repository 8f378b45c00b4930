from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("prb_annotate", "0016_answer_drafts"),
    ]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="pay_amount",
            field=models.DecimalField(blank=True, decimal_places=2, max_digits=7, null=True),
        ),
        migrations.AddField(
            model_name="campaign",
            name="pay_currency",
            field=models.CharField(blank=True, max_length=3),
        ),
        migrations.AddField(
            model_name="campaign",
            name="pay_per",
            field=models.CharField(blank=True, max_length=5),
        ),
    ]
