"""The auditors' records: reconciliation reports, variance tests and their findings, game
protection's seat scores and findings. The audit log itself is the trail's (trail.models)."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from books.variance_tests import (
    PERIOD_LABELS,
    SCOPE_LABELS,
    TITLES,
    Period,
    Scope,
    VarianceTest,
)
from game.protection.codes import PROTECTION_CODES
from infra.models import ImmutableModel, money_field
from infra.work import WorkedFinding, case_indexes, priority_known, worked_index


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
    # The figures but each player's and dealer's parts (``report_figures.summary_of``), copied as they
    # are saved: what its page and its staleness read, where the whole is tens of megabytes on a busy day.
    summary = models.JSONField(null=True, blank=True)
    rounds = models.PositiveIntegerField(default=0)
    flags = models.PositiveIntegerField(default=0)  # tables, dealers, players outside their band
    drift = models.PositiveIntegerField(default=0)  # rounds today's engine judges differently
    chain_ok = models.BooleanField(null=True)
    chain_last_hash = models.CharField(max_length=64, blank=True)
    day_last_hash = models.CharField(max_length=64, blank=True)  # the last event within the range
    error = models.TextField(blank=True)
    # Healing (audit.reconciliation.healing): how often it failed, when a failed report is
    # tried again (backoff), and when its tasks were last sent to the workers.
    failures = models.PositiveIntegerField(default=0)
    retry_at = models.DateTimeField(null=True, blank=True)
    driven_at = models.DateTimeField(null=True, blank=True)

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
        indexes = [
            models.Index(fields=["status", "day_from"]),
            models.Index(fields=["retry_at"], condition=models.Q(status="failed"), name="report_retry_idx"),
        ]

    def __str__(self) -> str:
        days = str(self.day_from) if self.day_from == self.day_to else f"{self.day_from}..{self.day_to}"
        return f"reconciliation {days} v{self.version} ({self.status})"


class ReportBand(models.Model):
    """A table's or dealer's total band, in one currency, in a single-day report: of the day, or of its
    month or year to that day.

    Copied out of the report's figures when it completes, so that a chart of a
    group's days reads a few small rows by index instead of every day's whole
    figures (``audit.selectors.report_band_series``). A superseded report's rows
    stay with it; readers take the current report's.
    """

    report = models.ForeignKey(ReconciliationReport, on_delete=models.CASCADE, related_name="bands")
    day = models.DateField()
    scope = models.CharField(max_length=10)  # "tables" or "dealers", as the figures name them
    key = models.CharField(max_length=64)
    currency = models.CharField(max_length=3)
    period = models.CharField(max_length=16)  # audit.selectors.BAND_PERIODS
    band = models.JSONField()

    class Meta:
        indexes = [models.Index(fields=["scope", "key", "currency", "day"], name="report_band_series_idx")]

    def __str__(self) -> str:
        return f"{self.scope} {self.key} {self.currency} {self.period} of {self.day}"


class ReportDealer(models.Model):
    """A dealer's figures in one currency of a finished report, in a row of its own.

    Copied out of the report's figures as they are saved (the figures stay
    whole: they are the report), so that its page reads the few dealers it
    shows, in either of the orders it shows them, by index, instead of
    decoding a busy casino's thousands of dealers at every view
    (``audit.selectors.report_dealers``). Each order is the place the row
    takes in it, as the pure code orders them when the row is written
    (``figures.dealer_order``, ``figures.chart_order``): the order has one
    home, and no database collation can differ from it.
    """

    report = models.ForeignKey(ReconciliationReport, on_delete=models.CASCADE, related_name="dealer_rows")
    dealer = models.CharField(max_length=64)
    currency = models.CharField(max_length=3)
    accuracy_rank = models.IntegerField()  # 0 first: by the money their mismatches put at stake
    chart_rank = models.IntegerField()  # 0 first: outside their band first, then by handle
    per_1000 = models.DecimalField(max_digits=24, decimal_places=4, null=True)  # mismatches per 1,000 hands
    tables = models.JSONField()  # the codes of the tables he dealt at in the report's range
    figures = models.JSONField()  # his ``GroupFigures`` as the report stores them

    class Meta:
        indexes = [models.Index(fields=["report", "chart_rank"], name="report_dealer_chart_idx")]
        constraints = [
            models.UniqueConstraint(fields=["report", "accuracy_rank"], name="report_dealer_accuracy_rank"),
            models.UniqueConstraint(fields=["report", "dealer", "currency"], name="report_dealer_once"),
        ]

    def __str__(self) -> str:
        return f"{self.dealer} {self.currency} in report {self.report_id}"


class ReportFlag(models.Model):
    """A group whose house win fell outside its band in a finished report, in a row of its own.

    Copied out of the report's figures as they are saved, in their order (the figures stay whole:
    they are the report), so that its page reads the few it shows by index instead of decoding a
    busy casino's thousand and more at every view (``audit.selectors.report_flags``).
    """

    report = models.ForeignKey(ReconciliationReport, on_delete=models.CASCADE, related_name="flag_rows")
    rank = models.IntegerField()  # 0 first: its place among the report's flags
    scope = models.CharField(max_length=16)
    key = models.CharField(max_length=64)
    currency = models.CharField(max_length=3, blank=True)
    figures = models.JSONField()  # the ``Flag`` as the report stores it

    class Meta:
        constraints = [models.UniqueConstraint(fields=["report", "rank"], name="report_flag_rank")]

    def __str__(self) -> str:
        return f"{self.scope} {self.key} {self.currency} in report {self.report_id}"


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
    attempts = models.PositiveIntegerField(default=0)  # how many times it was computed
    # Who computes it now: a run claims a part before it computes it, and only
    # the holder of the claim stores its figures. The claim is a lease: its
    # holder renews ``heartbeat_at`` from a thread of its own while it computes,
    # and a claim not renewed for RECONCILIATION_LEASE_SECONDS belonged to a run
    # that died (its worker killed, its connection gone) and may be taken over.
    claim = models.CharField(max_length=64, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    figures = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)  # why its last attempt failed, if it did

    class Meta:
        ordering = ["report", "kind", "key"]
        constraints = [
            models.UniqueConstraint(fields=["report", "kind", "key"], name="reconciliation_part_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.report} {self.kind} {self.key}"


class VarianceTestSetting(models.Model):
    """How the casino runs one regulator's variance test; one row per test, edited by supervisors.

    Changed only through ``variance_test_configure``, which audits each change.
    """

    code = models.CharField(
        max_length=12, unique=True, choices=[(t.value, TITLES[t]) for t in VarianceTest]
    )
    enabled = models.BooleanField(default=False)
    # In percentage points; Kansas' and Ohio's (COMAR's interval needs none).
    threshold = models.DecimalField(max_digits=7, decimal_places=4, null=True, blank=True)
    # Kansas' fixed base hold, in percent; empty: each table's theoretical hold.
    base_hold = models.DecimalField(max_digits=7, decimal_places=4, null=True, blank=True)
    changed_at = models.DateTimeField(null=True, blank=True)
    changed_by_name = models.CharField(max_length=150, blank=True)

    class Meta:
        ordering = ["code"]
        verbose_name = "variance test setting"

    def __str__(self) -> str:
        return TITLES.get(self.code, self.code)


class VarianceFinding(WorkedFinding):
    """A table or dealer that tripped a regulator's variance test, worked by auditors.

    One per test, group, period and last day: a rerun of a day finds the
    finding it raised before and keeps it (``variance_findings_raise``).
    """

    work_name = "variance_finding"

    test = models.CharField(max_length=12, choices=[(t.value, TITLES[t]) for t in VarianceTest])
    scope = models.CharField(max_length=8, choices=[(s.value, SCOPE_LABELS[s]) for s in Scope])
    key = models.CharField(max_length=64)  # the table's code or the dealer's id
    currency = models.CharField(max_length=3)
    period = models.CharField(max_length=16, choices=[(p.value, PERIOD_LABELS[p]) for p in Period])
    day_from = models.DateField()
    day_to = models.DateField()
    report = models.ForeignKey(  # the report that raised it first
        ReconciliationReport, on_delete=models.PROTECT, related_name="variance_findings"
    )
    figures = models.JSONField(default=dict)  # every number behind it, as text
    detail = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-day_to", "test", "scope", "key", "currency", "period"]
        permissions = [
            ("work_variancefinding", "Can acknowledge, resolve, dismiss or reopen variance findings"),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["test", "scope", "key", "currency", "period", "day_to"],
                name="variance_finding_unique",
            ),
            models.CheckConstraint(
                condition=Q(day_from__lte=models.F("day_to")), name="variance_finding_range_order"
            ),
            priority_known("variance_finding_priority_known"),
        ]
        indexes = [
            models.Index(fields=["state", "day_to"]),
            models.Index(
                fields=["state_changed_by"], condition=Q(state_changed_by__isnull=False),
                name="variance_state_changed_by_idx",
            ),
            worked_index("variance_worked_idx"),
            *case_indexes("variance_case"),
        ]

    def __str__(self) -> str:
        days = str(self.day_to) if self.day_from == self.day_to else f"{self.day_from}..{self.day_to}"
        return f"{self.test} {self.scope} {self.key} {self.currency} {self.period} {days}"


# ---- game protection --------------------------------------------------------
# What ``game.protection`` says about a seat's play, and what many seats show together.

ANTES = {"max_digits": 12, "decimal_places": 6}  # an expectation in Antes, not money


class SeatScore(models.Model):
    """A seat of a dealt round scored: each decision's options, what was chosen, what it cost.

    Written once per (round, seat) by ``audit.protection.services.table_day_score``,
    which a rerun of the day finds and keeps. ``decisions`` holds every street
    the seat decided on as ``game.protection.scoring`` gave it: the options'
    values in Antes from what the player could see, the choice, and the
    values again with each piece of knowledge no player may have.
    """

    round = models.ForeignKey("rounds.Round", related_name="+", on_delete=models.PROTECT,
                              db_constraint=False)
    gaming_day = models.DateField()
    table = models.ForeignKey("rounds.Table", on_delete=models.PROTECT, related_name="+", db_index=False)
    dealt_at = models.DateTimeField()
    seat = models.PositiveSmallIntegerField()
    player = models.CharField(max_length=64, blank=True)
    dealer = models.CharField(max_length=64, blank=True)
    companions = models.JSONField(default=list)  # the other players at the table that round
    currency = models.CharField(max_length=3)
    ante = money_field()
    decision = models.CharField(max_length=12)
    scored = models.BooleanField()  # False: a street could not be valued (a pay table without a preflop table)
    ev_lost = models.DecimalField(**ANTES)  # Antes given up against the best option, all streets
    telling = models.PositiveSmallIntegerField(default=0)  # decisions some knowledge would have changed
    favourable_errors = models.PositiveSmallIntegerField(default=0)  # payout mismatches in the player's favour
    errors = models.JSONField(default=list)  # the seat's dealer-error fingerprints
    decisions = models.JSONField()
    # The hand's every street at once against a seen dealer card (``scoring.SeatScore.seen``); {}: none.
    seen = models.JSONField(default=dict)
    # Each companion's steps about this seat's cards (``leak.partner_steps``): {player: [[chose, q, street], …]},
    # read by the pair's part of the collusion test. {}: none (or scored before it was kept).
    partners = models.JSONField(default=dict)
    # The seat's winning Blind and Trips lines as paid, for the table's pay-table test over the window.
    pays = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["round", "seat"], name="seat_score_unique"),
            models.CheckConstraint(condition=Q(ev_lost__gte=0), name="seat_score_ev_lost_not_negative"),
        ]
        indexes = [
            models.Index(fields=["gaming_day", "table"], name="seat_score_day_table_idx"),
            models.Index(fields=["player", "dealt_at"], name="seat_score_player_idx",
                         condition=~Q(player="")),
            models.Index(fields=["dealer", "gaming_day"], name="seat_score_dealer_idx",
                         condition=~Q(dealer="")),
        ]

    def __str__(self) -> str:
        return f"seat {self.seat} of round {self.round_id}"


class LeakTestState(models.Model):
    """Where one player's leak test stood at the end of a gaming day that gave it steps.

    The night of day D reads only D's seats: each test goes on from its row
    that held through D − 1 (``day_from`` < D, ``day_to`` empty or ≥ D) and a
    new row is written for D (``audit.protection.leak_state``). ``state`` is
    ``game.protection.leak.TestState`` as JSON; the player's overall
    hole-carding row also carries how many rounds brought him someone new.
    """

    player = models.CharField(max_length=64)
    code = models.CharField(max_length=40)
    dealer = models.CharField(max_length=64, blank=True)
    companion = models.CharField(max_length=64, blank=True)
    day_from = models.DateField()  # the gaming day whose end it stands at
    day_to = models.DateField(null=True)  # the next day the test read steps on, when a newer row holds
    state = models.JSONField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["player", "code", "dealer", "companion", "day_from"],
                                    name="leak_test_state_unique"),
            models.CheckConstraint(condition=Q(day_to__isnull=True) | Q(day_to__gt=models.F("day_from")),
                                   name="leak_test_state_days_ordered"),
        ]
        indexes = [
            models.Index(fields=["player", "day_to"], name="leak_test_state_held_idx"),
            # A night drops what was written after the last kept day: found by day, not by reading every row.
            models.Index(fields=["day_from"], name="leak_test_state_from_idx"),
            models.Index(fields=["day_to"], name="leak_test_state_to_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.code} of {self.player} from {self.day_from}"


class LeakStateDay(models.Model):
    """A gaming day through which every player's ``LeakTestState`` is kept: the next day's run may go on
    from it. A run of an earlier day drops the days after it, which the next run reads again."""

    gaming_day = models.DateField(unique=True)
    shares = models.JSONField()  # ``LeakSettings.shares`` the states were mixed over
    design = models.PositiveSmallIntegerField(default=1)  # ``leak_state.DESIGN`` the states were made by
    kept_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"leak tests kept through {self.gaming_day}"


class LineCounts(models.Model):
    """A table's day of shown lines, counted for the collusion test's null (``game.protection.lines``):
    the next days' models pool them (``PROTECTION_LINE_DAYS``), so a table that deals few rounds a
    day is described by its play. Written, or written again, whenever the day's seats are scored."""

    table = models.ForeignKey("rounds.Table", on_delete=models.PROTECT, related_name="+")
    gaming_day = models.DateField()
    counts = models.JSONField()  # ``LineModel.counts_json``: the day's own counts, no earlier day's
    counted_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["table", "gaming_day"], name="line_counts_table_day")]

    def __str__(self) -> str:
        return f"lines of table #{self.table_id} on {self.gaming_day}"


