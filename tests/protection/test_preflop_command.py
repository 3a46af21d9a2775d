"""``manage.py preflop_values``: the table it writes, written again the same, and its refusals."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from game.protection import preflop


@pytest.mark.slow
def test_the_same_arguments_write_the_same_table(tmp_path, capsys):
    first, second = tmp_path / "a.csv", tmp_path / "b.csv"
    for path in (first, second):
        call_command("preflop_values", "--flops", "2", "--close", "0", "--write", "--output", str(path))
    assert first.read_bytes() == second.read_bytes()
    table = preflop.read_table(first)
    assert len(table.classes) == 169 and {c.method for c in table.classes.values()} == {"sampled"}
    assert table.pays == preflop.shipped_table().pays
    header = first.read_text().splitlines()[:6]
    assert any("--flops 2 --close 0 --seed 2185" in line for line in header)
    assert "169 hands" in capsys.readouterr().out


def test_chosen_hands_are_printed_and_not_written(capsys):
    call_command("preflop_values", "--hands", "AA", "72o", "--flops", "3")
    out = capsys.readouterr().out
    assert "AA" in out and "72o" in out and "2 hands" in out


@pytest.mark.parametrize("arguments, message", [
    (["--flops", "1"], "at least 2"),
    (["--hands", "AX"], "unknown starting hands: AX"),
    (["--hands", "AA", "--write"], "--write ships every hand"),
])
def test_wrong_arguments_are_refused(arguments, message):
    with pytest.raises(CommandError, match=message):
        call_command("preflop_values", *arguments)
