from django.apps import AppConfig
from django.conf import settings
from django.contrib.admin import apps as admin_apps
from django.db.models.signals import post_migrate


class CasinoAdminConfig(admin_apps.AdminConfig):
    # Installed by its path, in django.contrib.admin's place; "casino" itself is CasinoConfig.
    default = False
    # Its site is read once every model is loaded: the site's first page reads them.
    default_site = "casino.admin_site.CasinoAdminSite"


class CasinoConfig(AppConfig):
    name = "casino"
    verbose_name = "Casino"

    def ready(self) -> None:
        from infra.metrics import celery_outcomes_count

        from . import passkeys  # noqa: F401 - registers its deploy check

        from .decimal_context import decimal_context_widen
        from .people import people_baseline_once, people_watched
        from .roles import roles_sync_after_the_last_app

        from trail.record_proofs import RecordProof, record_proof_register

        from .proof_people import people_differences
        from .proof_sign_in import sign_in_differences

        record_proof_register(RecordProof(
            "people", people_differences, "people or roles not what the audit trail and casino/roles.py say",
            "every person is what the audit trail last recorded, every role what casino/roles.py gives"))
        record_proof_register(RecordProof(
            "sign_in", sign_in_differences, "tokens or authenticators the audit trail did not record",
            "every token and authenticator is one its person made"))
        decimal_context_widen()
        celery_outcomes_count()
        post_migrate.connect(roles_sync_after_the_last_app, dispatch_uid="casino.roles_sync")
        post_migrate.connect(people_baseline_once, dispatch_uid="casino.people_baseline")
        people_watched()
        if settings.DIRECTORY_URI:
            from .directory import role_groups_checked

            role_groups_checked()
