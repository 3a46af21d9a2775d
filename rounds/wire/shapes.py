"""How one list of fields becomes a fast reader, a DRF serializer, a fast writer and a schema.

``rounds.wire.contract`` states each field of the round record and of the
answer once, as a kind below with its bounds, default and whether it may be
without a value. From a record's fields come

- ``Record.read``: the canonical record of a plainly well-formed body, built
  field by field without DRF's machinery (the hot path), or ``NotPlain``;
- ``Record.serializer()``: the DRF serializer that reads every other body and
  words each error, and gives the same canonical record (held to it by
  tests/api/test_record_fast.py);

and from an answer's fields

- ``Answer.write``: the answer's JSON data from the stored rows (the hot path);
- ``Answer.serializer()``: the DRF serializer that documents it in the
  OpenAPI schema, and renders through ``write``.

A kind knows how to make its DRF field, how to read its value plainly, how to
turn DRF's value into the canonical one, and how to write it from a row.

Both hot paths must cost no more than the hand-written code they replace
(bench/wire.py puts them side by side). A reader is a closure per field,
made once per shape, which was as fast: a field is a dictionary lookup and a
call, as it was by hand. A writer built the same way was slower than the
hand-written dict display, so a writer *is* a dict display: each kind gives
the expression of its value, and the shape's writer is compiled from them
once (``Answer.writer_source`` shows what it runs).
"""

from __future__ import annotations

import functools
import linecache
from collections.abc import Callable, Iterable, Mapping
from dataclasses import KW_ONLY, dataclass

from django.utils import timezone
from rest_framework import serializers
from rest_framework.fields import empty

from .fields import (
    CARD_TEXTS,
    MONEY_TEXTS,
    AmountField,
    IdField,
    MoneyField,
    NoneIfBlankCharField,
    OffsetDateTimeField,
    StoredCardsField,
    cards_field,
    split_cards,
)
from .memo import BoundedMemo

MISSING = empty  # a field the body left out (DRF's own marker, so DRF's values pass through)
NO_ROWS: Mapping = {}


class NotPlain(Exception):
    """Not plainly well-formed: the serializer judges it (and words any error)."""


# ---- the kinds of field ---------------------------------------------------------------------


@dataclass(frozen=True)
class Field:
    """One field of a shape, by the name it has on the wire.

    ``optional``: may be without a value. A record may leave it out, send
    null, or (text) send it blank: all read as None. An answer writes null.
    ``source`` (answers): where a row keeps it, a dotted attribute path
    ("table.code"); "*" is the row itself; by default the field's name.
    """

    name: str
    _: KW_ONLY
    optional: bool = False
    source: str = ""

    # -- records
    def record_field(self) -> serializers.Field:
        raise TypeError(f"{type(self).__name__} is not a field of a record")

    def reader(self) -> Callable:
        raise TypeError(f"{type(self).__name__} is not a field of a record")

    def canonical(self, value):
        """The canonical value of what this field's DRF field gave (``MISSING``: left out)."""
        if value is MISSING or (self.optional and not value):
            return None
        return value

    # -- answers
    def answer_field(self, generic: bool = False) -> serializers.Field:
        """The DRF field that documents it (``generic``: nested answers render through DRF's machinery)."""
        raise TypeError(f"{type(self).__name__} is not a field of an answer")

    def expression(self, value: str, env: dict) -> str:
        """Python source of the answer's value, ``value`` being the source of the row's.

        Helpers the expression names go into ``env``, the globals of the
        writer made from it (``Answer.writer``).
        """
        raise TypeError(f"{type(self).__name__} is not a field of an answer")

    takes_rows = False  # it writes rows that may be given for the answer (``Many``)

    def value_source(self, of_mapping: bool) -> str:
        """Python source of the row's value: ``row.table.code``, ``row["ante"]``, or ``row``."""
        source = self.source or self.name
        if source == "*":
            return "row"
        if not all(part.isidentifier() for part in source.split(".")):
            raise ValueError(f"{self.name}: {source!r} is not an attribute path")
        return f"row[{source!r}]" if of_mapping else f"row.{source}"

    def drf_source(self) -> dict:
        source = self.source or self.name
        return {} if source == self.name else {"source": source}

    def _optional_reader(self, read: Callable) -> Callable:
        if not self.optional:
            return read

        def read_optional(value):
            if value is None or value is MISSING:
                return None
            return read(value)

        return read_optional


