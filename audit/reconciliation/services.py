"""Writes of reconciliation reports. The Celery tasks and ``manage.py reconcile`` call only these.

A report is opened with one part per table that dealt in the range, one for
the players, one per pool and one per segment of the audit chain
(``report_start``). Each part is computed on its own and written to its own
row once (``report_part_compute``), so a task run twice changes nothing. When every part is in, ``report_finish`` merges them and,
under a lock on the range's reports, makes the report current and supersedes
older versions. Until then the report is ``running`` and nobody reads it.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from datetime import date, datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, IntegrityError, connection, transaction
from django.db.models import F, Q
from django.db.models.functions import Now
from django.utils import timezone

from audit.models import ReconciliationPart, ReconciliationReport
from books.figures import (
    SCOPE_OF,
    ByCurrency,
    Sums,
    derive,
    derive_by_currency,
    flags_of,
    progressive_books,
    scoring_of,
)
from books.report_figures import (
    BodiesChecked, Cell, ChainFigures, ChainHeadFigures, Held, PlayersPart, PoolFigures, RecordsChecked,
    ReportFigures, Reverification, TablePart, TotalsChecked, VarianceTests, figures_json, summary_of,
)
from infra import locks, replicas
from progressive.models import Pool, PoolVersion
from rounds.models import Table, TableConfigVersion
from rounds.proof import bodies_differences
from rounds.selectors import rounds_in_range
from rounds.services.day_totals import day_totals_differences
from rounds.services.work_tally import work_tally_differences
from trail.record_proofs import record_proofs
from trail.services import SYSTEM, audit_record

from . import selectors
from .bands import report_bands_write
from .chain import chain_head_seq, chain_merge, chain_segment_verify, chain_segments_of_night
from .config import ReconciliationSettings, day_to_reconcile, reconciliation_settings
from .dual_control import dual_control_alerts, dual_control_section
from .lease import Heartbeat, lease_expired
from .pool_ledger import pool_ledger_figures, pool_mark_reported
from .report_rows import report_dealers_write, report_flags_write
from .reverify import EXAMPLES_KEPT, cached, reverify
from .to_date import periods_to_date, variance_trips_of_day
from .variance_selectors import variance_test_settings
from .variance_services import variance_findings_raise

logger = logging.getLogger("audit.reconciliation")

Status = ReconciliationReport.Status
Kind = ReconciliationPart.Kind
Progress = Callable[[str], None]


class ReportNotReady(RuntimeError):
    """A report cannot be merged while a part is missing."""


# ---- opening a report ---------------------------------------------------------------


def report_start(
    *, day_from: date, day_to: date | None = None, requested_by: str = ""
) -> ReconciliationReport:
    """Open a report for the range, or resume the unfinished one computed from the same inputs.

    Resuming keeps the parts already computed; a run whose inputs differ
    (new rounds, another engine) starts a new version instead.
    """
    day_to = day_to or day_from
    if day_to < day_from:
        raise ValueError("a report's range must not end before it starts")
    clock = reconciliation_settings()
    inputs = selectors.report_inputs(day_from=day_from, day_to=day_to, clock=clock)
    for attempt in range(3):
        try:
            with transaction.atomic():
                return _open(day_from, day_to, inputs, requested_by)
        except IntegrityError:
            # Another run took the same version number between our read and our
            # insert; the next pass sees it (and resumes it when inputs agree).
            if attempt == 2:
                raise
    raise AssertionError("unreachable")


def _open(day_from: date, day_to: date, inputs: dict, requested_by: str) -> ReconciliationReport:
    reports = list(
        locks.rows_locked(ReconciliationReport.objects.filter(day_from=day_from, day_to=day_to))
    )
    reports.sort(key=lambda r: -r.version)
    latest = reports[0] if reports else None
    # A failed version is tried again by resuming it or by the new version: never both.
    for failed in reports:
        if failed.retry_at is not None:
            failed.retry_at = None
            failed.save(update_fields=["retry_at"])
    if latest is not None and latest.status in (Status.RUNNING, Status.FAILED) and latest.inputs == inputs:
        if latest.status == Status.FAILED:
            # Its last failure's reason stays beside ``failures``, for whoever asks why it took long.
            latest.status = Status.RUNNING
            latest.save(update_fields=["status"])
        logger.info("resuming %s", latest)
        return latest
    report = ReconciliationReport.objects.create(
        day_from=day_from, day_to=day_to, version=(latest.version + 1) if latest else 1,
        status=Status.RUNNING, engine_version=inputs["engine_version"], inputs=inputs,
        requested_by=requested_by[:150],
    )
    parts = [
        ReconciliationPart(report=report, kind=Kind.CHAIN, key=f"{first}-{last}")
        for first, last in chain_segments_of_night(head_seq=chain_head_seq(), day=day_to)
    ]
    parts += [
        ReconciliationPart(report=report, kind=Kind.TABLE, key=table.code)
        for table in selectors.tables_in_range(day_from=day_from, day_to=day_to)
    ]
    parts.append(ReconciliationPart(report=report, kind=Kind.PLAYERS, key="players"))
    parts += [ReconciliationPart(report=report, kind=Kind.POOL, key=pool.code) for pool in selectors.pools_for_report()]
    ReconciliationPart.objects.bulk_create(parts)
    logger.info("opened %s with %d parts", report, len(parts))
    return report


def report_parts_to_compute(*, report: ReconciliationReport) -> list[int]:
    """The parts not yet complete, long ones first so that they run beside the rest:
    the chain's segments, the players (one big query), the tables, the pools."""
    parts = report.parts.exclude(status=ReconciliationPart.Status.COMPLETE)
    order = {Kind.CHAIN: 0, Kind.PLAYERS: 1, Kind.TABLE: 2, Kind.POOL: 3}
    rows = sorted(parts.values_list("pk", "kind", "key"), key=lambda r: (order[r[1]], r[2]))
    return [pk for pk, _, _ in rows]


