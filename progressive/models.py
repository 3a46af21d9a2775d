"""Progressive pools: versioned configuration, the meter, and its ledger.

The meter on ``Pool`` is a cache of its ledger: every change is a
``MeterEvent`` whose ``delta`` moves it, written in the same transaction under
the pool's row lock, so ``Pool.meter == sum(delta)`` always.
"""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q

from game.rules import PayLine, PoolRules, pay_line
from game.vocabulary import MeterEventKind
from infra.models import ZERO, ImmutableModel, SecondApproval, money_field, second_approval_constraints


class Pool(models.Model):
    code = models.SlugField(max_length=40, unique=True)
    name = models.CharField(max_length=120, blank=True)
    currency = models.CharField(max_length=3)
    minor_unit = models.DecimalField(max_digits=6, decimal_places=4, default=Decimal("0.01"))
    meter = money_field(default=ZERO)
    overflow = money_field(default=ZERO)
    reserve = money_field(default=ZERO)
    last_event_seq = models.PositiveBigIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["code"]
        permissions = [("adjust_meter", "Can adjust a progressive meter (with a reason)")]
        constraints = [
            models.CheckConstraint(condition=Q(meter__gte=0), name="pool_meter_not_negative"),
            models.CheckConstraint(condition=Q(overflow__gte=0), name="pool_overflow_not_negative"),
            models.CheckConstraint(condition=Q(reserve__gte=0), name="pool_reserve_not_negative"),
        ]

    def __str__(self) -> str:
        return self.code


