"""A report's stored figures read back through their declaration (``report_figures``), and the one
place where the shapes earlier versions stored are upgraded to this version's.

Figures too old to read (before version 1, when a group's figures added two
currencies together) read as ``UNREADABLE``, and figures edited out of any
shape the declaration knows as an ``Unreadable`` naming the fields: whoever
shows them says why, never fails on them. Plain Python: no Django.
"""

from __future__ import annotations

from pydantic import TypeAdapter, ValidationError

from .report_figures import FIGURES_VERSION, TO_DATES, Flag, GroupFigures, Groups, ReportFigures, ToDate


class Unreadable:
    """Stored figures the declaration cannot read: too old a shape, or not in any shape it knows."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"Unreadable({self.reason!r})"


UNREADABLE = Unreadable("made before figures kept their currency: reconcile the range again to read it")


def read_figures(stored: dict | None, *, without_players: bool = False) -> ReportFigures | Unreadable | None:
    """A report's stored figures, upgraded to this version; None for a report without figures.

    Falsy whenever there is nothing to show, so ``if figures:`` reads as "has figures".
    ``without_players``: the figures were read with their players left out (``infra.json_columns``),
    and say so (``players`` is None), where a report's own always has them.
    """
    if not stored:
        return None
    if "currencies" not in stored:
        return UNREADABLE
    if without_players:
        stored = {**stored, "players": None}
    try:
        return ReportFigures.model_validate(upgraded(stored))
    except ValidationError as error:
        return Unreadable(f"its figures are not in a shape this version reads ({_problems(error)})")


def read_summary(stored: dict | None) -> ReportFigures | Unreadable | None:
    """A report's summary (``report_figures.summary_of``) as its figures: without players (None),
    without dealers and flags (empty: they are read from their rows, ``audit.ReportDealer`` and
    ``audit.ReportFlag``), and without the months' and years' flags (empty: no page reads them)."""
    if not stored:
        return None
    return read_figures({**stored, "dealers": {}, "dealer_tables": {}, "flags": []}, without_players=True)


def read_flag(stored: dict) -> Flag | Unreadable:
    """One flag as a report kept it apart (``ReportFlag``); an ``Unreadable`` naming the fields
    where it is in no shape the declaration knows."""
    try:
        return Flag.model_validate(_flag_upgraded(stored))
    except ValidationError as error:
        return Unreadable(f"a flag is not in a shape this version reads ({_problems(error)})")


def _problems(error: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors()[:5])


def read_to_date(stored: dict | None) -> ToDate | None:
    """A month or year to date as a report kept it (None where it kept none)."""
    if not stored:
        return None
    return ToDate.model_validate(_to_date_upgraded(stored))


_GROUPS = TypeAdapter(Groups)


def read_groups(stored: dict | None) -> Groups:
    """One scope's groups (``{key: {currency: figures}}``), as a query read them out of a report."""
    return _GROUPS.validate_python({key: {c: _group_upgraded(g) for c, g in by.items()}
                                    for key, by in (stored or {}).items()})


def read_group(stored: dict) -> GroupFigures | Unreadable:
    """One group's figures in one currency, as a report kept them apart (``ReportDealer``); an
    ``Unreadable`` naming the fields where they are in no shape the declaration knows."""
    try:
        return GroupFigures.model_validate(_group_upgraded(stored))
    except ValidationError as error:
        return Unreadable(f"its figures are not in a shape this version reads ({_problems(error)})")


# ---- upgrading earlier shapes ---------------------------------------------------------------

SCOPES = ("tables", "dealers", "shifts", "players")


def upgraded(stored: dict) -> dict:
    """Stored figures of an earlier version (``report_figures``' list) in this version's shape;
    this version's unchanged."""
    if stored.get("version") == FIGURES_VERSION:
        return stored
    figures = _scopes_upgraded(stored)
    figures.setdefault("dealer_tables", {})
    figures.setdefault("players", {})
    for period in TO_DATES:
        if stored.get(period):
            figures[period] = _to_date_upgraded(stored[period])
    figures["version"] = FIGURES_VERSION
    return figures


def _band_upgraded(band):
    return {"theoretical": "optimal", **band} if isinstance(band, dict) else band


def _group_upgraded(group):
    """A group's figures as an earlier version stored them: what its dealers paid not known
    (before version 3), and, made before its decisions were scored, judged at optimal play and
    said so (version 1). Anything not in a shape it knows is left as it is, for the declaration
    to refuse."""
    if not isinstance(group, dict):
        return group
    if "win_paid" not in group:  # before version 3: what the dealers paid is not known
        group = {**group, "win_paid": None, "win_paid_total": None, "dealer_difference": None}
    if "bands_optimal" in group and "theoretical_actual" in group:
        return group
    bands = group.get("bands")
    if not isinstance(bands, dict) or not all(isinstance(bands.get(bet), dict) for bet in ("base", "total")):
        return group
    bands = {bet: _band_upgraded(band) for bet, band in bands.items()}
    optimal = group.get("theoretical_optimal", bands["total"].get("expected"))
    return {
        "void_rounds": 0, "var_cross": "0", "skill": "0", "scored_hands": 0, "findings": {},
        "overpaid": "0", "underpaid": "0", "limit_breaks": 0, "scored_percent": None,
        "fully_scored": False, "theoretical": "optimal",
        "theo_base_actual": group.get("theo_base", "0"),
        "theoretical_actual": optimal,
        **group,
        "theoretical_optimal": optimal,
        "bands": bands,
        "bands_optimal": {"base": bands["base"], "total": bands["total"]},
    }


def _groups_upgraded(groups):
    if not isinstance(groups, dict):
        return groups
    return {key: {c: _group_upgraded(g) for c, g in by.items()} if isinstance(by, dict) else by
            for key, by in groups.items()}


def _flag_upgraded(flag):
    return {"currency": "", **_band_upgraded(flag)} if isinstance(flag, dict) else flag


def _pools_upgraded(pools):
    if not isinstance(pools, dict):
        return pools
    return {code: {"reversals": "0", **p} if isinstance(p, dict) else p for code, p in pools.items()}


def _scopes_upgraded(figures: dict) -> dict:
    """The parts a report and a month or year to date share, each upgraded where it is there."""
    upgraded_figures = dict(figures)
    if "casino" in figures:
        upgraded_figures["casino"] = _groups_upgraded({"": figures["casino"]})[""]
    for scope in SCOPES:
        if scope in figures:
            upgraded_figures[scope] = _groups_upgraded(figures[scope])
    if isinstance(figures.get("flags"), list):
        upgraded_figures["flags"] = [_flag_upgraded(f) for f in figures["flags"]]
    if "pools" in figures:
        upgraded_figures["pools"] = _pools_upgraded(figures["pools"])
    return upgraded_figures


def _to_date_upgraded(period):
    return _scopes_upgraded(period) if isinstance(period, dict) else period
