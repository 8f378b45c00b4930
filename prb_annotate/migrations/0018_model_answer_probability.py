from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("prb_annotate", "0017_pay"),
    ]

    operations = [
        migrations.AddField(
            model_name="modelanswer",
            name="probability",
            field=models.FloatField(null=True),
        ),
    ]