# ---- computing a part -------------------------------------------------------------------


def report_part_claim(*, part_id: int) -> str | None:
    """Claim a part for this run: a token if it is ours to compute now, None if it is complete
    or another run holds a live claim on it.

    One UPDATE decides, so two runs (two workers, two machines) that reach a
    part at once never both compute it; a claim whose lease was not renewed
    for ``RECONCILIATION_LEASE_SECONDS`` belonged to a run that died, and is taken over.
    """
    token = uuid.uuid4().hex
    Part = ReconciliationPart
    # Every condition on the part's own row (the report's as a list of ids): PostgreSQL
    # checks a row's conditions again once a racing claim's lock is gone, but not
    # those of a joined row, so two claims could both pass a join.
    open_reports = ReconciliationReport.objects.exclude(status__in=(Status.COMPLETE, Status.SUPERSEDED))
    claimed = Part.objects.filter(pk=part_id, report__in=open_reports.values("pk")).filter(
        Q(status=Part.Status.PENDING) | Q(status=Part.Status.RUNNING, heartbeat_at__lt=lease_expired())
    ).update(
        status=Part.Status.RUNNING, claim=token, started_at=Now(), heartbeat_at=Now(),
        attempts=F("attempts") + 1,
    )
    return token if claimed else None


def report_part_compute(*, part_id: int, progress: Progress | None = None) -> ReconciliationPart:
    """Compute one part and store its figures, unless it is complete or another run computes it.

    Again and again gives the same row: a redelivered or duplicated task finds
    the part complete (or claimed) and returns it as it is.
    """
    token = report_part_claim(part_id=part_id)
    part = ReconciliationPart.objects.select_related("report").get(pk=part_id)
    if token is None:
        return part
    try:
        with Heartbeat(part.pk, token):
            figures = _part_figures(part, progress)
        # Only the claim's holder stores: a run that was taken over (it was too
        # slow, not dead) leaves the figures to the run that took its place.
        ReconciliationPart.objects.filter(pk=part.pk, claim=token).update(
            figures=figures, status=ReconciliationPart.Status.COMPLETE, finished_at=timezone.now(), error=""
        )
    except BaseException as error:
        # A part that failed (rather than died) gives its claim back at once, with its
        # reason: a retry or a rerun need not wait for the lease to run out.
        _give_back(part.pk, token, f"{type(error).__name__}: {error}")
        raise
    part.refresh_from_db()
    return part