@dataclass(frozen=True)
class Text(Field):
    """Text a table sends is an id (ROUND_RECORD.md): printable, refused for a control character."""

    max_length: int | None = None

    def record_field(self):
        return IdField(
            max_length=self.max_length, required=not self.optional,
            allow_null=self.optional, allow_blank=self.optional,
        )

    def reader(self):
        max_length, optional = self.max_length or 10**9, self.optional

        # DRF trims text (and refuses a number, as it refuses anything not a
        # string): only printable ASCII that needs no trimming is plain.
        def read(value):
            if optional and (value is None or value is MISSING or value == ""):
                return None
            if (
                type(value) is not str or not value or len(value) > max_length or not value.isascii()
                or value != value.strip() or not value.isprintable()
            ):
                raise NotPlain
            return value

        return read

    def answer_field(self, generic=False):
        if self.optional:
            return NoneIfBlankCharField(allow_null=True, **self.drf_source())
        return serializers.CharField(**self.drf_source())

    def expression(self, value, env):
        return f"({value} or None)" if self.optional else value


@dataclass(frozen=True)
class Integer(Field):
    minimum: int | None = None
    maximum: int | None = None

    def record_field(self):
        return serializers.IntegerField(
            min_value=self.minimum, max_value=self.maximum,
            required=not self.optional, allow_null=self.optional,
        )

    def reader(self):
        low = -(10**18) if self.minimum is None else self.minimum
        high = 10**18 if self.maximum is None else self.maximum

        def read(value):
            if type(value) is not int or not low <= value <= high:
                raise NotPlain
            return value

        return self._optional_reader(read)

    def canonical(self, value):
        return None if value is MISSING else value

    def answer_field(self, generic=False):
        return serializers.IntegerField(allow_null=self.optional, **self.drf_source())

    def expression(self, value, env):
        return value


@dataclass(frozen=True)
class Choice(Field):
    choices: tuple = ()  # values, or (value, label) pairs

    def values(self) -> frozenset:
        return frozenset(c[0] if isinstance(c, tuple) else c for c in self.choices)

    def record_field(self):
        return serializers.ChoiceField(choices=list(self.choices))

    def reader(self):
        values = self.values()

        def read(value):
            if type(value) is not str or value not in values:
                raise NotPlain
            return value

        return read

    def answer_field(self, generic=False):
        return serializers.ChoiceField(
            choices=list(self.choices), allow_null=self.optional, **self.drf_source())

    def expression(self, value, env):
        return value


@dataclass(frozen=True)
class Flag(Field):
    default: bool = False  # records: what a flag left out is

    def record_field(self):
        return serializers.BooleanField(required=False, default=self.default)

    def reader(self):
        default = self.default

        def read(value):
            if value is MISSING:
                return default
            if value is not True and value is not False:
                raise NotPlain
            return value

        return read

    def canonical(self, value):
        return self.default if value is MISSING else bool(value)

    def answer_field(self, generic=False):
        return serializers.BooleanField(allow_null=self.optional, **self.drf_source())

    def expression(self, value, env):
        return value if self.optional else f"bool({value})"


@dataclass(frozen=True)
class Amount(Field):
    """An amount a table sends: decimal text or an integer, canonical as two-decimal text."""

    whole_digits: int = 12
    signed: bool = False
    default: str | None = None  # canonical text of an amount left out; None: required

    def record_field(self):
        if self.default is None:
            return AmountField(signed=self.signed, whole_digits=self.whole_digits)
        return AmountField(signed=self.signed, whole_digits=self.whole_digits, required=False,
                           default=self.default)

    def reader(self):
        texts = _amount_texts(self.whole_digits, self.signed)
        default = self.default

        def read(value):
            kind = type(value)
            if kind is str or kind is int:
                text = texts[value]
                if text is not None:
                    return text
            elif value is MISSING and default is not None:
                return default
            raise NotPlain

        return read

    def canonical(self, value):
        return self.default if value is MISSING else value


@functools.cache
def _amount_texts(whole_digits: int, signed: bool) -> BoundedMemo:
    """The canonical text of each amount (str or int) an ``AmountField`` of that kind
    takes; None for one it refuses.

    Tables send the same few amounts all evening: each is judged once per
    process, by the serializer's own field, and remembered.
    """
    field = AmountField(signed=signed, whole_digits=whole_digits)

    def text(value) -> str | None:
        try:
            return field.to_internal_value(value)
        except serializers.ValidationError:
            return None

    return BoundedMemo(text)