class ProtectionFinding(WorkedFinding):
    """What game protection found across rounds, worked by surveillance and auditors.

    ``key`` names what it is about exactly (a player, a dealer, a pair, a
    table's pay line, and the round where the test crossed), so a rerun of
    a day finds the finding it raised before and keeps it.
    """

    work_name = "protection_finding"

    code = models.CharField(max_length=40, choices=[(c, c) for c in PROTECTION_CODES])
    key = models.CharField(max_length=300)
    player = models.CharField(max_length=64, blank=True)
    dealer = models.CharField(max_length=64, blank=True)
    companion = models.CharField(max_length=64, blank=True)
    table = models.CharField(max_length=32, blank=True)  # the table's code
    currency = models.CharField(max_length=3, blank=True)
    day_from = models.DateField()
    day_to = models.DateField()
    # The test's figure, larger the stronger, and where it raises: the leak test's CUSUM,
    # −log10 of the sweetheart test's p-value, the share of wins paid at the other multiple.
    figure = models.DecimalField(max_digits=18, decimal_places=6)
    threshold = models.DecimalField(max_digits=18, decimal_places=6)
    evidence = models.JSONField(default=dict)  # every number behind it, as text
    detail = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-day_to", "code", "key"]
        permissions = [
            ("work_protectionfinding", "Can acknowledge, resolve, dismiss or reopen game-protection findings"),
        ]
        constraints = [
            models.UniqueConstraint(fields=["code", "key"], name="protection_finding_unique"),
            models.CheckConstraint(
                condition=Q(day_from__lte=models.F("day_to")), name="protection_finding_range_order"
            ),
            priority_known("protection_finding_priority_known"),
        ]
        indexes = [
            models.Index(fields=["state", "day_to"], name="protection_state_day_idx"),
            models.Index(fields=["player"], name="protection_player_idx", condition=~Q(player="")),
            models.Index(
                fields=["state_changed_by"], condition=Q(state_changed_by__isnull=False),
                name="protection_changed_by_idx",
            ),
            worked_index("protection_worked_idx"),
            *case_indexes("protection_case"),
        ]

    def __str__(self) -> str:
        return f"{self.code} {self.key}"


