"""Tables, their versioned configurations, and every round they sent."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from game.evaluator import CATEGORIES
from game.rules import TABLE_NUMBERS, TableRules, table_rules
from game.vocabulary import BETS, Decision, FindingCode
from infra.moments import moment_shown
from infra.models import ImmutableModel, SecondApproval, money_field, second_approval_constraints
from infra.work import WorkedFinding, case_indexes, priority_known, worked_index
from rounds.video import validate_video_link
from rounds.wire.statuses import RoundStatusChoices

CATEGORY_CHOICES = [(name, name.replace("_", " ")) for name in CATEGORIES]


class TableConfig(models.Model):
    """A named configuration (``se-50kr``); its numbers live in its versions."""

    name = models.SlugField(max_length=40, unique=True)
    description = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class TableConfigVersion(ImmutableModel):
    """The numbers of RULES.md a casino can change, as they stood from ``effective_from``.

    Its numbers are the engine's ``TABLE_NUMBERS``, one column each, in the
    form ``rules.table_rules`` reads (tests/rounds/test_vocabulary.py holds
    the two lists together).
    """

    config = models.ForeignKey(TableConfig, on_delete=models.PROTECT, related_name="versions")
    version = models.PositiveIntegerField()
    effective_from = models.DateTimeField()
    currency = models.CharField(max_length=3)
    minor_unit = models.DecimalField(max_digits=6, decimal_places=4, default=Decimal("0.01"))
    unit = money_field()
    ante_min = money_field()
    ante_max = money_field()
    trips_min = money_field()
    trips_max = money_field()
    blind_pays = models.JSONField()  # {"royal_flush": "500", ...}
    trips_pays = models.JSONField()
    aggregate_limit = money_field(null=True, blank=True)
    dealer_qualifier = models.CharField(max_length=20, choices=CATEGORY_CHOICES, default="pair")
    one_hand_per_player = models.BooleanField(default=True)
    pool = models.ForeignKey(
        "progressive.Pool", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    note = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )

    class Meta:
        ordering = ["config", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["config", "version"], name="config_version_unique"),
            models.CheckConstraint(
                condition=Q(ante_min__gt=0, ante_min__lte=models.F("ante_max")),
                name="config_ante_limits",
            ),
            models.CheckConstraint(
                condition=Q(trips_min__gt=0, trips_min__lte=models.F("trips_max")),
                name="config_trips_limits",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.config.name} v{self.version}"

    def rules(self) -> TableRules:
        return table_rules({name: getattr(self, name) for name in TABLE_NUMBERS})


class ConfigVersionRequest(SecondApproval):
    """A person's new configuration version that changes what is paid, waiting for a second supervisor.

    No ``TableConfigVersion`` exists until a second supervisor approves it, so
    nothing unapproved ever judges a round. The approved version starts at
    the later of the asked ``effective_from`` and the approval, never reaching
    back over rounds judged while the request waited
    (``rounds.services.config_approvals``). As for a meter adjustment: the
    asker cannot approve (a constraint here), a request is decided once and
    what was asked never changes (triggers, migration 0020).
    """

    config = models.ForeignKey(TableConfig, on_delete=models.PROTECT, related_name="version_requests")
    effective_from = models.DateTimeField()  # as asked
    # The checked numbers, TABLE_NUMBERS by name, as the version will store them.
    numbers = models.JSONField()
    pool = models.ForeignKey(
        "progressive.Pool", null=True, blank=True, on_delete=models.PROTECT, related_name="+"
    )
    note = models.CharField(max_length=200, blank=True)
    version = models.OneToOneField(
        TableConfigVersion, null=True, blank=True, on_delete=models.PROTECT, related_name="approval"
    )

    class Meta:
        ordering = ["-requested_at", "-id"]
        indexes = [models.Index(fields=["state", "requested_at"])]
        constraints = second_approval_constraints("config_version", "version")

    def __str__(self) -> str:
        return f"{self.config.name} new version ({self.state})"


class Table(models.Model):
    code = models.CharField(max_length=32, unique=True)
    name = models.CharField(max_length=120, blank=True)
    config = models.ForeignKey(TableConfig, on_delete=models.PROTECT, related_name="tables")
    active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # The casino's video of a moment at this table (rounds.video): on every round and finding.
    video_link = models.CharField(
        max_length=500, blank=True, validators=[validate_video_link],
        help_text="An address with {table}, {seat}, {round}, {dealt_at}, {dealt_at_utc} or {gaming_day} "
        "in braces, e.g. https://vms.example/play?camera={table}&at={dealt_at_utc}",
    )

    class Meta:
        ordering = ["code"]

    def __str__(self) -> str:
        return self.code


class TableKey(models.Model):
    """A table's API key: only its SHA-256 is kept; ``key_id`` finds it without a scan."""

    table = models.ForeignKey(Table, on_delete=models.CASCADE, related_name="keys")
    key_id = models.CharField(max_length=16, unique=True)
    key_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    # A rotated key keeps working until then, so a table can switch without downtime.
    expires_at = models.DateTimeField(null=True, blank=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["table", "-created_at"]

    def __str__(self) -> str:
        return f"{self.table.code} key {self.key_id}"


# Where two tables' racing inserts of one round id meet (rounds.services.ingest retries on it).
ROUND_ID_UNIQUE = "round_unique_per_table"


class RoundKey(models.Model):
    """A stored round's id and its table's round id: unique across every gaming day.

    On PostgreSQL rounds and seats are partitioned by gaming day, and a
    partitioned table can only enforce uniqueness within a day (a unique key
    must include the partition column). This small table, one row per round
    and not partitioned, keeps a table's round id unique for ever, and is
    what findings, kept bodies and meter events refer to (``id`` is the
    round's own id; ``gaming_day`` says which partition holds it).
    """

    id = models.BigIntegerField(primary_key=True)
    # Indexed by round_unique_per_table, which leads with it.
    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="+", db_index=False)
    round_id = models.CharField(max_length=64)
    gaming_day = models.DateField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["table", "round_id"], name=ROUND_ID_UNIQUE),
        ]

    def __str__(self) -> str:
        return f"{self.table_id}/{self.round_id}"


