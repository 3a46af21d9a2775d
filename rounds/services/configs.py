"""Table configurations: a change is always a new version, never an edit."""

from __future__ import annotations

import re
from dataclasses import make_dataclass
from datetime import datetime
from decimal import Decimal

from django.conf import settings
from django.db import transaction
from django.db.models import F

from game.evaluator import CATEGORY_INDEX
from game.rules import (
    MOST_PAY,
    STORED_TYPES,
    TABLE_NUMBERS,
    RulesError,
    pay_table,
    table_rules,
)
from infra import locks
from infra.validation import CENT, ErrorList, FieldErrors, decimal_of, money_check
from progressive.models import Pool
from rounds.models import ConfigVersionRequest, Round, TableConfig, TableConfigVersion
from trail.services import Actor, audit_record

_CURRENCY = re.compile(r"^[A-Z]{3}$")
# What a version stores and its audit snapshot shows: the engine's numbers.
SNAPSHOT_FIELDS = TABLE_NUMBERS


class ConfigError(FieldErrors):
    """Configuration numbers the service will not store."""


# A configuration's numbers, checked, as a version keeps them: a field for each
# of the engine's TABLE_NUMBERS, so a number added to TableRules is a field
# here too (and a column of TableConfigVersion: tests/rounds/test_vocabulary.py).
ConfigNumbers = make_dataclass(
    "ConfigNumbers", list(STORED_TYPES.items()), frozen=True, slots=True, module=__name__
)


def config_numbers_check(
    *, currency, minor_unit, unit, ante_min, ante_max, trips_min, trips_max, blind_pays, trips_pays,
    aggregate_limit=None, dealer_qualifier="pair", one_hand_per_player=True,
) -> ConfigNumbers:
    """Every field checked at once; the engine's own rules have the last word."""
    errors = ErrorList()
    if not isinstance(currency, str) or not _CURRENCY.match(currency):
        errors.add("currency", "three capital letters, e.g. SEK.")
    minor = decimal_of(minor_unit)
    if minor is None or minor < CENT or minor % CENT:
        errors.add("minor_unit", "a positive multiple of 0.01 (money is kept in cents).")
        minor = CENT
    numbers = {
        name: money_check(errors, name, value, minor, positive=True)
        for name, value in (("unit", unit), ("ante_min", ante_min), ("ante_max", ante_max),
                            ("trips_min", trips_min), ("trips_max", trips_max))
    }
    limit = None
    if aggregate_limit not in (None, ""):
        limit = money_check(errors, "aggregate_limit", aggregate_limit, minor, positive=True)
    pays = {}
    for name, table in (("blind_pays", blind_pays), ("trips_pays", trips_pays)):
        try:
            parsed = pay_table(table if isinstance(table, dict) else {})
        except (RulesError, ArithmeticError, ValueError) as exc:
            errors.add(name, str(exc))
            continue
        if not parsed:
            errors.add(name, "a pay table needs at least one hand category.")
        elif max(parsed.values()) > MOST_PAY:
            # ROUND_RECORD.md bounds a paid amount at 15 digits: 500:1 on the largest wager.
            errors.add(name, f"a pay above {MOST_PAY}:1 could owe more than a table can claim.")
        pays[name] = {name_: str(Decimal(str(pay))) for name_, pay in table.items()}
    if dealer_qualifier not in CATEGORY_INDEX:
        errors.add("dealer_qualifier", f"one of {', '.join(CATEGORY_INDEX)}.")
    for low, high in (("ante_min", "ante_max"), ("trips_min", "trips_max")):
        if numbers.get(low) and numbers.get(high) and numbers[low] > numbers[high]:
            errors.add(high, f"cannot be below {low}.")
    if errors:
        raise ConfigError(errors)
    checked = ConfigNumbers(
        currency=currency, minor_unit=minor, unit=numbers["unit"], ante_min=numbers["ante_min"],
        ante_max=numbers["ante_max"], trips_min=numbers["trips_min"], trips_max=numbers["trips_max"],
        blind_pays=pays["blind_pays"], trips_pays=pays["trips_pays"], aggregate_limit=limit,
        dealer_qualifier=dealer_qualifier, one_hand_per_player=bool(one_hand_per_player),
    )
    try:
        table_rules({name: getattr(checked, name) for name in TABLE_NUMBERS})
    except RulesError as exc:
        raise ConfigError(str(exc)) from None
    return checked


