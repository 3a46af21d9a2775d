"""The supervisors' form for a configuration's next version (the admin's only edit of one)."""

from __future__ import annotations

import json

from django import forms

from game.evaluator import CATEGORIES
from progressive.models import Pool

CATEGORY_CHOICES = [(name, name.replace("_", " ")) for name in CATEGORIES]


class PayTableField(forms.CharField):
    """A pay table as JSON: ``{"royal_flush": "500", ...}``."""

    widget = forms.Textarea(attrs={"rows": 8, "cols": 60})

    def to_python(self, value):
        text = super().to_python(value)
        try:
            table = json.loads(text or "{}")
        except ValueError:
            raise forms.ValidationError("A JSON object of hand category to pay.") from None
        if not isinstance(table, dict):
            raise forms.ValidationError("A JSON object of hand category to pay.")
        return table


class ConfigVersionForm(forms.Form):
    effective_from = forms.DateTimeField(help_text="No round of this configuration may be dealt after it yet.")
    currency = forms.CharField(max_length=3)
    minor_unit = forms.CharField()
    unit = forms.CharField()
    ante_min = forms.CharField()
    ante_max = forms.CharField()
    trips_min = forms.CharField()
    trips_max = forms.CharField()
    blind_pays = PayTableField()
    trips_pays = PayTableField()
    aggregate_limit = forms.CharField(required=False)
    dealer_qualifier = forms.ChoiceField(choices=CATEGORY_CHOICES)
    one_hand_per_player = forms.BooleanField(required=False)
    pool = forms.ModelChoiceField(Pool.objects.all(), required=False, to_field_name="code")
    note = forms.CharField(max_length=200, help_text="Why the rules change.")

    @classmethod
    def initial_from(cls, version) -> dict:
        fields = ("currency", "minor_unit", "unit", "ante_min", "ante_max", "trips_min", "trips_max",
                  "aggregate_limit", "dealer_qualifier", "one_hand_per_player")
        initial = {name: getattr(version, name) for name in fields}
        initial["minor_unit"] = version.minor_unit.normalize()
        initial["blind_pays"] = json.dumps(version.blind_pays, indent=1)
        initial["trips_pays"] = json.dumps(version.trips_pays, indent=1)
        initial["pool"] = version.pool.code if version.pool_id else None
        return initial
