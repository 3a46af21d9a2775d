"""System checks of the audit trail, run by ``manage.py check --deploy``."""

from __future__ import annotations

from django.conf import settings
from django.core import checks
from django.db import DatabaseError, connection

from .protections import protections_missing


@checks.register(checks.Tags.security, deploy=True)
def protections_in_force(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """A dropped or disabled trigger is an error before the service is deployed on the database."""
    if connection.vendor != "postgresql":
        return []
    try:
        missing = protections_missing(connection)
    except DatabaseError as error:
        return [checks.Warning(f"could not read the database's triggers: {error}", id="audit.W001")]
    return [
        checks.Error(str(item), hint="run `manage.py migrate`, or restore the trigger the migration makes",
                     id="audit.E001")
        for item in missing
    ]


@checks.register(checks.Tags.security, deploy=True)
def anchor_signed(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """An anchor written without a key proves nothing to whoever could rewrite both the chain and it."""
    if not (getattr(settings, "AUDIT_ANCHOR_PATH", "") or getattr(settings, "AUDIT_ANCHOR_URL", "")):
        return [checks.Warning("no AUDIT_ANCHOR_PATH or AUDIT_ANCHOR_URL: the chain's head is kept nowhere "
                               "outside the database, and a chain cut at its end or rehashed goes unseen",
                               id="audit.W002")]
    if getattr(settings, "AUDIT_ANCHOR_KEY", ""):
        return []
    return [checks.Error("AUDIT_ANCHOR_PATH or AUDIT_ANCHOR_URL is set without AUDIT_ANCHOR_KEY",
                         hint="anchors are refused unsigned in production", id="audit.E002")]
