"""The findings still to work by gaming day, configuration version and code (``rounds.WorkTally``),
kept in step with every write that raises a finding or moves one.

A mistake counts as the queues list it (``rounds.mistakes``): each finding once, but a seat's
findings raised once a bet that stand in one state once together, with the money at stake of the
first of them. What findings add is worked out from them with every other finding of their
mistakes (``share_of``): the ingest adds its new rounds' findings and a refused resubmission's; a
move of findings
(``rounds.services.findings``) adds the difference they make after it and before, counted with
their mistakes' findings in the other states, all of them locked (``mistakes.locked_mistakes``).
A change adds to the rows of its keys (``INSERT … ON CONFLICT DO UPDATE``, in key order), sent once
the transaction holds the audit chain's head (``infra.locks``: ranked with the days' totals), so
its row locks never wait. An archived month's rows leave with its rounds and come back with them.

``work_tally_differences`` recounts every day's from the findings themselves and names each row
that differs (the nightly report's check of its totals, tests/rounds/test_work_tally.py);
``work_tally_rebuild`` writes what they say.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date
from decimal import Decimal

from django.db import connection, transaction
from django.db.models import Count, Sum
from django.db.models.functions import Coalesce

from game.vocabulary import ONE_PER_BET_CODES
from infra import locks, sql
from infra.work import UNRESOLVED
from rounds import mistakes
from rounds.models import Finding, Round, TableConfigVersion, WorkTally
from rounds.selectors import AT_STAKE, TO_WORK, ZERO

Key = tuple[date, int, str]  # gaming day, configuration version, code
Share = dict[Key, list]  # by key: [mistakes, at stake]
CENT = Decimal("0.01")


def share_of(findings: Iterable[Finding], day_of: Mapping[int, tuple[date, int]], into: Share | None = None) -> Share:
    """What ``findings`` add, by key: ``findings`` in key order (new ones as they are inserted), with
    every other finding of their mistakes; ``day_of`` their rounds' (gaming day, configuration
    version) by key, where a finding whose round is not in it (an archived month's) adds nothing."""
    added: Share = {} if into is None else into
    mates = set()
    for finding in findings:
        if finding.informational or finding.state not in UNRESOLVED or finding.round_id not in day_of:
            continue
        if finding.code in ONE_PER_BET_CODES and finding.seat is not None:
            mate = (finding.round_id, finding.seat, finding.code, finding.state)
            if mate in mates:
                continue
            mates.add(mate)
        share = added.setdefault((*day_of[finding.round_id], finding.code), [0, Decimal(0)])
        share[0] += 1
        if finding.expected is not None and finding.claimed is not None:
            share[1] += abs(finding.expected - finding.claimed)
    return added


def of_new(rounds: Iterable[Round], findings: Iterable[Finding], into: Share) -> Share:
    """What new ``rounds``' ``findings`` (theirs, in the order they are inserted) add, to ``into``."""
    return share_of(findings, {r.pk: (r.gaming_day, r.config_version_id) for r in rounds}, into)


def days_of(findings: Iterable[Finding]) -> dict[int, tuple[date, int]]:
    """The (gaming day, configuration version) of ``findings``' rounds stored in the tables, by key."""
    round_pks = {finding.round_id for finding in findings}
    if not round_pks:
        return {}
    return {pk: (day, version) for pk, day, version in Round.objects.filter(pk__in=round_pks).order_by()
            .values_list("pk", "gaming_day", "config_version_id")}


def difference(*, before: Share, after: Share) -> Share:
    """What changed from ``before`` to ``after``, by key (none where nothing did)."""
    change = {}
    for key in before.keys() | after.keys():
        was, now = before.get(key, [0, Decimal(0)]), after.get(key, [0, Decimal(0)])
        if was != now:
            change[key] = [now[0] - was[0], now[1] - was[1]]
    return change


def added_statements(added: Share) -> list[sql.Statement]:
    """Each key's row added to (made where it is missing), in key order: one statement."""
    keys = sorted(key for key, (n, stake) in added.items() if n or stake)
    if not keys:
        return []
    params = []
    for day, version, code in keys:
        n, stake = added[day, version, code]
        params += [day, version, code, n, _decimal(stake)]
    values = ", ".join(["(%s, %s, %s, %s, %s)"] * len(keys))
    return [locks.raw_lock_statement("rounds.WorkTally", sql.raw(
        f"INSERT INTO {_TABLE} ({_COLUMN_LIST}) VALUES {values} {_ON_CONFLICT}", params))]


def _column(name: str) -> str:
    return WorkTally._meta.get_field(name).column


def _decimal(value: Decimal):
    return WorkTally._meta.get_field("at_stake").get_db_prep_value(value, connection, prepared=False)


_TABLE = f'"{WorkTally._meta.db_table}"'
_KEY = ("gaming_day", "config_version", "code")
_COLUMN_LIST = ", ".join(f'"{_column(name)}"' for name in (*_KEY, "mistakes", "at_stake"))
# Portable to both databases: the table's own name, not an alias.
_ON_CONFLICT = (f"ON CONFLICT ({', '.join(_column(name) for name in _KEY)}) DO UPDATE SET "
                + ", ".join(f'"{c}" = {_TABLE}."{c}" + excluded."{c}"' for c in map(_column, ("mistakes", "at_stake"))))


# ---- the findings' own count -------------------------------------------------------------------


def _days(day_from: date | None, day_to: date | None, field: str = "gaming_day") -> dict:
    return {**({f"{field}__gte": day_from} if day_from else {}), **({f"{field}__lte": day_to} if day_to else {})}


def recounted(*, day_from: date | None = None, day_to: date | None = None, models=None,
              using: str = "default") -> dict[Key, tuple[int, Decimal]]:
    """The rows the findings still to work make, counted by the database as the queues count them
    (``mistakes.one_row_each``), of the rounds of ``day_from``…``day_to`` (every day where None).
    ``models``: (Finding,) of a migration's history, else the app's."""
    (finding_model,) = models or (Finding,)
    rows = (mistakes.one_row_each(finding_model.objects.using(using).filter(
        TO_WORK, **_days(day_from, day_to, "round__gaming_day"))).order_by()
            .values_list("round__gaming_day", "round__config_version_id", "code")
            .annotate(n=Count("id"), stake=Coalesce(Sum(AT_STAKE), ZERO)))
    return {(day, version, code): (n, Decimal(stake).quantize(CENT)) for day, version, code, n, stake in rows}


def work_tally_rebuild(*, day_from: date | None = None, day_to: date | None = None, models=None) -> int:
    """The rows of ``day_from``…``day_to`` (every day where None) written again from the findings (a
    migration's first fill, an attached month, a bench's cloned rounds); how many rows.
    ``models``: (Finding, WorkTally) of a migration's history, else the app's."""
    finding_model, tally_model = models or (Finding, WorkTally)
    with transaction.atomic():
        tally_model.objects.filter(**_days(day_from, day_to)).delete()
        rows = recounted(day_from=day_from, day_to=day_to, models=(finding_model,))
        tally_model.objects.bulk_create(
            [tally_model(gaming_day=day, config_version_id=version, code=code, mistakes=n, at_stake=stake)
             for (day, version, code), (n, stake) in sorted(rows.items())], batch_size=1000)
    return len(rows)


def work_tally_forget(*, day_from: date, day_to: date) -> int:
    """The rows of days whose rounds have left the tables (an archived month)."""
    deleted, _ = WorkTally.objects.filter(gaming_day__gte=day_from, gaming_day__lte=day_to).delete()
    return deleted


def work_tally_differences(*, day_from: date | None = None, day_to: date | None = None,
                           using: str = "default") -> list[str]:
    """Every row of ``day_from``…``day_to`` (every day where None) whose count differs from what the
    findings count now, in words (both read on ``using``); none when they agree. A row counting
    nothing is no row."""
    counted = recounted(day_from=day_from, day_to=day_to, using=using)
    stored = {(day, version, code): (n, stake) for day, version, code, n, stake in WorkTally.objects.using(using)
              .filter(**_days(day_from, day_to)).exclude(mistakes=0, at_stake=0)
              .values_list("gaming_day", "config_version_id", "code", "mistakes", "at_stake")}
    keys = set(counted) | set(stored)
    versions = {pk: f"{name} v{number}" for pk, name, number in TableConfigVersion.objects.using(using).filter(
        pk__in={key[1] for key in keys}).values_list("pk", "config__name", "version")}
    differences = []
    for key in sorted(keys):
        mine, theirs = stored.get(key, (0, Decimal(0))), counted.get(key, (0, Decimal(0)))
        if mine != theirs:
            day, version, code = key
            differences.append(
                f"{day} {code} ({versions.get(version, version)}): {mine[0]} finding(s) to work kept "
                f"({mine[1]} at stake), {theirs[0]} counted ({theirs[1]})")
    return differences
