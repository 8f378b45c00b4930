"""An account's chosen interface language (one row per account that chose one), and the
validators of a campaign's language fields."""

from django.conf import settings
from django.db import models

# The validators of Campaign.language and Campaign.translations, named here for models.py.
from prb_annotate.languages.codes import valid_code  # noqa: F401
from prb_annotate.languages.texts import valid_texts  # noqa: F401


class LanguageChoice(models.Model):
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="language_choice"
    )
    # One of settings.LANGUAGES' codes.
    language = models.CharField(max_length=10)

    def __str__(self) -> str:
        return f"{self.user_id}: {self.language}"
