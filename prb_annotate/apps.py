from django.apps import AppConfig


class PrbAnnotateConfig(AppConfig):
    name = "prb_annotate"
    verbose_name = "prb-annotate"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Connects the login signal that brings an account's chosen language into its session.
        from prb_annotate.languages import choices  # noqa: F401
