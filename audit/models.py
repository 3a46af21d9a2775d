"""The audit log: append-only, each event chained to the one before by its hash."""

from __future__ import annotations

from django.db import models

from casino.models import ImmutableModel


class ChainHead(models.Model):
    """The single row that holds the chain's tip; its row lock orders the writers."""

    seq = models.PositiveBigIntegerField(default=0)
    hash = models.CharField(max_length=64, default="0" * 64)

    class Meta:
        verbose_name = "audit chain head"


class AuditEvent(ImmutableModel):
    class ActorKind(models.TextChoices):
        USER = "user"
        TABLE = "table"
        SYSTEM = "system"

    seq = models.PositiveBigIntegerField(unique=True)
    at = models.DateTimeField()
    actor_kind = models.CharField(max_length=8, choices=ActorKind.choices)
    actor_id = models.CharField(max_length=64, blank=True)  # user pk or table code
    actor_name = models.CharField(max_length=150, blank=True)  # a copy: users get renamed
    action = models.CharField(max_length=60)
    object_type = models.CharField(max_length=60, blank=True)
    object_id = models.CharField(max_length=64, blank=True)
    object_repr = models.CharField(max_length=200, blank=True)
    before = models.JSONField(null=True, blank=True)
    after = models.JSONField(null=True, blank=True)
    request_id = models.CharField(max_length=64, blank=True)
    prev_hash = models.CharField(max_length=64)
    hash = models.CharField(max_length=64)

    class Meta:
        ordering = ["-seq"]
        # A constraint rather than unique=True: the field's would add an index
        # for LIKE on PostgreSQL, and a hash is only ever looked up whole.
        constraints = [models.UniqueConstraint(fields=["hash"], name="audit_event_hash_unique")]
        indexes = [
            models.Index(fields=["action", "at"]),
            models.Index(fields=["object_type", "object_id"]),
        ]

    def __str__(self) -> str:
        return f"#{self.seq} {self.action} {self.object_repr}"


class ReconciliationReport(models.Model):
    """The reconciliation of a gaming day (or a range of days), one version of it.

    A report is *current* only when ``complete``; at most one per range is
    (a partial unique index says so), so a half-finished or abandoned run is
    never shown as the day's figures. Rerunning a range makes a new version
    that supersedes the old one; the old one is kept.
    """

    class Status(models.TextChoices):
        RUNNING = "running"
        COMPLETE = "complete"
        FAILED = "failed"
        SUPERSEDED = "superseded"

    day_from = models.DateField()
    day_to = models.DateField()
    version = models.PositiveIntegerField()
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.RUNNING)
    # What the figures were computed from: the engine's fingerprint, the
    # configuration and pool versions the rounds were judged by, the clock and
    # the statistical parameters, and a fingerprint of the data itself.
    engine_version = models.CharField(max_length=80)
    inputs = models.JSONField(default=dict)
    requested_by = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    figures = models.JSONField(null=True, blank=True)
    rounds = models.PositiveIntegerField(default=0)
    flags = models.PositiveIntegerField(default=0)  # tables, dealers, players outside their band
    drift = models.PositiveIntegerField(default=0)  # rounds today's engine judges differently
    chain_ok = models.BooleanField(null=True)
    chain_last_hash = models.CharField(max_length=64, blank=True)
    day_last_hash = models.CharField(max_length=64, blank=True)  # the last event within the range
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-day_from", "-day_to", "-version"]
        constraints = [
            models.UniqueConstraint(
                fields=["day_from", "day_to", "version"], name="reconciliation_version_unique"
            ),
            models.UniqueConstraint(
                fields=["day_from", "day_to"],
                condition=models.Q(status="complete"),
                name="reconciliation_one_current",
            ),
            models.CheckConstraint(
                condition=models.Q(day_from__lte=models.F("day_to")), name="reconciliation_range_order"
            ),
        ]
        indexes = [models.Index(fields=["status", "day_from"])]

    def __str__(self) -> str:
        days = str(self.day_from) if self.day_from == self.day_to else f"{self.day_from}..{self.day_to}"
        return f"reconciliation {days} v{self.version} ({self.status})"


class ReconciliationPart(models.Model):
    """One independent piece of a report: a table's rounds, the players, a pool's ledger,
    or a segment of the audit chain.

    Computing a part again gives the same figures and overwrites the row, so a
    redelivered or retried task is harmless.
    """

    class Kind(models.TextChoices):
        TABLE = "table"
        PLAYERS = "players"
        POOL = "pool"
        CHAIN = "chain"

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        COMPLETE = "complete"

    report = models.ForeignKey(ReconciliationReport, on_delete=models.CASCADE, related_name="parts")
    kind = models.CharField(max_length=8, choices=Kind.choices)
    key = models.CharField(max_length=64)  # the table's or pool's code; "first-last" seq of a chain segment
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    figures = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["report", "kind", "key"]
        constraints = [
            models.UniqueConstraint(fields=["report", "kind", "key"], name="reconciliation_part_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.report} {self.kind} {self.key}"
