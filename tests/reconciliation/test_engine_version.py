"""The engine's version: a fingerprint of the code that judges a round, and of nothing else."""

from __future__ import annotations

import shutil

from audit.reconciliation.config import GAME_DIR, engine_files, engine_fingerprint, engine_version


def _game_copy(tmp_path):
    copy = tmp_path / "game"
    shutil.copytree(GAME_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_it_reads_the_verdict_and_everything_the_verdict_runs():
    names = {path.name for path in engine_files()}
    assert {"verdict.py", "versions.py", "settlement.py", "evaluator.py", "progressive.py", "validation.py",
            "rules.py", "cards.py"} <= names
    assert all(path.is_file() and path.parent == GAME_DIR for path in engine_files())


def test_a_change_to_how_a_round_is_settled_changes_it(tmp_path):
    copy = _game_copy(tmp_path)
    assert engine_fingerprint(copy) == engine_version()
    settlement = copy / "settlement.py"
    settlement.write_text(settlement.read_text() + "\n# a change\n")
    assert engine_fingerprint(copy) != engine_version()


def test_a_module_no_verdict_runs_leaves_it_as_it_was(tmp_path):
    copy = _game_copy(tmp_path)
    (copy / "bulk_strategy.py").write_text('"""Game protection\'s mathematics: judges no round."""\n')
    assert engine_fingerprint(copy) == engine_version()