def _give_back(part_id: int, token: str, reason: str) -> None:
    """The claim returned, on a fresh connection if the error was the connection's own."""
    for attempt in range(2):
        try:
            ReconciliationPart.objects.filter(pk=part_id, claim=token).update(
                status=ReconciliationPart.Status.PENDING, claim="", error=reason[:4000]
            )
            return
        except DatabaseError:
            if attempt or connection.in_atomic_block:
                return  # the lease runs out instead
            connection.close()


def report_retry_claim(*, report_id: int) -> bool:
    """Take a failed report's due retry for this run: one UPDATE decides, so watches that ran
    while the workers were busy send it once, not once each."""
    return bool(ReconciliationReport.objects.filter(
        pk=report_id, status=Status.FAILED, retry_at__lte=Now()).update(retry_at=None))


def report_of_part(*, part_id: int) -> int:
    return ReconciliationPart.objects.values_list("report_id", flat=True).get(pk=part_id)


def report_parts_all_in(*, report_id: int) -> bool:
    """Every part of the report is computed: its merge may run."""
    return not ReconciliationPart.objects.filter(report_id=report_id).exclude(
        status=ReconciliationPart.Status.COMPLETE).exists()


def _part_figures(part: ReconciliationPart, progress: Progress | None) -> dict:
    report = part.report
    clock = reconciliation_settings()
    if part.kind == Kind.CHAIN:
        # The chain is proved on the primary, up to the head the report started from.
        first, last = (int(n) for n in part.key.split("-"))
        return chain_segment_verify(first=first, last=last)
    # Rounds, seats and ledgers may be read on a replica, once it has replayed all
    # the primary holds now (what the report's inputs were taken from), or on the primary.
    return replicas.read(lambda using: _read_part(part, report, clock, progress, using), fresh=True)


def _read_part(part, report, clock: ReconciliationSettings, progress: Progress | None, using: str) -> dict:
    if part.kind == Kind.TABLE:
        return _table_part(report, part.key, clock, progress, using)
    if part.kind == Kind.POOL:
        return _pool_part(report, part.key, clock, using)
    players = selectors.players_sums(day_from=report.day_from, day_to=report.day_to, clock=clock, using=using)
    return figures_json(PlayersPart(players={player: sums.to_json() for player, sums in players.items()}))


def _table_part(report, code: str, clock: ReconciliationSettings, progress: Progress | None, using: str) -> dict:
    table = Table.objects.get(code=code)
    span = {"table_id": table.pk, "day_from": report.day_from, "day_to": report.day_to, "using": using}
    cells = selectors.table_cells(**span, clock=clock)
    checked = reverify(
        selectors.stored_rounds(**span),
        table_rules=cached(lambda pk: TableConfigVersion.objects.get(pk=pk).rules()),
        pool_rules=cached(lambda pk: PoolVersion.objects.select_related("pool").get(pk=pk).rules()),
        table_code=code,
        progress=(lambda n: progress(f"{code}: {n} rounds judged again")) if progress else None,
        clock_tolerance=settings.CLOCK_TOLERANCE,
    )
    return figures_json(TablePart(
        table=code,
        cells=[Cell(dealer=dealer, shift=shift, sums=sums.to_json())
               for (dealer, shift, _), sums in sorted(cells.items())],
        reverification=checked.to_json(),
    ))


def _pool_part(report, code: str, clock: ReconciliationSettings, using: str) -> dict:
    start, end = selectors.window_of(day_from=report.day_from, day_to=report.day_to, clock=clock)
    reported_closing, mark = pool_mark_reported(pool_code=code, day=report.day_from - timedelta(days=1))
    return figures_json(pool_ledger_figures(
        pool=Pool.objects.get(code=code), day_from=report.day_from, day_to=report.day_to,
        start=start, end=end, reported_closing=reported_closing, mark=mark, using=using,
    ))