class NoticeMark(models.Model):
    """How far the notices have read each kind of finding: the last key told about.

    ``audit.notices`` reads the findings after it, tells who must know, records
    each notice in the finding's trail and moves the mark, in one transaction
    under this row's lock. A migration set each mark at the findings stored
    then: what was found before the notices existed is not mailed.
    """

    source = models.CharField(max_length=40, unique=True)
    last_id = models.PositiveBigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.source} after #{self.last_id}"


class TableCount(ImmutableModel):
    """What the cage counted for a table's gaming day, as a person entered or imported it.

    The service knows what the rules settled and what the dealers paid; only
    the count knows the cash: the drop box, the chips brought to the table
    (fills) and taken from it (credits), and the chip tray at open and close.
    Its win (``count_win``) beside the books' is the regulators' win/loss
    statement. Written once: a correction is a new row that ``replaces`` the
    last, with why (``audit.counts``), so every figure ever entered is kept.
    """

    class Source(models.TextChoices):
        ENTERED = "entered"
        IMPORTED = "imported"

    table = models.ForeignKey("rounds.Table", on_delete=models.PROTECT, related_name="counts", db_index=False)
    gaming_day = models.DateField()
    currency = models.CharField(max_length=3)
    drop = money_field()
    fills = money_field()
    credits = money_field()
    opening_inventory = money_field()
    closing_inventory = money_field()
    source = models.CharField(max_length=8, choices=Source.choices)
    note = models.TextField(blank=True)
    replaces = models.OneToOneField("self", null=True, blank=True, on_delete=models.PROTECT,
                                    related_name="replaced_by")
    entered_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+",
                                   db_index=False)
    entered_by_name = models.CharField(max_length=150)  # a copy: users get renamed
    entered_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-gaming_day", "table", "-id"]
        indexes = [models.Index(fields=["gaming_day", "table"], name="count_day_table_idx")]

    def __str__(self) -> str:
        return f"count of {self.table} on {self.gaming_day}"

    @property
    def count_win(self):
        """The table's win by the count: what it holds and sent away, less what it was given."""
        return self.drop + self.credits + self.closing_inventory - self.fills - self.opening_inventory
