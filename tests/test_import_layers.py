"""The folders are the layers: each imports only its own layer and the ones below it.

Bottom to top: the game and the books' arithmetic (plain Python), the shared infrastructure, the wire
contract, the audit trail, progressive, rounds, the auditors' side, the HTTP
API and the project shell. A module belongs to the deepest folder of
``LAYERS`` that holds it (``rounds/wire``, not ``rounds``). Read from the
source (no import is run), so a new import that goes the wrong way fails
here before anyone has to untangle it. The models' relations named by a string
("rounds.Round") and the migrations' dependencies are read too, and held to the
same layers but for the references ``KNOWN_UPWARD`` names.
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


# ---- the models' own references: relations named by a string and migrations' dependencies ------

RELATIONS = {"ForeignKey", "OneToOneField", "ManyToManyField"}


def _named_relations() -> set[tuple[str, str]]:
    """``(module, app label)`` for every relation a module declares to a model named ``"app.Model"``,
    and for every migration's dependency on another app's migrations: references the import walk
    above cannot see, which tie the apps together just as an import does."""
    found = set()
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            module = ".".join(parts)
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in RELATIONS:
                    targets = [*node.args[:1], *(k.value for k in node.keywords if k.arg == "to")]
                    for target in targets:
                        if isinstance(target, ast.Constant) and isinstance(target.value, str) and "." in target.value:
                            found.add((module, target.value.split(".")[0]))
                if "migrations" in parts and isinstance(node, ast.Assign) and any(
                        getattr(t, "id", "") == "dependencies" for t in node.targets):
                    for element in getattr(node.value, "elts", []):
                        if isinstance(element, ast.Tuple) and isinstance(element.elts[0], ast.Constant):
                            found.add((module, element.elts[0].value))
    return {(module, app) for module, app in found if app in PACKAGES and app != module.split(".")[0]}


NAMED = _named_relations()

# The references that still run up a layer, by the app that makes them and the app they name, each
# with why (issue 47 names them; new ones fail the test below):
KNOWN_UPWARD = {
    # A pool's ledger event names the round that moved it, and a meter reading the table that sent it
    # (progressive.models and the migrations that made those columns).
    ("progressive", "rounds"),
    # The records' guard functions (table_audit_refuse_change, table_audit_refuse_other_changes) were
    # made by audit's migrations 0003 and 0010; the guards of the lower apps' records call them, so
    # their migrations depend on those. Migrations only: no model of these apps names audit's.
    ("progressive", "audit"),
    ("rounds", "audit"),
    ("trail", "audit"),
}


def test_relations_and_migrations_refer_only_down_the_layers_but_the_known_ones():
    upward = {(module, app) for module, app in NAMED if LAYERS.index(app) > layer_of(module)}
    assert {(module.split(".")[0], app) for module, app in upward} == KNOWN_UPWARD
    assert {module for module, app in upward if app == "audit"} == {
        module for module, app in upward if app == "audit" and ".migrations." in module}
    assert {module for module, app in upward if ".migrations." not in module} == {"progressive.models"}


def test_a_relation_named_by_a_string_is_found():
    assert ("audit.models", "rounds") in NAMED
    assert ("audit.migrations.0012_game_protection", "rounds") in NAMED
