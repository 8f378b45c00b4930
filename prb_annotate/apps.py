from django.apps import AppConfig


class PrbAnnotateConfig(AppConfig):
    name = "prb_annotate"
    verbose_name = "prb-annotate"
    default_auto_field = "django.db.models.BigAutoField"