# ---- finishing a report ---------------------------------------------------------------------


def report_finish(*, report_id: int) -> ReconciliationReport:
    """Merge the parts and make the report current, superseding older versions of the range."""
    with transaction.atomic():
        report = ReconciliationReport.objects.get(pk=report_id)
        # Every report of the range, locked in one order: two finishing runs take turns.
        reports = list(
            locks.rows_locked(
                ReconciliationReport.objects.filter(day_from=report.day_from, day_to=report.day_to))
        )
        report = next(r for r in reports if r.pk == report_id)
        if report.status != Status.RUNNING:
            return report
        states = list(report.parts.values_list("kind", "key", "status"))
        missing = [f"{kind} {key}" for kind, key, status in states if status != ReconciliationPart.Status.COMPLETE]
        if missing:
            raise ReportNotReady(f"{report} is missing {', '.join(missing)}")
        figures = report_merge(report=report)
        clock = reconciliation_settings()
        start, end = selectors.window_of(day_from=report.day_from, day_to=report.day_to, clock=clock)
        figures = figures.model_copy(update={"chain": figures.chain.model_copy(update={
            **selectors.audit_chain_of_window(start=start, end=end),
            "head_at_report": ChainHeadFigures(**selectors.audit_chain_head()),
        })})

        newer = [r for r in reports if r.version > report.version and r.status == Status.COMPLETE]
        for older in reports:
            if older.version < report.version and older.status in (Status.COMPLETE, Status.RUNNING) and not newer:
                older.status = Status.SUPERSEDED
                older.save(update_fields=["status"])
        report.status = Status.SUPERSEDED if newer else Status.COMPLETE
        report.figures = figures_json(figures)
        report.summary = summary_of(report.figures)
        report.inputs = report.inputs | {
            "config_versions": figures.config_versions, "pool_versions": figures.pool_versions,
        }
        report.finished_at = timezone.now()
        report.rounds = sum(block.rounds for block in figures.casino.values())
        report.flags = len(figures.flags)
        report.drift = figures.reverification.drift
        report.chain_ok = figures.chain.ok
        report.chain_last_hash = figures.chain.last_hash
        report.day_last_hash = figures.chain.day_last_hash or ""
        report.save(update_fields=[
            "status", "figures", "summary", "inputs", "finished_at", "rounds", "flags", "drift", "chain_ok",
            "chain_last_hash", "day_last_hash",
        ])
        if report.status == Status.COMPLETE and report.day_from == report.day_to:
            # Read from the stored current reports, this one among them now.
            figures = figures.model_copy(update=periods_to_date(report.day_from))
            tests = variance_test_settings()
            trips = variance_trips_of_day(report.day_from, figures, tests)
            variance_findings_raise(report=report, trips=trips)
            figures = figures.model_copy(update={"variance_tests": VarianceTests.model_validate({
                "settings": tests.as_json(),
                "trips": [{"test": t.test, "scope": t.scope, "key": t.key, "currency": t.currency,
                           "period": t.period, "detail": t.detail} for t in trips],
            })})
            report.figures = figures_json(figures)
            report.summary = summary_of(report.figures)
            report.save(update_fields=["figures", "summary"])
            report_bands_write(report, figures)
        report_dealers_write(report, figures)
        report_flags_write(report, figures)
        audit_record(
            actor=SYSTEM, action="reconciliation.completed", obj=report,
            after={"status": report.status, "version": report.version, "rounds": report.rounds,
                   "flags": report.flags, "drift": report.drift, "chain_ok": report.chain_ok,
                   "alerts": figures.alerts},
        )
    for alert in figures.alerts:
        logger.error("%s: %s", report, alert)
    return report