@dataclass(frozen=True)
class Money(Field):
    """An amount an answer writes, as stored, in its canonical two-decimal text."""

    max_digits: int = 20

    def answer_field(self, generic=False):
        return MoneyField(max_digits=self.max_digits, allow_null=self.optional, **self.drf_source())

    def expression(self, value, env):
        env["money"] = MONEY_TEXTS
        return f"(None if (v := {value}) is None else money[v])" if self.optional else f"money[{value}]"


@dataclass(frozen=True)
class Cards(Field):
    """A number of cards: on the wire a list of codes ("Ah"), in a row their text ("AhKh")."""

    count: int = 0

    def record_field(self):
        return cards_field(self.count, required=not self.optional, allow_null=self.optional)

    def reader(self):
        count, texts = self.count, CARD_TEXTS

        def read(value):
            if type(value) is not list or len(value) != count:
                raise NotPlain
            try:
                cards = [texts.get(card) for card in value]
            except TypeError:  # a list or a dict where a card belongs
                raise NotPlain from None
            if None in cards:
                raise NotPlain
            return cards

        return self._optional_reader(read)

    def answer_field(self, generic=False):
        return StoredCardsField(count=self.count, allow_null=self.optional, **self.drf_source())

    def expression(self, value, env):
        env["split_cards"] = split_cards
        return f"split_cards({value})"


@dataclass(frozen=True)
class Moment(Field):
    """A moment: sent with its UTC offset (kept as sent), answered in the service's time zone."""

    def record_field(self):
        return OffsetDateTimeField()

    def reader(self):
        field = OffsetDateTimeField()

        def read(value):
            try:
                return field.to_internal_value(value)
            except serializers.ValidationError:
                raise NotPlain from None

        return read

    def answer_field(self, generic=False):
        return serializers.DateTimeField(allow_null=self.optional, **self.drf_source())

    def expression(self, value, env):
        # The current time zone is looked up once an answer, not once a moment.
        env.update(moment_text=moment_text, current_zone=timezone.get_current_timezone)
        env.setdefault("prelude", {})["zone"] = "zone = current_zone()"
        return f"moment_text({value}, zone)"


_MOMENT = serializers.DateTimeField()


def moment_text(value, zone) -> str | None:
    """``DateTimeField``'s ISO 8601 text of ``value`` in ``zone``, the current time zone (UTC as ``Z``).

    The same text as DRF's, without DRF's look-ups of settings and zone for each field.
    """
    if not value or value.tzinfo is None:
        return _MOMENT.to_representation(value)
    text = value.astimezone(zone).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


@dataclass(frozen=True)
class Day(Field):
    def answer_field(self, generic=False):
        return serializers.DateField(allow_null=self.optional, **self.drf_source())

    def expression(self, value, env):
        env["day_text"] = _DAY.to_representation
        return f"day_text({value})"


_DAY = serializers.DateField()


@dataclass(frozen=True)
class Obj(Field):
    """A nested object of another shape.

    Answers: ``call`` when the source is a method that gives the object (or
    None); ``when`` names an attribute of the row without which there is no
    object (null).
    """

    shape: Shape | None = None
    call: bool = False
    when: str = ""

    def record_field(self):
        return self.shape.serializer()(required=not self.optional, allow_null=self.optional)

    def reader(self):
        return self._optional_reader(self.shape.reader)

    def answer_field(self, generic=False):
        nested = self.shape.serializer(generic=generic)
        return nested(allow_null=self.optional, present_when=self.when, **self.drf_source())

    @property
    def takes_rows(self) -> bool:
        return self.shape.takes_rows

    def expression(self, value, env):
        if self.when and not self.when.isidentifier():
            raise ValueError(f"{self.name}: {self.when!r} is not an attribute")
        write = self.shape.writer_name(env)
        if self.call:
            value = f"{value}()"
        rows = ", rows" if self.takes_rows else ""
        if self.when:
            return f"(None if row.{self.when} is None else {write}({value}{rows}))"
        if self.optional:
            return f"(None if (v := {value}) is None else {write}(v{rows}))"
        return f"{write}({value}{rows})"


