"""The audit log: append-only, each event chained to the one before by its hash."""

from __future__ import annotations

from django.db import models

from infra.models import ImmutableModel


class ChainHead(models.Model):
    """The single row that holds the chain's tip; its row lock orders the writers."""

    seq = models.PositiveBigIntegerField(default=0)
    hash = models.CharField(max_length=64, default="0" * 64)

    class Meta:
        verbose_name = "audit chain head"
        db_table = "audit_chainhead"  # made by the audit app, before the trail had one of its own


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
    # Which process wrote the event, as the database saw its connection: PostgreSQL sets both
    # as the row is inserted, whatever the application sends (trail migration 0002). Outside
    # the hash: the chain is the application's account, these the database's.
    origin = models.CharField(max_length=63, blank=True, default="")  # the connection's application_name
    origin_address = models.GenericIPAddressField(null=True, blank=True)  # none over a local socket

    class Meta:
        db_table = "audit_auditevent"  # made by the audit app, before the trail had one of its own
        ordering = ["-seq"]
        # A constraint rather than unique=True: the field's would add an index
        # for LIKE on PostgreSQL, and a hash is only ever looked up whole.
        constraints = [models.UniqueConstraint(fields=["hash"], name="audit_event_hash_unique")]
        indexes = [
            models.Index(fields=["action", "at"]),
            models.Index(fields=["object_type", "object_id"]),
            # A day's events (the report's count, the export) read without the years before it.
            models.Index(fields=["at"], name="audit_event_at_idx"),
            # People's acts, held to the process that wrote them (trail.proof_origins), without
            # reading the rounds' events around them.
            models.Index(fields=["seq"], condition=models.Q(actor_kind="user"), name="audit_event_people_idx"),
        ]

    def __str__(self) -> str:
        return f"#{self.seq} {self.action} {self.object_repr}"
