"""A table's link to the casino's video of a moment: a template its admin sets, filled per round.

The surveillance system is the casino's own; the service only knows how to
name a moment in its address: the table, the seat, the round and when it was
dealt. A template names those fields in braces (``{table}``, ``{seat}``,
``{round}``, ``{dealt_at}``, ``{dealt_at_utc}``, ``{gaming_day}``) and
nothing else: no attribute, index or format of Python's ``str.format`` is
accepted, so a template cannot reach past the values given to it.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from string import Formatter
from urllib.parse import quote, urlsplit

from django.core.exceptions import ValidationError
from django.utils import timezone

FIELDS: tuple[str, ...] = ("table", "seat", "round", "dealt_at", "dealt_at_utc", "gaming_day")


def video_link_errors(template: str) -> list[str]:
    """What is wrong with ``template``; empty when it may be saved."""
    if not template:
        return []
    errors = []
    if urlsplit(template).scheme not in ("http", "https"):
        errors.append("the link must start with http:// or https://")
    try:
        parts = list(Formatter().parse(template))
    except ValueError as exc:
        return [*errors, f"the braces do not pair up ({exc})"]
    for _text, name, spec, conversion in parts:
        if name is None:
            continue
        if name not in FIELDS:
            errors.append(f"{{{name}}} is not one of " + ", ".join(f"{{{f}}}" for f in FIELDS))
        elif spec or conversion:
            errors.append(f"{{{name}}} takes no format: write it as {{{name}}}")
    return errors


def validate_video_link(template: str) -> None:
    if errors := video_link_errors(template):
        raise ValidationError("; ".join(errors))


def video_link(template: str, *, table: str, round_id: str, dealt_at: datetime, gaming_day: date,
               seat: int | None = None) -> str:
    """The address of the moment; "" without a template (or with one saved before the rules)."""
    if not template or video_link_errors(template):
        return ""
    values = {
        "table": table, "seat": "" if seat is None else str(seat), "round": round_id,
        "dealt_at": timezone.localtime(dealt_at).isoformat(timespec="seconds"),
        "dealt_at_utc": dealt_at.astimezone(UTC).isoformat(timespec="seconds"),
        "gaming_day": gaming_day.isoformat(),
    }
    return template.format(**{name: quote(value, safe="") for name, value in values.items()})


def video_of(round_, seat: int | None = None) -> str:
    """The video of ``round_`` (and of ``seat``) at its table; "" where the table has no template."""
    table = round_.table
    return video_link(table.video_link, table=table.code, round_id=round_.round_id, dealt_at=round_.dealt_at,
                      gaming_day=round_.gaming_day, seat=seat)