def report_fail(*, report_id: int, error: str) -> None:
    """Mark a running report failed, with its reason (a part or its merge gave up).

    The healing job resumes it once ``retry_at`` comes: a minute after its first
    failure, doubling each failure after, up to ``RECONCILIATION_RETRY_MOST_SECONDS``.
    """
    with transaction.atomic():
        report = locks.rows_locked(ReconciliationReport.objects.filter(pk=report_id, status=Status.RUNNING))
        report = report[0] if report else None
        if report is None:
            return
        report.failures += 1
        wait = min(settings.RECONCILIATION_RETRY_FIRST_SECONDS * 2 ** (report.failures - 1),
                   settings.RECONCILIATION_RETRY_MOST_SECONDS)
        report.status, report.error = Status.FAILED, error[:4000]
        report.finished_at = timezone.now()
        report.retry_at = report.finished_at + timedelta(seconds=wait)
        report.save(update_fields=["status", "error", "finished_at", "failures", "retry_at"])
    logger.error("reconciliation report %s failed (%d time(s)), tried again in %d s: %s",
                 report_id, report.failures, wait, error)


def report_merge(*, report: ReconciliationReport) -> ReportFigures:
    """The report's figures from its parts: sums added up, then ratios, bands and flags.

    Parts are read one at a time, so memory holds the casino's dealers,
    shifts and players, never every table's rows at once.
    """
    tables: dict[str, ByCurrency] = {}
    dealers: dict[str, ByCurrency] = {}
    shifts: dict[str, ByCurrency] = {}
    players: dict[str, ByCurrency] = {}
    dealer_tables: dict[str, set] = {}
    reverified, drift, examples = 0, 0, []
    config_versions: set[int] = set()
    pool_versions: set[int] = set()
    pools, segments = {}, []
    parts = report.parts.order_by("kind", "key").values_list("kind", "key", "figures")
    for kind, key, stored in parts.iterator(chunk_size=10):
        if kind == Kind.TABLE:
            part = TablePart.model_validate(stored)
            table_sums = tables[key] = ByCurrency()
            for cell in part.cells:
                sums = Sums.from_json(cell.sums)
                table_sums.add(sums)
                dealers.setdefault(cell.dealer, ByCurrency()).add(sums)
                shifts.setdefault(cell.shift, ByCurrency()).add(sums)
                dealer_tables.setdefault(cell.dealer, set()).add(key)
            checked = part.reverification
            reverified += checked.rounds
            config_versions.update(checked.config_versions)
            pool_versions.update(checked.pool_versions)
            drift += checked.drift
            examples += checked.examples[: EXAMPLES_KEPT - len(examples)]
        elif kind == Kind.PLAYERS:
            players = {p: ByCurrency.from_json(data)
                       for p, data in PlayersPart.model_validate(stored).players.items()}
        elif kind == Kind.POOL:
            pools[key] = PoolFigures.model_validate(stored)
        else:
            segments.append(stored)
    casino = ByCurrency()
    for by_currency in tables.values():
        casino.add_all(by_currency)

    groups = {
        "tables": derive_by_currency(tables),
        "dealers": derive_by_currency(dealers),
        "shifts": derive_by_currency(shifts),
        "players": derive_by_currency(players),
    }
    flags = [flag for scope, derived in groups.items() for flag in flags_of(SCOPE_OF[scope], derived)]
    start, end = selectors.window_of(day_from=report.day_from, day_to=report.day_to, clock=reconciliation_settings())
    casino_figures = {currency: derive(sums) for currency, sums in sorted(casino.items())}
    figures = ReportFigures(
        day_from=report.day_from, day_to=report.day_to,
        parameters=report.inputs.get("clock", {}),
        engine_version=report.engine_version,
        currencies=sorted(casino),
        casino=casino_figures,
        **groups,
        dealer_tables={dealer: sorted(codes) for dealer, codes in sorted(dealer_tables.items())},
        flags=flags,
        scoring=scoring_of(casino, groups),
        pools=pools,
        progressive=progressive_books(casino_figures, pools),
        reverification=Reverification(rounds=reverified, drift=drift, examples=examples),
        chain=ChainFigures.model_validate(chain_merge(segments)),
        config_versions=sorted(config_versions),
        pool_versions=sorted(pool_versions),
        covariance_fallbacks=selectors.covariance_fallbacks(version_ids=sorted(config_versions)),
        bodies=_bodies_checked(report.day_from, report.day_to),
        held=Held.model_validate(selectors.rounds_held()),
        dual_control=dual_control_section(start=start, end=end),
        records=_records_checked(),
        totals=_totals_checked(report.day_from, report.day_to),
        alerts=[],
    )
    return figures.model_copy(update={"alerts": _alerts(figures)})


