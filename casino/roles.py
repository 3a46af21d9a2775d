"""The casino's roles, as Django groups, and what each may do.

The groups are created by a migration (rounds 0005); their permissions are
synced from this one definition after every ``migrate``, so a new model's view
permission reaches the auditors without anyone remembering to grant it.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.apps import apps
from django.contrib.auth.models import Group, Permission
from django.db import transaction

# Apps whose every model auditors may read.
AUDITED_APPS = ("trail", "rounds", "progressive", "audit")
# Celery's own tables (task results, the beat's schedules): the service's machinery,
# not the casino's records, so only admins, who keep the nightly schedule, see them.
MACHINERY_APPS = ("django_celery_results", "django_celery_beat")


@dataclass(frozen=True, slots=True)
class Role:
    name: str
    description: str
    permissions: tuple[str, ...]  # "app_label.codename"
    views: bool = False  # plus view_* on every model of AUDITED_APPS
    machinery: bool = False  # plus view_* on every model of MACHINERY_APPS
    apps: tuple[str, ...] = ()  # plus every permission of these apps


AUDITOR_WORK = ("rounds.work_finding", "audit.work_variancefinding", "audit.work_protectionfinding")
SUPERVISOR_WORK = (
    "rounds.receive_notices",  # mailed at once: large mismatches, jackpots, suspicions, escalations
    "audit.change_variancetestsetting",
    "audit.add_tablecount",  # the cage's counts, entered or imported (audit.counts)
    "progressive.adjust_meter",
    "rounds.void_round",
    "rounds.place_round",
    "rounds.add_tableconfigversion",
    "progressive.add_poolversion",
)

ADMIN_WORK = ("rounds.add_table", "rounds.change_table", "rounds.add_tableconfig")

ROLES = (
    Role("table", "A gaming table: posts its own rounds through the API and nothing else.", ()),
    Role("auditor", "Reads everything and works findings; changes nothing tables sent.",
         AUDITOR_WORK, views=True),
    Role("supervisor", "An auditor who also adjusts meters, voids rounds and edits configurations "
         "and the variance tests' settings.",
         AUDITOR_WORK + SUPERVISOR_WORK, views=True),
    Role("admin", "A supervisor who also manages people, roles, tables and schedules.",
         AUDITOR_WORK + SUPERVISOR_WORK + ADMIN_WORK, views=True, machinery=True,
         apps=("auth", "django_celery_beat")),
)
ROLE_NAMES = tuple(role.name for role in ROLES)
STAFF_ROLES = frozenset(ROLE_NAMES) - {"table"}


def permissions_of(role: Role) -> list[Permission]:
    """The permissions ``role``'s group holds: what this file declares, as ``migrate`` syncs it."""
    permissions = Permission.objects.select_related("content_type")
    wanted = list(permissions.filter(content_type__app_label__in=role.apps))
    if role.views:
        wanted += permissions.filter(content_type__app_label__in=AUDITED_APPS, codename__startswith="view_")
    if role.machinery:
        wanted += permissions.filter(content_type__app_label__in=MACHINERY_APPS, codename__startswith="view_")
    for spec in role.permissions:
        app_label, codename = spec.split(".", 1)
        wanted += permissions.filter(content_type__app_label=app_label, codename=codename)
    return wanted


def roles_sync(**_kwargs) -> None:
    """Give each role's group exactly its permissions (connected to ``post_migrate``)."""
    with transaction.atomic():
        for role in ROLES:
            group, _ = Group.objects.get_or_create(name=role.name)
            group.permissions.set(permissions_of(role))


def roles_sync_after_the_last_app(sender, **kwargs) -> None:
    """``roles_sync`` once every app's permissions exist (connected to ``post_migrate``).

    post_migrate is sent for each app that has models, in INSTALLED_APPS order, each after its
    own permissions were made: the last such app's signal comes when every one exists. The
    project shell has no models of its own, so it is never that sender itself.
    """
    if sender is [config for config in apps.get_app_configs() if config.models_module is not None][-1]:
        roles_sync(**kwargs)