# The rows that refer to a round name it by id; on PostgreSQL their foreign key
# points at ``RoundKey`` (migration 0009), since a partitioned table offers no
# key of the id alone. Seats, partitioned themselves, point at (id, gaming day).
REFERS_TO_ROUND = {"on_delete": models.PROTECT, "db_constraint": False}


class Round(models.Model):
    Status = RoundStatusChoices

    # No foreign key of its own on PostgreSQL: the round's key (migration 0009)
    # already holds its table to its RoundKey's, whose table must exist, and a
    # second check of the same fact would cost every stored round. On SQLite,
    # which has no such key, Django's PROTECT is all there is. Indexed by
    # (table, round_id) in Meta, which leads with it.
    table = models.ForeignKey(
        Table, on_delete=models.PROTECT, related_name="rounds", db_index=False, db_constraint=False
    )
    round_id = models.CharField(max_length=64)
    dealt_at = models.DateTimeField()
    gaming_day = models.DateField()
    dealer = models.CharField(max_length=64, blank=True)
    void = models.BooleanField(default=False)
    board = models.CharField(max_length=10, blank=True)  # "AhKhQhJhTh"
    dealer_cards = models.CharField(max_length=4, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices)
    dealer_hand = models.CharField(max_length=20, choices=CATEGORY_CHOICES, blank=True)
    dealer_qualifies = models.BooleanField(null=True)
    config_version = models.ForeignKey(
        TableConfigVersion, on_delete=models.PROTECT, related_name="rounds"
    )
    pool_version = models.ForeignKey(
        "progressive.PoolVersion", null=True, blank=True, on_delete=models.PROTECT, related_name="rounds"
    )
    meter_before = money_field(null=True, blank=True)
    meter_after = money_field(null=True, blank=True)
    # The record as the service understood it (canonical JSON), and its hash:
    # an identical resubmission has the same hash, a conflicting one does not.
    record = models.JSONField()
    record_hash = models.CharField(max_length=64)
    # The moment the round reached the service, which its clock finding was judged
    # against (game.clock); the ingest sets it, as re-verification reads it.
    received_at = models.DateTimeField(default=timezone.now)
    # A supervisor's void after the fact ("machine malfunctions void all hands"):
    # the table's record stays as sent; the settlement becomes all zero.
    voided_at = models.DateTimeField(null=True, blank=True)
    # Indexed only where set (Meta), so a round that is never voided adds nothing to it.
    voided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.PROTECT, related_name="+",
        db_index=False,
    )
    voided_by_name = models.CharField(max_length=150, blank=True)
    void_reason = models.TextField(blank=True)
    # Dealt outside the window the books accept (rounds.window): kept, judged and flagged, but no
    # report counts it until a supervisor places it (rounds.services.placements).
    held = models.BooleanField(default=False)

    class Meta:
        ordering = ["-dealt_at", "-id"]
        permissions = [
            ("void_round", "Can void a stored round for a malfunction (with a reason)"),
            ("place_round", "Can place a round held apart from the books (dealt outside the window)"),
        ]
        # (table, round id) is unique through RoundKey: see there why not here.
        indexes = [
            models.Index(fields=["table", "round_id"]),
            # dealt_at last: a day's rounds of each table in the order they were dealt, read
            # from the index alone (the tonight page's silent tables, audit.tonight).
            models.Index(fields=["gaming_day", "table", "dealt_at"], name="round_day_table_dealt_idx"),
            models.Index(fields=["dealt_at"]),
            models.Index(fields=["status", "dealt_at"]),
            models.Index(fields=["dealer", "dealt_at"]),
            models.Index(
                fields=["voided_by"], condition=Q(voided_by__isnull=False),
                name="round_voided_by_idx",
            ),
            # The rounds held apart, found without reading the rest (the nightly report's alert).
            models.Index(fields=["received_at"], condition=Q(held=True), name="round_held_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.table.code}/{self.round_id}"


class Seat(models.Model):
    DECISIONS = [(decision.value, decision.value) for decision in Decision]

    # Indexed by seat_unique_per_round, which leads with it.
    round = models.ForeignKey(Round, related_name="seats", db_index=False, **REFERS_TO_ROUND)
    # The round's, so that seats are partitioned by gaming day as rounds are.
    gaming_day = models.DateField()
    seat = models.PositiveSmallIntegerField()
    player = models.CharField(max_length=64, blank=True)
    hole = models.CharField(max_length=4, blank=True)
    ante = money_field()
    blind = money_field()
    trips = money_field()
    play = money_field()
    progressive = money_field()
    progressive_lit = models.BooleanField(default=False)
    decision = models.CharField(max_length=12, choices=DECISIONS)
    hand = models.CharField(max_length=20, choices=CATEGORY_CHOICES, blank=True)
    settled_ante = money_field()
    settled_blind = money_field()
    settled_play = money_field()
    settled_trips = money_field()
    settled_progressive = money_field()
    paid_reported = models.BooleanField(default=False)
    paid_ante = money_field(null=True, blank=True)
    paid_blind = money_field(null=True, blank=True)
    paid_play = money_field(null=True, blank=True)
    paid_trips = money_field(null=True, blank=True)
    paid_progressive = money_field(null=True, blank=True)

    class Meta:
        ordering = ["round", "seat"]
        constraints = [
            # The gaming day adds nothing to the round's id but must be in every
            # unique key of a table partitioned by it.
            models.UniqueConstraint(fields=["round", "gaming_day", "seat"], name="seat_unique_per_round"),
            models.CheckConstraint(condition=Q(seat__gte=1, seat__lte=7), name="seat_number_1_to_7"),
        ]
        indexes = [models.Index(fields=["player"])]

    def __str__(self) -> str:
        return f"{self.round} seat {self.seat}"

    def settled(self) -> dict[str, Decimal]:
        return {bet: getattr(self, f"settled_{bet}") for bet in BETS}

    def paid(self) -> dict[str, Decimal] | None:
        if not self.paid_reported:
            return None
        return {bet: getattr(self, f"paid_{bet}") for bet in BETS}


class Finding(WorkedFinding):
    """What the engine found wrong with a round, worked by auditors (its states: infra.work)."""

    CODES = [(code.value, code.value) for code in FindingCode]

    round = models.ForeignKey(Round, related_name="findings", **REFERS_TO_ROUND)
    code = models.CharField(max_length=40, choices=CODES)
    informational = models.BooleanField(default=False)
    seat = models.PositiveSmallIntegerField(null=True, blank=True)
    bet = models.CharField(max_length=12, blank=True)
    expected = money_field(null=True, blank=True)
    claimed = money_field(null=True, blank=True)
    detail = models.TextField(blank=True)
    # state, state_changed_at/_by/_by_name, state_note: WorkedFinding's.
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["round", "id"]
        constraints = [priority_known("finding_priority_known")]
        permissions = [
            ("work_finding", "Can acknowledge, resolve, dismiss or reopen findings"),
            # Held through a role (casino.roles): who rounds.notices mails what cannot wait.
            ("receive_notices", "Is mailed what cannot wait: large mismatches, jackpots, suspicions, escalations"),
        ]
        indexes = [
            models.Index(fields=["code", "created_at"]),
            models.Index(fields=["state", "created_at"]),
            models.Index(
                fields=["state_changed_by"], condition=Q(state_changed_by__isnull=False),
                name="finding_state_changed_by_idx",
            ),
            worked_index("finding_worked_idx"),
            *case_indexes("finding_case"),
        ]

    def __str__(self) -> str:
        """The finding as people name it: its code, the table and round id, the seat and bet
        (``payout_mismatch on S01/20261204-000137 seat 3 blind``), never a database id."""
        where = [f"seat {self.seat}"] if self.seat else []
        return " ".join([f"{self.code} on {self.round}", *where, *([self.bet] if self.bet else [])])


class Submission(ImmutableModel):
    """Every body an authenticated table sent, exactly as it arrived, accepted or not."""

    class Outcome(models.TextChoices):
        ACCEPTED = "accepted"
        REPLAYED = "replayed"  # identical resubmission: the stored round was returned
        CONFLICT = "conflict"  # same round id, different body: refused, kept
        REJECTED = "rejected"  # unreadable as a round
        FORBIDDEN = "forbidden"  # another table's code

    # Indexed by (table, received_at) in Meta, which leads with it.
    table = models.ForeignKey(
        Table, on_delete=models.PROTECT, related_name="submissions", db_index=False
    )
    received_at = models.DateTimeField(auto_now_add=True)
    request_id = models.CharField(max_length=64, blank=True)
    body = models.BinaryField()
    body_sha256 = models.CharField(max_length=64)
    # A body past the size limit keeps only its first bytes (ROUND_BODY_KEPT_BYTES):
    # how long it was as sent, so that an auditor sees what was cut. Null: kept whole.
    original_size = models.PositiveBigIntegerField(null=True, blank=True)
    claimed_round = models.CharField(max_length=64, blank=True)  # the round id in the body, if readable
    outcome = models.CharField(max_length=10, choices=Outcome.choices)
    http_status = models.PositiveSmallIntegerField()
    errors = models.JSONField(null=True, blank=True)
    round = models.ForeignKey(Round, null=True, blank=True, related_name="submissions", **REFERS_TO_ROUND)

    class Meta:
        ordering = ["-received_at", "-id"]
        indexes = [
            models.Index(fields=["table", "received_at"]),
            models.Index(fields=["outcome", "received_at"]),
        ]

    def __str__(self) -> str:
        return f"{self.table_id} {self.outcome} {moment_shown(self.received_at)}"


class LateRound(ImmutableModel):
    """A round stored after its gaming day ended (a table offline for an evening, a batch sent late).

    Written with the round, in its transaction, only for such rounds, so the
    table stays as small as lateness is rare. A day's report opened before a
    late round of its day arrived does not count it: the report is *stale*
    (``audit.reconciliation.staleness``) until a new version is made, which
    the healing job does. Append-only on PostgreSQL (migration 0023): deleting
    a row would hide that a report undercounts.
    """

    round_pk = models.BigIntegerField()  # the round's id; no key: its month may be archived
    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="+", db_index=False)
    gaming_day = models.DateField()
    received_at = models.DateTimeField()

    class Meta:
        ordering = ["gaming_day", "received_at"]
        indexes = [
            models.Index(fields=["gaming_day", "received_at"], name="late_round_day_idx"),
            # The tonight page's rounds stored late lately, whatever their day: a table backdating
            # rounds by the thousand must not make the first page read them all.
            models.Index(fields=["received_at"], name="late_round_received_idx"),
        ]

    def __str__(self) -> str:
        return f"round #{self.round_pk} of {self.gaming_day}, received {moment_shown(self.received_at)}"


class ArchivedMonth(models.Model):
    """A month of gaming days whose rounds and seats were detached from their tables (archived).

    While a month is here, its tables' default partitions refuse its rows
    (migration 0016), and no partition is made for it: a late round of an
    archived month is refused with its reason, its body kept, instead of
    landing unseen in a default partition where it would block the month's
    return. ``rounds.services.archives`` adds and removes the row; the audit
    chain keeps the history of both.
    """

    month = models.DateField(primary_key=True)  # its first day
    detached_at = models.DateTimeField(default=timezone.now)
    # Filled in by the dump: the rows it holds and the hash of its manifest.
    rounds = models.PositiveBigIntegerField(null=True, blank=True)
    seats = models.PositiveBigIntegerField(null=True, blank=True)
    manifest_sha256 = models.CharField(max_length=64, blank=True)
    dumped_to = models.CharField(max_length=1024, blank=True)

    class Meta:
        ordering = ["month"]

    def __str__(self) -> str:
        return f"{self.month:%Y-%m}"


# A day's sums may run past one wager's digits (``infra.models.MONEY``): eight more before the point.
TOTAL = {"max_digits": 28, "decimal_places": 2}


class DayTotal(models.Model):
    """What one dealer dealt at one table on one gaming day under one configuration version, summed
    as every report and page counts seats (``rounds.selectors.LIVE_SEAT``, ``bet_handled``).

    Written in the transaction of every write that changes what it sums (``rounds.services.day_totals``:
    the ingest, a void, a placement, an archived month), so that a page reads a busy day's money from
    a few hundred rows instead of every seat. Derived, never a record of its own: the nightly report
    recounts it from the seats and raises an alert where the two differ (``day_totals_differences``).
    """

    gaming_day = models.DateField()
    table = models.ForeignKey(Table, on_delete=models.PROTECT, related_name="+", db_index=False)
    dealer = models.CharField(max_length=64, blank=True)
    config_version = models.ForeignKey(TableConfigVersion, on_delete=models.PROTECT, related_name="+",
                                       db_index=False)
    rounds = models.PositiveIntegerField(default=0)  # in the books (void ones too), not held apart
    held = models.PositiveIntegerField(default=0)  # held apart from the books (``rounds.window``)
    hands = models.PositiveIntegerField(default=0)  # live seats
    first_at = models.DateTimeField()  # its first and last round, held ones too
    last_at = models.DateTimeField()
    # Its rounds' lowest and highest key, held ones too: a day's findings are read by the range
    # of its rounds' keys (``rounds.selectors.of_days``), which they carry, not by every round.
    first_pk = models.BigIntegerField()
    last_pk = models.BigIntegerField()
    # Its payout mismatches (never the informational findings), held rounds' too: over and under.
    mismatches = models.PositiveIntegerField(default=0)
    overpaid = models.PositiveIntegerField(default=0)  # paid the player more than due
    underpaid = models.PositiveIntegerField(default=0)
    overpaid_amount = models.DecimalField(**TOTAL, default=Decimal(0))
    underpaid_amount = models.DecimalField(**TOTAL, default=Decimal(0))
    # and by bet (``BETS``, added below): handle_*, result_* (the players' settled results) and
    # paid_* (what they were paid: as reported, else as settled).

    class Meta:
        constraints = [
            # Leads with the day: a day's rows, and a table's days, are read by it.
            models.UniqueConstraint(fields=["gaming_day", "table", "dealer", "config_version"],
                                    name="day_total_unique"),
        ]
        indexes = [
            models.Index(fields=["table", "gaming_day"], name="day_total_table_idx"),
            models.Index(fields=["dealer", "gaming_day"], name="day_total_dealer_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.gaming_day} table {self.table_id} dealer {self.dealer or '-'}"


class WorkTally(models.Model):
    """The findings still to work of one gaming day's rounds under one configuration version, with
    one code: how many mistakes (a seat's findings raised once a bet in one state are one,
    ``rounds.mistakes``) and the money at stake in them (``rounds.selectors.AT_STAKE``, the first
    finding's of each).

    Written in the transaction of every write that raises a finding or moves one
    (``rounds.services.work_tally``), so that the tonight page counts a day's work, and all of
    it before, from a few rows instead of every finding. Derived, never a record of its own: the
    nightly report recounts it from the findings and raises an alert where the two differ.
    """

    gaming_day = models.DateField()
    config_version = models.ForeignKey(TableConfigVersion, on_delete=models.PROTECT, related_name="+",
                                       db_index=False)
    code = models.CharField(max_length=40)
    # Not held to zero or more by the database: a row gone wrong must not stop people working the
    # findings it counts; the nightly recount names it.
    mistakes = models.IntegerField(default=0)
    at_stake = models.DecimalField(**TOTAL, default=Decimal(0))

    class Meta:
        constraints = [
            # Leads with the day: the tonight page reads a day's rows, and the days before one.
            models.UniqueConstraint(fields=["gaming_day", "config_version", "code"], name="work_tally_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.gaming_day} {self.code} (version {self.config_version_id}): {self.mistakes}"


for _bet in BETS:
    for _sum in ("handle", "result", "paid"):
        DayTotal.add_to_class(f"{_sum}_{_bet}", models.DecimalField(**TOTAL, default=Decimal(0)))
