"""``manage.py preflop_seen``: the table it writes is the shape the test reads, the same arguments
give the same table, and arguments out of range are refused with a message."""

from __future__ import annotations

import numpy as np
import pytest
from django.core.management import CommandError, call_command


def test_too_few_deals_are_refused_with_a_message():
    with pytest.raises(CommandError, match="--deals must be at least 100"):
        call_command("preflop_seen", "--deals", "10")


@pytest.mark.slow
def test_the_written_table_is_whole_and_made_again_alike(tmp_path):
    first, second = tmp_path / "a.npz", tmp_path / "b.npz"
    for out in (first, second):
        call_command("preflop_seen", "--deals", "100", "--processes", "2", "--write", "--output", str(out))
    with np.load(first) as a, np.load(second) as b:
        assert a["equity"].shape == (52, 52, 52) and int(a["deals"]) == 100
        assert np.array_equal(a["equity"], b["equity"], equal_nan=True)
        assert not np.isnan(a["equity"][0, 5, 9])