def _bodies_checked(day_from: date, day_to: date) -> BodiesChecked:
    """The range's stored rounds read again from the bodies their tables sent (``rounds.proof``)."""
    differences = replicas.read(lambda using: list(bodies_differences(
        rounds=rounds_in_range(day_from=day_from, day_to=day_to, using=using, held_too=True))),
        fresh=True)
    return BodiesChecked(
        differences=len({d.round_pk for d in differences}),
        examples=[f"round {d.round_id} (#{d.round_pk}): {d.problem}" for d in differences[:EXAMPLES_KEPT]],
    )


def _totals_checked(day_from: date, day_to: date) -> TotalsChecked:
    """The day totals the pages read (``rounds.DayTotal``) against what the seats count now, and the
    findings still to work (``rounds.WorkTally``) of every day against the findings."""
    differences = replicas.read(
        lambda using: [*day_totals_differences(day_from=day_from, day_to=day_to, using=using),
                       *work_tally_differences(using=using)], fresh=True)
    return TotalsChecked(differences=len(differences), examples=differences[:EXAMPLES_KEPT])


def _records_checked() -> RecordsChecked:
    """Every record the trail vouches for (versions, findings' work, people, tokens, keys, counts,
    held rounds, people's acts) against it, as ``verify_audit`` holds them: whatever day it was
    edited on."""
    found = {proof.name: [str(d) for d in proof.differences()] for proof in record_proofs()}
    versions = found.pop("config_versions", []) + found.pop("pool_versions", [])
    findings, held = found.pop("findings", []), found.pop("held", [])
    others = [line for lines in found.values() for line in lines]
    return RecordsChecked(versions=len(versions), findings=len(findings), held=len(held),
                          others={name: len(lines) for name, lines in found.items()},
                          examples=(versions + findings + held + others)[:EXAMPLES_KEPT])