@dataclass(frozen=True)
class Many(Field):
    """A list of objects of another shape.

    Answers: the rows related to the row by ``source`` (``round_.seats``), or
    those given for the answer under that name, as given.
    """

    shape: Shape | None = None
    min_length: int = 0
    max_length: int | None = None

    def record_field(self):
        bounds = {"allow_empty": self.min_length == 0, "max_length": self.max_length}
        if self.min_length > 1:
            bounds["min_length"] = self.min_length
        return self.shape.serializer()(many=True, **bounds)

    def reader(self):
        read_item, low = self.shape.reader, self.min_length
        high = 10**9 if self.max_length is None else self.max_length

        def read(value):
            if type(value) is not list or not low <= len(value) <= high:
                raise NotPlain
            return [read_item(item) for item in value]

        return read

    def canonical(self, value):
        return value

    def answer_field(self, generic=False):
        return self.shape.serializer(generic=generic)(many=True, **self.drf_source())

    takes_rows = True

    def expression(self, value, env):
        source = self.source or self.name
        if not source.isidentifier():
            raise ValueError(f"{self.name}: the rows of {source!r} are not the row's own")
        env["rows_of"] = rows_of
        return f"[{self.shape.writer_name(env)}(item) for item in rows_of(rows, {source!r}, row)]"


def rows_of(rows: Mapping, name: str, row) -> Iterable:
    """The rows given for the answer under ``name``, as given; otherwise the row's own
    (``row.<name>.all()``)."""
    given = rows.get(name)
    if given is not None:
        return given
    # Rows prefetched with the row (selectors.round_list) are what .all() would
    # hand back, but the related manager Django builds on every access to do so
    # costs more than writing them: read where the prefetch keeps them.
    prefetched = getattr(row, "_prefetched_objects_cache", None)
    if prefetched is not None and name in prefetched:
        return prefetched[name]
    return getattr(row, name).all()


# ---- shapes ---------------------------------------------------------------------------------


class Shape:
    """A named list of fields: one object of the record or of the answer.

    Its serializer class is named after it (``Seat`` → ``SeatSerializer``),
    and so is its component in the OpenAPI schema.
    """

    def __init__(self, name: str, fields: Iterable[Field], *, doc: str = ""):
        self.name = name
        self.fields: tuple[Field, ...] = tuple(fields)
        self.doc = doc
        names = [f.name for f in self.fields]
        if len(set(names)) != len(names):
            raise ValueError(f"{name}: a field is named twice in {names}")

    @property
    def names(self) -> frozenset[str]:
        return frozenset(f.name for f in self.fields)

    def amended(self, *fields: Field) -> Shape:
        """A copy with ``fields`` in place of those of their names, or added at the end."""
        by_name = {f.name: f for f in fields}
        kept = [by_name.pop(f.name, f) for f in self.fields]
        return self._copy([*kept, *by_name.values()])

    def _copy(self, fields: list[Field]) -> Shape:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {[f.name for f in self.fields]})"


class Record(Shape):
    """An object a table sends.

    ``unknown``: None to ignore names the shape does not have (as DRF does),
    or the error for each one, "{names}" standing for the shape's names.
    ``rules``: what no one field can say (a function of the canonical object
    to its errors, empty when none), for both the reader and the serializer.
    """

    def __init__(self, name: str, fields: Iterable[Field], *, unknown: str | None = None,
                 rules: Callable[[dict], dict] | None = None, doc: str = ""):
        super().__init__(name, fields, doc=doc)
        self.unknown = unknown
        self.rules = rules

    def _copy(self, fields):
        return Record(self.name, fields, unknown=self.unknown, rules=self.rules, doc=self.doc)

    def read(self, value) -> dict:
        """The canonical object of a plainly well-formed ``value``; ``NotPlain`` for anything else."""
        return self.reader(value)

    def canonical(self, attrs: Mapping) -> dict:
        """The canonical object of what this shape's serializer read (nested objects already are)."""
        return {f.name: f.canonical(attrs.get(f.name, MISSING)) for f in self.fields}

    @functools.cached_property
    def reader(self) -> Callable[[object], dict]:
        """``read``, made once: each field's reader in turn, then the rules."""
        parts = tuple((f.name, f.reader()) for f in self.fields)
        names = self.names if self.unknown is not None else None
        rules = self.rules

        def read(value):
            if type(value) is not dict or (names is not None and not value.keys() <= names):
                raise NotPlain
            get = value.get
            record = {name: read_field(get(name, MISSING)) for name, read_field in parts}
            if rules is not None and rules(record):
                raise NotPlain
            return record

        return read

    @functools.cached_property
    def _serializer(self) -> type[serializers.Serializer]:
        fields = {f.name: f.record_field() for f in self.fields}
        return _serializer_class(self, RecordSerializer, fields)

    def serializer(self) -> type[serializers.Serializer]:
        """The serializer class (one, as the schema names it)."""
        return self._serializer


