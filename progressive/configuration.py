"""Checking a pool's numbers before anything is written.

Every refusal names the field it is about, so the API and the admin can show
it beside that field; the engine's own checks (``game.rules``) run
last, as the final word on whether the engine can settle by these numbers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from decimal import Decimal

from game.evaluator import CATEGORIES, CATEGORY_INDEX
from game.rules import PAY_KINDS, QUALIFIERS, PoolRules, RulesError, pay_line
from infra.validation import CENT, MONEY_LIMIT, ErrorList, FieldErrors, decimal_of, money_check

# What a rate column (6 digits, 4 decimals) holds.
RATE_PLACES = 4
LINE_KEYS = ("category", "qualifier", "kind", "amount")
_CURRENCY = re.compile(r"^[A-Z]{3}$")


class ProgressiveError(FieldErrors):
    """A change to a pool the rules refuse."""


class PoolConfigError(ProgressiveError):
    """Pool numbers the service will not store."""


@dataclass(frozen=True, slots=True)
class PoolNumbers:
    """A pool version's numbers, checked and in the form they are stored."""

    wager: Decimal
    rate: Decimal
    reseed: Decimal
    ceiling: Decimal | None
    reserve_rate: Decimal
    reading_tolerance: Decimal
    lines: list[dict[str, str]]
    rules: PoolRules


# What a version stores of its numbers, and a version request keeps: all but the engine's rules made of them.
VERSION_NUMBERS = tuple(field.name for field in fields(PoolNumbers) if field.name != "rules")


def _rate(errors: ErrorList, field: str, value: object) -> Decimal | None:
    rate = decimal_of(value)
    if rate is None:
        errors.add(field, f"{value!r} is not a rate: send a decimal string such as '0.20'.")
        return None
    if not 0 <= rate <= 1:
        errors.add(field, "is a fraction of the wager between 0 and 1.")
        return None
    if rate != rate.quantize(Decimal(1).scaleb(-RATE_PLACES)):
        errors.add(field, f"has at most {RATE_PLACES} decimals.")
        return None
    return rate


def minor_unit_check(value: object) -> Decimal:
    unit = decimal_of(value)
    if unit is None or unit < CENT or unit % CENT or unit >= 100:
        raise PoolConfigError(
            "the minor unit is a positive multiple of 0.01 below 100 (money is kept in cents).",
            field="minor_unit",
        )
    return unit


def currency_check(value: object) -> str:
    if not isinstance(value, str) or not _CURRENCY.match(value):
        raise PoolConfigError("an ISO 4217 code of three capital letters, e.g. USD.", field="currency")
    return value


def lines_check(lines: object, minor_unit: Decimal) -> list[dict[str, str]]:
    """The pay table as stored: best line first, every line one that can still pay."""
    if not isinstance(lines, list) or not lines:
        raise PoolConfigError("a pool needs a list of at least one pay line.", field="lines")
    errors = ErrorList()
    stored: list[dict[str, str]] = []
    for number, spec in enumerate(lines, start=1):
        where = f"line {number}"
        if not isinstance(spec, Mapping):
            errors.add("lines", f"{where}: a line is an object with {', '.join(LINE_KEYS)}.")
            continue
        unknown = sorted(set(spec) - set(LINE_KEYS))
        missing = [key for key in LINE_KEYS if key not in spec]
        if unknown or missing:
            errors.add("lines", f"{where}: " + "; ".join(
                ([f"unknown keys {', '.join(map(str, unknown))}"] if unknown else [])
                + ([f"missing {', '.join(missing)}"] if missing else [])
            ) + ".")
            continue
        if not isinstance(spec["category"], str) or spec["category"] not in CATEGORY_INDEX:
            errors.add("lines", f"{where}: unknown hand category {spec['category']!r}; one of {', '.join(CATEGORIES)}.")
            continue
        if not isinstance(spec["qualifier"], str) or spec["qualifier"] not in QUALIFIERS:
            errors.add("lines", f"{where}: unknown qualifier {spec['qualifier']!r}; one of {', '.join(QUALIFIERS)}.")
            continue
        if not isinstance(spec["kind"], str) or spec["kind"] not in PAY_KINDS:
            errors.add("lines", f"{where}: unknown pay kind {spec['kind']!r}; one of {', '.join(PAY_KINDS)}.")
            continue
        amount = decimal_of(spec["amount"])
        if amount is None or amount <= 0:
            errors.add("lines", f"{where}: the pay must be a positive decimal, not {spec['amount']!r}.")
            continue
        if spec["kind"] == "percent" and amount > 100:
            errors.add("lines", f"{where}: a percentage pay cannot exceed 100 (it is {amount}).")
            continue
        if spec["kind"] == "percent" and amount != amount.quantize(Decimal("0.0001")):
            errors.add("lines", f"{where}: a percentage has at most 4 decimals.")
            continue
        if spec["kind"] == "fixed" and (amount % minor_unit or amount >= MONEY_LIMIT):
            errors.add("lines", f"{where}: a fixed pay is a whole number of the minor unit {minor_unit}.")
            continue
        stored.append({
            "category": spec["category"], "qualifier": spec["qualifier"], "kind": spec["kind"],
            "amount": format(amount.normalize(), "f"),
        })
    if errors:
        raise PoolConfigError(errors)
    _unreachable_check(stored)
    return stored


