"""A record written once refuses, in Python, to be changed or deleted: every model that says so."""

from __future__ import annotations

import pytest
from django.apps import apps

from infra.models import ImmutableModel, ImmutableRecordError

IMMUTABLE = sorted((m for m in apps.get_models() if issubclass(m, ImmutableModel)), key=lambda m: m._meta.label)


def test_the_records_written_once_are_found():
    labels = {m._meta.label for m in IMMUTABLE}
    assert {"audit.TableCount", "progressive.MeterEvent", "progressive.PoolVersion"} <= labels


@pytest.mark.parametrize("model", IMMUTABLE, ids=lambda m: m._meta.label)
def test_a_stored_record_is_never_saved_again_nor_deleted(model):
    record = model()
    record._state.adding = False  # as one read from the database: refused before any statement
    with pytest.raises(ImmutableRecordError, match="never changed"):
        record.save()
    with pytest.raises(ImmutableRecordError, match="never deleted"):
        record.delete()