def config_version_create(
    *, config: TableConfig, effective_from: datetime, actor: Actor, pool: Pool | None = None,
    note: str = "", request_id: str = "", **numbers,
) -> TableConfigVersion | ConfigVersionRequest:
    """The configuration's next version, in force from ``effective_from``.

    A version never reaches back over a round already judged under this
    configuration: a stored verdict must stay the verdict.

    Dual control: a version a person makes that changes what is paid (any
    of the engine's numbers, or the pool, differ from the latest version's;
    the first version of a configuration too) is not made: a request is
    kept and returned instead, and the version exists only once a second
    supervisor approves it (``config_approvals.config_version_approve``).
    The system (migrations, management commands, the demo) makes versions at
    once: whoever runs those holds the server, not a role.
    """
    checked = config_numbers_check(**numbers)
    if not isinstance(effective_from, datetime) or effective_from.tzinfo is None:
        raise ConfigError("a date and time with its time zone.", field="effective_from")
    if pool is not None and pool.currency != checked.currency:
        raise ConfigError(f"pool {pool.code} pays in {pool.currency}.", field="pool")
    with transaction.atomic():
        locked = locks.rows_locked(TableConfig.objects.filter(pk=config.pk), [config.pk]).get()
        latest = latest_checked(config=locked, effective_from=effective_from)
        if actor.user_id is not None and pays_differently(latest=latest, numbers=checked, pool=pool):
            return _version_requested(locked, effective_from, checked, pool, note, actor, request_id)
        return version_write(config=locked, latest=latest, effective_from=effective_from, numbers=checked,
                             pool=pool, note=note, actor=actor, request_id=request_id)


def pays_differently(*, latest: TableConfigVersion | None, numbers: ConfigNumbers, pool: Pool | None) -> bool:
    """Whether a version of ``numbers`` and ``pool`` would settle any round otherwise than ``latest``.

    The engine's rules compared whole (pay tables, limits, the qualifier, the
    aggregate limit, the currency, …) and the pool the Progressive feeds: a
    note is all a version may change without a second supervisor.
    """
    if latest is None:
        return True
    rules = table_rules({name: getattr(numbers, name) for name in TABLE_NUMBERS})
    return rules != latest.rules() or (pool.pk if pool else None) != latest.pool_id


def version_write(
    *, config: TableConfig, latest: TableConfigVersion | None, effective_from: datetime,
    numbers: ConfigNumbers, pool: Pool | None, note: str, actor: Actor, request_id: str,
    asked: ConfigVersionRequest | None = None,
) -> TableConfigVersion:
    """Write and audit the next version of ``config`` (row-locked, ``latest`` read under the lock)."""
    version = TableConfigVersion.objects.create(
        config=config, version=(latest.version if latest else 0) + 1,
        effective_from=effective_from, pool=pool, note=note,
        created_by_id=asked.requested_by_id if asked is not None else actor.user_id,
        **{name: getattr(numbers, name) for name in SNAPSHOT_FIELDS},
    )
    after = config_version_snapshot(version)
    if asked is not None:
        after |= {"version_request": asked.pk, "requested_by": asked.requested_by_name, "approved_by": actor.name}
    audit_record(
        actor=actor, action="config.version_created", obj=version,
        before=config_version_snapshot(latest) if latest else None, after=after, request_id=request_id,
    )
    return version


def latest_checked(*, config: TableConfig, effective_from: datetime) -> TableConfigVersion | None:
    """The latest version of ``config`` (row-locked by the caller), once a version from
    ``effective_from`` is known to reach back over neither it nor a judged round."""
    latest = TableConfigVersion.objects.filter(config=config).order_by("-version").first()
    if latest is not None and effective_from < latest.effective_from:
        raise ConfigError(
            f"version {latest.version} is in force from {latest.effective_from.isoformat()}; "
            "a new version cannot start before it.", field="effective_from",
        )
    # A round stamped later than it arrived (dealt_in_future) says nothing of when it was
    # dealt: its verdict stays as judged, but it holds back no version.
    judged = (
        Round.objects.filter(config_version__config=config, dealt_at__gte=effective_from,
                             dealt_at__lte=F("received_at") + settings.CLOCK_TOLERANCE)
        .order_by("-dealt_at").values_list("dealt_at", flat=True).first()
    )
    if judged is not None:
        raise ConfigError(
            f"a round dealt at {judged.isoformat()} was already judged under {config.name}; "
            "a new version must start after it.", field="effective_from",
        )
    return latest


def _version_requested(locked: TableConfig, effective_from: datetime, numbers: ConfigNumbers,
                       pool: Pool | None, note: str, actor: Actor, request_id: str) -> ConfigVersionRequest:
    asked = ConfigVersionRequest.objects.create(
        config=locked, effective_from=effective_from, numbers=numbers_json(numbers), pool=pool,
        note=note, requested_by_id=actor.user_id, requested_by_name=actor.name[:150], request_id=request_id,
    )
    audit_record(
        actor=actor, action="config.version_requested", obj=asked,
        after={"config": locked.name, "effective_from": effective_from, **asked.numbers,
               "pool": pool.code if pool else None, "note": note},
        request_id=request_id,
    )
    return asked


def numbers_json(numbers: ConfigNumbers) -> dict:
    """``numbers`` as a request keeps them: each as ``config_numbers_check`` reads it back."""
    return {name: str(value) if isinstance(value, Decimal) else value
            for name, value in ((name, getattr(numbers, name)) for name in SNAPSHOT_FIELDS)}


def config_version_snapshot(version: TableConfigVersion) -> dict:
    """What the chain records of a version as it is made, and what ``rounds.proof_versions`` holds it to."""
    data = {name: getattr(version, name) for name in SNAPSHOT_FIELDS}
    data.update(version=version.version, effective_from=version.effective_from,
                pool=version.pool.code if version.pool_id else None)
    return data