class PoolVersion(ImmutableModel):
    """One version of a pool's rules; a round is judged by the version in force when dealt."""

    pool = models.ForeignKey(Pool, on_delete=models.PROTECT, related_name="versions")
    version = models.PositiveIntegerField()
    effective_from = models.DateTimeField()
    wager = money_field()
    rate = models.DecimalField(max_digits=6, decimal_places=4)
    reseed = money_field()
    ceiling = money_field(null=True, blank=True)
    reserve_rate = models.DecimalField(max_digits=6, decimal_places=4, default=Decimal("0"))
    # [{"category": "royal_flush", "qualifier": "hole", "kind": "percent", "amount": "100"}, ...]
    lines = models.JSONField()
    # How far a table's displayed meter may stray from the service's before the
    # reading is flagged (a reading taken while a round is in flight lags it).
    reading_tolerance = money_field(default=ZERO)
    note = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        ordering = ["pool", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["pool", "version"], name="pool_version_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.pool.code} v{self.version}"

    def rules(self) -> PoolRules:
        return PoolRules(
            currency=self.pool.currency,
            minor_unit=self.pool.minor_unit.normalize(),
            wager=self.wager,
            rate=self.rate,
            reseed=self.reseed,
            lines=self.pay_lines(),
            ceiling=self.ceiling,
            reserve_rate=self.reserve_rate,
        )

    def pay_lines(self) -> tuple[PayLine, ...]:
        return tuple(pay_line(spec) for spec in self.lines)


class MeterEvent(ImmutableModel):
    # Every kind, a round's and a person's: game.vocabulary.MeterEventKind.
    Kind = models.TextChoices("Kind", [(kind.name, kind.value) for kind in MeterEventKind])

    # Indexed by meter_event_seq_unique, which leads with it.
    pool = models.ForeignKey(Pool, on_delete=models.PROTECT, related_name="events", db_index=False)
    seq = models.PositiveBigIntegerField()  # 1, 2, 3 … within the pool
    kind = models.CharField(max_length=20, choices=Kind.choices)
    amount = money_field()  # as the contract shows it: an award is positive
    delta = money_field()  # the signed change to the meter
    overflow_delta = money_field(default=ZERO)
    reserve_delta = money_field(default=ZERO)
    meter_after = money_field()
    overflow_after = money_field(default=ZERO)
    reserve_after = money_field(default=ZERO)
    round = models.ForeignKey(
        "rounds.Round", null=True, blank=True, on_delete=models.PROTECT, related_name="meter_events",
        db_constraint=False,  # on PostgreSQL it points at rounds.RoundKey: see there
    )
    seat = models.PositiveSmallIntegerField(null=True, blank=True)
    # Indexed only where set (Meta): a round's contribution has no actor.
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        db_index=False,
    )
    actor_name = models.CharField(max_length=150, blank=True)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["pool", "seq"]
        constraints = [
            models.UniqueConstraint(fields=["pool", "seq"], name="meter_event_seq_unique"),
            models.CheckConstraint(condition=Q(meter_after__gte=0), name="meter_event_not_negative"),
        ]
        indexes = [
            # Not led by the pool: the ledger's checks (progressive 0011, 0015) must find only
            # meter_event_seq_unique to probe, or a planner knowing nothing of the table's size
            # may take this one and read every event of the pool for each one stored.
            models.Index(fields=["kind", "pool", "created_at"], name="meter_event_kind_pool_idx"),
            models.Index(
                fields=["actor"], condition=Q(actor__isnull=False), name="meter_event_actor_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.pool_id}#{self.seq} {self.kind} {self.amount}"


class MeterReading(ImmutableModel):
    """What a meter display showed at a moment, beside what the service's meter held.

    ``service_meter`` is the pool's meter when the reading arrived (the ledger
    point is ``meter_seq``); ``flagged`` when the two differ by more than the
    pool version's tolerance.
    """

    pool = models.ForeignKey(Pool, on_delete=models.PROTECT, related_name="readings")
    pool_version = models.ForeignKey(PoolVersion, on_delete=models.PROTECT, related_name="+")
    table = models.ForeignKey(
        "rounds.Table", null=True, blank=True, on_delete=models.PROTECT, related_name="meter_readings"
    )
    reporter = models.CharField(max_length=150)  # the table code or the person's username
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    reported_at = models.DateTimeField()  # when the display was read, as the reporter says
    received_at = models.DateTimeField(auto_now_add=True)
    displayed = money_field()
    service_meter = money_field()
    meter_seq = models.PositiveBigIntegerField()  # the last ledger event the service meter includes
    difference = money_field()  # displayed - service_meter
    tolerance = money_field()
    flagged = models.BooleanField()
    request_id = models.CharField(max_length=64, blank=True)

    class Meta:
        ordering = ["-received_at", "-id"]
        indexes = [
            models.Index(fields=["pool", "received_at"]),
            models.Index(fields=["flagged", "received_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.pool_id} reading {self.displayed} by {self.reporter}"


class MeterAdjustmentRequest(SecondApproval):
    """An adjustment above ``METER_SECOND_APPROVAL_ABOVE``, waiting for a second supervisor.

    Dual control: the supervisor who asks cannot be the one who approves (a
    constraint here, beside the service's check; the asker may withdraw the
    request, which is a rejection), and only an approval moves
    the meter, through the ledger, with the event it wrote kept here. A request
    is decided once (a trigger refuses a second decision and any change to
    what was asked; migration 0012).
    """

    pool = models.ForeignKey(Pool, on_delete=models.PROTECT, related_name="adjustment_requests")
    delta = money_field()
    reason = models.TextField()
    event = models.OneToOneField(
        MeterEvent, null=True, blank=True, on_delete=models.PROTECT, related_name="approval"
    )

    class Meta:
        ordering = ["-requested_at", "-id"]
        indexes = [models.Index(fields=["state", "requested_at"])]
        constraints = second_approval_constraints("adjustment", "event")

    def __str__(self) -> str:
        return f"{self.pool_id} adjustment {self.delta} ({self.state})"


class PoolVersionRequest(SecondApproval):
    """A person's pool version that changes what a round's Progressive is settled by, waiting for a
    second supervisor.

    As a configuration's (``rounds.ConfigVersionRequest``): no ``PoolVersion``
    exists until a second supervisor approves it, so nothing unapproved
    settles a round; the approved version starts at the later of the asked
    ``effective_from`` and the approval, never reaching back over rounds
    judged while it waited. The asker cannot approve (a constraint here); a
    request is decided once and what was asked never changes (triggers,
    migration 0014).
    """

    pool = models.ForeignKey(Pool, on_delete=models.PROTECT, related_name="version_requests")
    effective_from = models.DateTimeField()  # as asked
    # The checked numbers by name (wager, rate, reseed, ceiling, reserve_rate,
    # reading_tolerance, lines), as the version will store them.
    numbers = models.JSONField()
    note = models.CharField(max_length=200, blank=True)
    version = models.OneToOneField(
        PoolVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="approval"
    )

    class Meta:
        ordering = ["-requested_at", "-id"]
        indexes = [models.Index(fields=["state", "requested_at"])]
        constraints = second_approval_constraints("pool_version", "version")

    def __str__(self) -> str:
        return f"{self.pool.code} new version ({self.state})"
