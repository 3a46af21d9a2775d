"""The folders are the layers: each imports only its own layer and the ones below it.

Bottom to top: the game and the books' arithmetic (plain Python), the shared infrastructure, the wire
contract, the audit trail, progressive, rounds, the auditors' side, the HTTP
API and the project shell. A module belongs to the deepest folder of
``LAYERS`` that holds it (``rounds/wire``, not ``rounds``). Read from the
source (no import is run), so a new import that goes the wrong way fails
here before anyone has to untangle it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

LAYERS = (
    "game",  # cards, hands, settlement, strategy, game protection's values: plain Python
    "books",  # the report's sums, figures, bands, variance tests and statistics: plain Python
    "infra",  # SQL, locks, partitions, the gaming day, money columns, CSV, charts, the API's shared pieces
    "rounds/wire",  # the contract with the tables: the round record, its answer, the wire's fields
    "trail",  # the hash-chained log every app writes, the records' guards, dual control
    "progressive",  # pools, versions, the meter and its ledger
    "rounds",  # tables, configurations, rounds, findings
    "audit",  # reconciliation, variance tests, game protection, the tonight page, exports
    "api",  # the HTTP API over the apps, a table's key and the rates
    "casino",  # the shell: settings, URLs, middleware, admin site, health, metrics, Celery, the demo
)
PACKAGES = sorted({layer.split("/")[0] for layer in LAYERS})

# Plain Python, no Django: the engine and game protection's mathematics (game), and the
# report's arithmetic and statistics (books).
PURE = ("game", "books")


def _within(module: str, packages) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def layer_of(module: str) -> int:
    """The index in ``LAYERS`` of the deepest layer folder that holds ``module``."""
    path = module.replace(".", "/")
    held = [i for i, layer in enumerate(LAYERS) if path == layer or path.startswith(layer + "/")]
    return max(held, key=lambda i: LAYERS[i].count("/"))


def _imports() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            folder = parts[:-1]
            module = ".".join(parts if parts[-1] != "__init__" else parts[:-1])
            targets = edges.setdefault(module, set())
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.ImportFrom):
                    base = folder[: len(folder) - node.level + 1] if node.level else []
                    target = ".".join([*base, *([node.module] if node.module else [])])
                    names = [f"{target}.{a.name}" for a in node.names]
                elif isinstance(node, ast.Import):
                    names = [a.name for a in node.names]
                else:
                    continue
                targets.update(n for n in names if n.split(".")[0] in PACKAGES)
    return edges


EDGES = _imports()


def test_every_module_of_the_project_is_in_a_layer():
    assert EDGES and all(layer_of(module) >= 0 for module in EDGES)


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layer_imports_only_itself_and_the_layers_below(layer):
    here = LAYERS.index(layer)
    upward = sorted(
        f"{source} -> {target}"
        for source, targets in EDGES.items() if layer_of(source) == here
        for target in targets if layer_of(target) > here
    )
    assert upward == []


def test_the_layers_are_the_folders():
    """Each layer is a folder of the project, and every top-level folder of the code is one."""
    assert all((ROOT / layer).is_dir() and (ROOT / layer / "__init__.py").exists() for layer in LAYERS)
    code = {path.parent.name for path in ROOT.glob("*/__init__.py")} - {"tests", "bench"}
    assert code == set(PACKAGES)


def test_a_wrong_way_import_is_found():
    """The walk sees an import that runs up: the engine reading a model would be caught."""
    assert layer_of("game.cards") < layer_of("rounds.wire.contract") < layer_of("rounds.models") < layer_of("audit.tonight")
    assert layer_of("api.progressive.views") > layer_of("audit.models") > layer_of("progressive.ledger")
    assert "api.authentication.EVERYONE" in EDGES["api.progressive.views"]


def test_the_pure_core_imports_nothing_of_the_project_but_itself():
    def wrong(sources, allowed):
        return sorted(f"{source} -> {target}" for source, targets in EDGES.items() if _within(source, sources)
                      for target in targets if not _within(target, allowed))

    assert wrong(["game"], ["game"]) == []
    assert wrong(["game.protection"], ["game.protection", "game"]) == []
    assert wrong(["books"], ["books", "game"]) == []
    assert wrong(PURE, PURE) == []
