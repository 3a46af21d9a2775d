from django.apps import AppConfig, apps
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
        from .decimal_context import decimal_context_widen
        from infra.metrics import celery_outcomes_count

        decimal_context_widen()
        celery_outcomes_count()
        post_migrate.connect(_roles_sync_once_all_migrated, dispatch_uid="casino.roles_sync")


def _roles_sync_once_all_migrated(sender, **kwargs) -> None:
    # post_migrate is sent for each app that has models, in INSTALLED_APPS order, each after
    # its own permissions were made: the last such app's signal comes when every one exists.
    # The project shell has no models of its own, so it cannot be that sender itself.
    from .roles import roles_sync

    if sender is [config for config in apps.get_app_configs() if config.models_module is not None][-1]:
        roles_sync(**kwargs)
