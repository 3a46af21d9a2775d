from django.apps import AppConfig
from django.db.models.signals import post_migrate


class RoundsConfig(AppConfig):
    name = "rounds"
    verbose_name = "Rounds"

    def ready(self) -> None:
        from trail.record_proofs import RecordProof, record_proof_register

        from .proof_held import held_differences
        from .proof_keys import table_keys_differences
        from .proof_versions import config_versions_differences, config_versions_record

        record_proof_register(RecordProof(
            "config_versions", config_versions_differences,
            "differences between configuration versions and what the audit chain recorded",
            "every configuration version is what the audit chain recorded"))
        record_proof_register(RecordProof(
            "table_keys", table_keys_differences, "tables' keys the audit trail did not issue as they are",
            "every table key is one the audit trail recorded issued"))
        record_proof_register(RecordProof(
            "held", held_differences, "rounds held apart, or not, against their finding and the chain's placements",
            "every round held apart is one found outside the window and never placed"))

        # The shipped configurations are made by a migration, where no chain writer runs:
        # the chain records them as the migrate that made them ends.
        post_migrate.connect(config_versions_record, sender=self, dispatch_uid="rounds.config_versions_record")
