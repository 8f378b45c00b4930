# The sign-up invite beside the study link, each of them can be turned off.

import secrets

from django.db import migrations, models

import prb_annotate.models


def give_each_campaign_a_signup_token(apps, schema_editor):
    Campaign = apps.get_model("prb_annotate", "Campaign")
    for campaign in Campaign.objects.filter(signup_token__isnull=True).only("pk"):
        campaign.signup_token = secrets.token_urlsafe(32)
        campaign.save(update_fields=["signup_token"])


class Migration(migrations.Migration):

    dependencies = [
        ("prb_annotate", "0008_security_hardening"),
    ]

    operations = [
        migrations.AddField(
            model_name="campaign",
            name="study_link_enabled",
            field=models.BooleanField(default=True),
        ),
        migrations.AddField(
            model_name="campaign",
            name="signup_link_enabled",
            field=models.BooleanField(default=True),
        ),
        # Nullable first: one token per existing row, then unique and required.
        migrations.AddField(
            model_name="campaign",
            name="signup_token",
            field=models.CharField(max_length=64, null=True),
        ),
        migrations.RunPython(give_each_campaign_a_signup_token, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="campaign",
            name="signup_token",
            field=models.CharField(
                default=prb_annotate.models.new_invite_token, max_length=64, unique=True
            ),
        ),
    ]
