"""Template filters for staff pages: money with its currency, and a gap as hours and minutes."""

from __future__ import annotations

from datetime import timedelta

from django import template

from infra.money_display import money as money_text

register = template.Library()


@register.filter
def money(amount, currency: str = "") -> str:
    """``{{ amount|money:"SEK" }}`` → ``12,500.00 SEK``."""
    return money_text(amount, currency)


@register.filter
def duration(gap: timedelta) -> str:
    """``1:05 h`` for an hour and five minutes, ``42 min`` below an hour."""
    minutes = int(gap.total_seconds() // 60)
    return f"{minutes // 60}:{minutes % 60:02d} h" if minutes >= 60 else f"{minutes} min"
