"""Reading less of a JSON column: the database leaves a part out before it is sent.

A reconciliation report's figures are megabytes on a busy day, most of them
its players; a page that does not show them has the database read only the
parts it shows (``KeysOf``) or drop the others (``Without``), so they are
neither sent nor decoded.
"""

from __future__ import annotations

from django.db.models import Expression, F, Func, JSONField


def _plain(key: str) -> bool:
    """A key safe to write into SQL as it is: letters, digits and underscores."""
    return key.replace("_", "").isalnum()


class Without(Func):
    """``column`` without the parts at ``paths``, each a dotted path of plain keys (``"players"``,
    ``"year_to_date.dealers"``): PostgreSQL's ``jsonb #- text[]``, SQLite's ``json_remove``."""

    output_field = JSONField()

    def __init__(self, column: str, *paths: str) -> None:
        if not paths or not all(_plain(key) for path in paths for key in path.split(".")):
            raise ValueError(f"{paths!r}: each path is one or more plain keys joined by dots")
        self.paths = paths
        super().__init__(F(column))

    def as_postgresql(self, compiler, connection, **extra):
        column, params = compiler.compile(self.get_source_expressions()[0])
        removed = "".join(" #- %s::text[]" for _ in self.paths)
        return f"({column}{removed})", [*params, *(path.split(".") for path in self.paths)]

    def as_sqlite(self, compiler, connection, **extra):
        column, params = compiler.compile(self.get_source_expressions()[0])
        return f"json_remove({column}{', %s' * len(self.paths)})", [*params, *(f"$.{p}" for p in self.paths)]


class KeysOf(Expression):
    """Only the top-level ``keys`` of ``column``, as one object (a missing key as null), each key of
    ``trimmed`` without the keys it names where its value is an object.

    PostgreSQL decompresses a large value again for each path read out of it; here the value is
    made once (``|| '{}'``, in a subquery the planner may not fold) and the keys read out of that.
    Removing a part instead (``Without``) rebuilds the whole value: slower where it is large.
    """

    output_field = JSONField()

    def __init__(self, column: str, keys: list[str], trimmed: dict[str, list[str]] | None = None) -> None:
        super().__init__()
        self.column, self.keys, self.trimmed = F(column), list(keys), dict(trimmed or {})
        if not set(self.trimmed) <= set(self.keys):
            raise ValueError(f"{sorted(set(self.trimmed) - set(self.keys))}: trimmed keys not read")

    def get_source_expressions(self):
        return [self.column]

    def set_source_expressions(self, exprs):
        (self.column,) = exprs

    def resolve_expression(self, query=None, allow_joins=True, reuse=None, summarize=False, for_save=False):
        resolved = self.copy()
        resolved.column = self.column.resolve_expression(query, allow_joins, reuse, summarize, for_save)
        return resolved

    def as_sql(self, compiler, connection):
        column, params = compiler.compile(self.column)
        pairs = []
        for key in self._checked():
            # json_remove leaves a value that is not an object as it is.
            removed = "".join(f", '$.{part}'" for part in self.trimmed.get(key, ()))
            value = f"json_extract({column}, '$.{key}')"
            pairs.append(f"'{key}', json_remove({value}{removed})" if removed else f"'{key}', {value}")
        return f"json_object({', '.join(pairs)})", list(params) * len(self.keys)

    def as_postgresql(self, compiler, connection):
        column, params = compiler.compile(self.column)
        pairs = []
        for key in self._checked():
            value = f"one.value -> '{key}'"
            if parts := self.trimmed.get(key):
                removed = "".join(f" - '{part}'" for part in parts)
                value = f"CASE WHEN jsonb_typeof({value}) = 'object' THEN ({value}){removed} ELSE {value} END"
            pairs.append(f"'{key}', {value}")
        return (f"(SELECT jsonb_build_object({', '.join(pairs)}) "
                f"FROM (SELECT {column} || '{{}}'::jsonb AS value OFFSET 0) AS one)", list(params))

    def _checked(self) -> list[str]:
        for key in [*self.keys, *(part for parts in self.trimmed.values() for part in parts)]:
            if not _plain(key):
                raise ValueError(f"{key!r} is not a plain key")
        return self.keys
