"""Model instances for rows the service is about to write itself, built without ``Model.__init__``.

Storing a round builds about ten model instances (the round, its key, four
seats, findings, meter events, the kept body, the audit event), whose
columns ``infra.sql.insert`` then reads. ``Model.__init__`` walks every
field, resolves each keyword through descriptors and sends two signals; on
the batch path it was much of the web worker's CPU (docs/SCALING.md). ``new_row`` gives the
same instance, attribute for attribute, for a fraction of that: each value
is set directly, a related object is cached where Django's descriptor would
cache it, every other field gets its default. What it does not do: send
``pre_init``/``post_init`` (no model this is used for has a receiver).
"""

from __future__ import annotations

from functools import cache

from django.db.models import Model
from django.db.models.base import ModelState


@cache
def _layout(model: type[Model]) -> tuple[dict[str, str], tuple, frozenset]:
    fields = model._meta.concrete_fields
    relations = {f.name: f.attname for f in fields if f.is_relation}
    # A default that is not made by a callable is the same value every time:
    # taken once here, not through ``Field.get_default`` for every row.
    defaults = tuple(
        (f.attname, f.get_default if f.has_default() and callable(f.default) else None,
         None if f.has_default() and callable(f.default) else f.get_default())
        for f in fields
    )
    names = frozenset({"pk", *relations, *(f.attname for f in fields), *(f.name for f in fields)})
    return relations, defaults, names


def new_row(model: type[Model], /, **values) -> Model:
    """``model(**values)`` for a row about to be inserted: the same instance, built cheaply."""
    relations, defaults, names = _layout(model)
    unknown = values.keys() - names
    if unknown:
        raise TypeError(f"{model.__name__} has no field {', '.join(sorted(unknown))}")
    row = model.__new__(model)
    state = row._state = ModelState()
    data = row.__dict__
    for name, value in values.items():
        attname = relations.get(name)
        if attname is not None:
            data[attname] = None if value is None else value.pk
            state.fields_cache[name] = value
        elif name == "pk":
            data[model._meta.pk.attname] = value
        else:
            data[name] = value
    for attname, make, default in defaults:
        if attname not in data:
            data[attname] = default if make is None else make()
    return row