class Answer(Shape):
    """An object the service answers, written from a row (``of_mapping``: from a dict)."""

    def __init__(self, name: str, fields: Iterable[Field], *, of_mapping: bool = False, doc: str = ""):
        super().__init__(name, fields, doc=doc)
        self.of_mapping = of_mapping

    def _copy(self, fields):
        return Answer(self.name, fields, of_mapping=self.of_mapping, doc=self.doc)

    @property
    def takes_rows(self) -> bool:
        return any(f.takes_rows for f in self.fields)

    def write(self, row, rows: Mapping | None = None) -> dict:
        """The answer's data for ``row``; ``rows``: related rows given by name, used as given."""
        return self.writer(row, NO_ROWS if rows is None else rows)

    @functools.cached_property
    def writer(self) -> Callable:
        """``write`` as one function made from the fields' expressions: a dict display,
        as a hand-written writer would be (``writer_source`` shows it)."""
        env: dict = {"NO_ROWS": NO_ROWS}
        source = self.writer_code(env)
        filename = f"<answer writer {self.name}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), env)
        return env["write"]

    def writer_code(self, env: dict) -> str:
        items = [f"        {f.name!r}: {f.expression(f.value_source(self.of_mapping), env)},\n"
                 for f in self.fields]
        prelude = [f"    {line}\n" for line in env.pop("prelude", {}).values()]
        return "".join(["def write(row, rows=NO_ROWS):\n", *prelude, "    return {\n", *items, "    }\n"])

    @property
    def writer_source(self) -> str:
        """The source of ``writer``, to read."""
        return self.writer_code({})

    def writer_name(self, env: dict) -> str:
        """The name under which ``env`` holds this shape's writer (for a field that nests it)."""
        name = f"write_{self.name}"
        while env.get(name, self.writer) is not self.writer:
            name += "_"
        env[name] = self.writer
        return name

    def serializer(self, *, generic: bool = False) -> type[serializers.Serializer]:
        """The serializer class; ``generic``: one that renders through DRF's own machinery
        instead of ``write`` (tests compare the two). One class each, as the schema names it."""
        made = self.__dict__.setdefault("_serializers", {})
        if generic not in made:
            fields = {f.name: f.answer_field(generic) for f in self.fields}
            made[generic] = _serializer_class(
                self, GenericAnswerSerializer if generic else AnswerSerializer, fields)
        return made[generic]


def _serializer_class(shape: Shape, base: type, fields: dict) -> type[serializers.Serializer]:
    name = f"{shape.name}Serializer"
    namespace = {**fields, "shape": shape, "__module__": "rounds.wire.serializers", "__qualname__": name,
                 "__doc__": shape.doc}
    return type(base)(name, (base,), namespace)


# The bases of the serializers made from shapes. No docstrings: drf-spectacular
# would take a base's for the description of every component made from it.


class RecordSerializer(serializers.Serializer):
    # A record's fields, refusals of unknown names, canonical form and rules.

    shape: Record

    def to_internal_value(self, data):
        shape = self.shape
        if shape.unknown is not None and isinstance(data, Mapping):
            unknown = sorted(set(data) - shape.names)
            if unknown:
                message = shape.unknown.format(names=", ".join(f.name for f in shape.fields))
                raise serializers.ValidationError({name: [message] for name in unknown})
        return shape.canonical(super().to_internal_value(data))

    def validate(self, attrs):
        errors = self.shape.rules(attrs) if self.shape.rules is not None else None
        if errors:
            raise serializers.ValidationError(errors)
        return attrs


class GenericAnswerSerializer(serializers.Serializer):
    # An answer's fields, rendered one by one by DRF.

    shape: Answer

    def __init__(self, *args, present_when: str = "", **kwargs):
        self.present_when = present_when
        super().__init__(*args, **kwargs)

    def get_attribute(self, instance):
        value = super().get_attribute(instance)
        if self.present_when and getattr(value, self.present_when) is None:
            return None
        return value


class AnswerSerializer(GenericAnswerSerializer):
    # An answer's fields, for the schema; rendered through the shape's writer.

    def to_representation(self, instance):
        return self.shape.write(instance)
