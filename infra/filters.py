"""Query filters that refuse what they cannot read, instead of ignoring it or passing it on."""

from __future__ import annotations

from datetime import timedelta, timezone

import django_filters
from django import forms
from django_filters.fields import IsoDateTimeField

MAX_UTC_OFFSET = timedelta(hours=14)


class _UtcIsoDateTimeField(IsoDateTimeField):
    def to_python(self, value):
        moment = super().to_python(value)
        if moment is None:
            return None
        offset = moment.utcoffset()
        if offset is not None and abs(offset) > MAX_UTC_OFFSET:
            raise forms.ValidationError("The UTC offset must be within ±14:00.", code="invalid")
        try:
            return moment.astimezone(timezone.utc)
        except OverflowError:  # year 1 at +00:01 is year 0 in UTC, which Python has not
            raise forms.ValidationError("The moment is outside the years 1 to 9999 in UTC.",
                                        code="invalid") from None


class UtcIsoDateTimeFilter(django_filters.IsoDateTimeFilter):
    """An ISO 8601 moment, compared in UTC: the database never sees the caller's offset.

    An offset beyond ±14:00 is no real clock and is refused by name.
    """

    field_class = _UtcIsoDateTimeField


class _StrictBooleanField(forms.NullBooleanField):
    # A plain text input: NullBooleanField's select widget turns anything unknown into None.
    widget = forms.TextInput
    TRUE, FALSE = {"true", "1", "yes"}, {"false", "0", "no"}

    def to_python(self, value):
        if value in (None, ""):
            return None
        text = str(value).strip().lower()
        if text in self.TRUE:
            return True
        if text in self.FALSE:
            return False
        raise forms.ValidationError("Either true or false.", code="invalid")

    def validate(self, value):
        pass


class StrictBooleanFilter(django_filters.BooleanFilter):
    """``?flagged=maybe`` is a 400, not a silently dropped filter."""

    field_class = _StrictBooleanField
