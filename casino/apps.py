from django.apps import AppConfig
from django.db.models.signals import post_migrate


class CasinoConfig(AppConfig):
    name = "casino"
    verbose_name = "Casino"

    def ready(self) -> None:
        from .decimal_context import decimal_context_widen
        from .metrics import celery_outcomes_count
        from .roles import roles_sync

        decimal_context_widen()
        celery_outcomes_count()

        # casino is the last installed app, so when its post_migrate fires every
        # other app's permissions already exist.
        post_migrate.connect(roles_sync, sender=self, dispatch_uid="casino.roles_sync")