def _unreachable_check(lines: list[dict[str, str]]) -> None:
    """Refuse a line that an earlier one always beats: a seat wins only the first line it satisfies."""
    for later_number, later in enumerate(lines, start=1):
        for earlier_number, earlier in enumerate(lines[: later_number - 1], start=1):
            easier = CATEGORY_INDEX[earlier["category"]] <= CATEGORY_INDEX[later["category"]]
            covers = earlier["qualifier"] == "any" or earlier["qualifier"] == later["qualifier"]
            if easier and covers:
                raise PoolConfigError(
                    f"line {later_number} ({later['category']}, {later['qualifier']}) can never pay: "
                    f"every hand it needs also satisfies line {earlier_number} "
                    f"({earlier['category']}, {earlier['qualifier']}). List the best line first.",
                    field="lines",
                )


def pool_numbers_check(
    *, currency: str, minor_unit: Decimal, wager: object, rate: object, reseed: object,
    ceiling: object, reserve_rate: object, reading_tolerance: object, lines: object,
) -> PoolNumbers:
    """Every number of a pool version checked at once; all that is wrong is reported together."""
    errors = ErrorList()
    wager_ = money_check(errors, "wager", wager, minor_unit, positive=True)
    reseed_ = money_check(errors, "reseed", reseed, minor_unit, positive=False)
    ceiling_ = None if ceiling in (None, "") else money_check(errors, "ceiling", ceiling, minor_unit, positive=True)
    tolerance = money_check(errors, "reading_tolerance", reading_tolerance, minor_unit, positive=False)
    rate_ = _rate(errors, "rate", rate)
    reserve_rate_ = _rate(errors, "reserve_rate", reserve_rate)
    if rate_ is not None and reserve_rate_ is not None and rate_ + reserve_rate_ > 1:
        errors.add("reserve_rate", "the contribution and reserve rates together cannot exceed the wager.")
    if ceiling_ is not None and reseed_ is not None and ceiling_ < reseed_:
        errors.add("ceiling", f"cannot be below the reseed amount {reseed_}.")
    try:
        lines_ = lines_check(lines, minor_unit)
    except PoolConfigError as exc:
        for field, texts in exc.errors.items():
            for text in texts:
                errors.add(field, text)
        lines_ = None
    if errors:
        raise PoolConfigError(errors)
    try:
        rules = PoolRules(
            currency=currency, minor_unit=minor_unit.normalize(), wager=wager_, rate=rate_,
            reseed=reseed_, lines=tuple(pay_line(line) for line in lines_), ceiling=ceiling_,
            reserve_rate=reserve_rate_,
        )
    except RulesError as exc:
        raise PoolConfigError(str(exc)) from None
    return PoolNumbers(wager_, rate_, reseed_, ceiling_, reserve_rate_, tolerance, lines_, rules)