def _alerts(figures: ReportFigures) -> list[str]:
    """What must not wait for somebody to open the report."""
    alerts = []
    bodies = figures.bodies
    if bodies and bodies.differences:
        alerts.append(f"BODIES: {bodies.differences} stored round(s) differ from the bodies their tables "
                      "sent: " + "; ".join(bodies.examples[:3]))
    held = figures.held
    if held and held.rounds:
        oldest = held.oldest_received.isoformat() if held.oldest_received else None
        alerts.append(f"HELD: {held.rounds} round(s) dealt outside the window the books accept are held "
                      f"apart from every report until a supervisor places them (the oldest received "
                      f"{oldest}); their finding is dealt_outside_window")
    records = figures.records
    others = {name: n for name, n in ((records.others or {}) if records else {}).items() if n}
    if records and (records.versions or records.findings or records.held or others):
        alerts.append(f"RECORDS: {records.versions} configuration or pool version(s) differ from what the audit "
                      f"chain recorded, {records.findings} finding(s) hold a state no audit event made, "
                      f"{records.held} round(s) held apart or not against their finding and placements"
                      + "".join(f", {n} of {name.replace('_', ' ')} not what the audit trail recorded"
                                for name, n in sorted(others.items()))
                      + ": " + "; ".join(records.examples[:3]))
    totals = figures.totals
    if totals and totals.differences:
        alerts.append(f"TOTALS: {totals.differences} of the totals the workspace's pages show differ from "
                      "what their seats or findings count (a write went past rounds.services.day_totals or "
                      "work_tally; manage.py day_totals --rebuild writes them again): "
                      + "; ".join(totals.examples[:3]))
    drift = figures.reverification.drift
    if drift:
        # The versions are immutable and checked above, the engine is versioned: a round that
        # differs under the same engine had a stored column edited, which verify_audit names.
        alerts.append(
            f"DRIFT: today's engine ({figures.engine_version}) judges {drift} stored round(s) "
            "differently from what they store: a stored column was edited (verify_audit names each), "
            "or the engine changed what a stored round means"
        )
    if not figures.chain.ok:
        alerts.append(f"audit chain broken at event {figures.chain.break_seq}: {figures.chain.problem}")
    for code, pool in figures.pools.items():
        for failed in (c for c in pool.checks if not c.ok):
            alerts.append(f"pool {code} ({pool.currency}) fails its {failed.check} check: "
                          + "; ".join(failed.problems[:3]))
    for version in figures.covariance_fallbacks:
        alerts.append(f"{version}: no seat covariance is derived for its Blind table; its bands used the "
                      "shipped game's figures (docs/VARIANCE.md)")
    for currency, scored in (figures.scoring.casino if figures.scoring else {}).items():
        if scored.scored_hands < scored.hands:
            alerts.append(f"SCORING: {scored.hands - scored.scored_hands} of {scored.hands} live hand(s) "
                          f"({currency}) were not scored by game protection when the report ran; the groups "
                          "they belong to were judged at optimal play (docs/VARIANCE.md, \"Which band judges\")")
    alerts += dual_control_alerts(figures.dual_control)
    worst = [f for f in figures.flags if f.outside == "99.7"]
    if worst:
        alerts.append(f"{len(worst)} result(s) outside the 99.7 % band: "
                      + ", ".join(f"{f.scope} {f.key} ({f.currency}) {f.bet}" for f in worst[:10]))
    return alerts


# ---- running a report in this process -----------------------------------------------------


def report_run(
    *, day_from: date, day_to: date | None = None, requested_by: str = "",
    progress: Callable[[int, int, str], None] | None = None,
) -> ReconciliationReport:
    """Open (or resume) the range's report and compute every part here, in order."""
    report = report_start(day_from=day_from, day_to=day_to, requested_by=requested_by)
    todo = report_parts_to_compute(report=report)
    done_before = report.parts.count() - len(todo)
    total_parts = done_before + len(todo)
    try:
        for i, part_id in enumerate(todo, start=1):
            part = report_part_compute(
                part_id=part_id,
                progress=(lambda text: progress(done_before + i - 1, total_parts, text)) if progress else None,
            )
            if progress:
                label = f"audit chain {part.key}" if part.kind == Kind.CHAIN else f"{part.kind} {part.key}"
                progress(done_before + i, total_parts, label)
        _wait_for_parts(report)
    except Exception as error:
        report_fail(report_id=report.pk, error=f"{type(error).__name__}: {error}")
        raise
    return report_finish(report_id=report.pk)


def _wait_for_parts(report: ReconciliationReport, poll_seconds: float = 0.5) -> None:
    """Wait while another run computes the parts it claimed; take over any whose claim goes stale.

    Stops waiting when the report is no longer running (another run finished
    or superseded it): ``report_finish`` then hands it back as it is.
    """
    while True:
        if ReconciliationReport.objects.filter(pk=report.pk).values_list("status", flat=True).get() != Status.RUNNING:
            return
        left = list(report.parts.exclude(status=ReconciliationPart.Status.COMPLETE).values_list("pk", flat=True))
        if not left:
            return
        for part_id in left:
            report_part_compute(part_id=part_id)
        time.sleep(poll_seconds)


def days_to_reconcile(*, books_open: date, now: datetime | None = None) -> list[date]:
    """The ended gaming days of the books without a current report of their own, oldest first."""
    return selectors.days_without_report(books_open=books_open, last_ended=day_to_reconcile(now=now))
