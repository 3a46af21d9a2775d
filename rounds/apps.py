from django.apps import AppConfig
from django.db.models.signals import post_migrate


class RoundsConfig(AppConfig):
    name = "rounds"
    verbose_name = "Rounds"

    def ready(self) -> None:
        from .proof_versions import config_versions_record

        # The shipped configurations are made by a migration, where no chain writer runs:
        # the chain records them as the migrate that made them ends.
        post_migrate.connect(config_versions_record, sender=self, dispatch_uid="rounds.config_versions_record")
