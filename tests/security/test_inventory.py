"""API9 Improper inventory management; API7 SSRF and API10 unsafe consumption, held to n/a.

The inventory is docs/openapi.yaml (tests/api/test_schema.py keeps it what
the code generates): every API route the service answers must be in it, and
the service must answer nothing else beyond the admin, the schema and its
docs, and the operators' probes (/healthz, /readyz) and scrape (/metrics).
SSRF and unsafe consumption of other APIs do not apply because the service
calls out to nothing; a test keeps it so, and a change that adds an
outbound call must face those two items first.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from django.urls import URLPattern, URLResolver, get_resolver

from tests.fuzz.schema import OPERATIONS
from tests.test_import_layers import LAYERS

ROOT = Path(__file__).resolve().parents[2]
APPS = tuple(sorted({layer.split("/")[0] for layer in LAYERS}))  # every folder of the code


def routes(patterns=None, prefix: str = "") -> list[str]:
    found = []
    for pattern in patterns if patterns is not None else get_resolver().url_patterns:
        text = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            found += routes(pattern.url_patterns, text)
        elif isinstance(pattern, URLPattern):
            found.append(text)
    return found


def normalised(route: str) -> str:
    """``api/v1/rounds/<int:pk>/`` and ``/api/v1/rounds/{id}/`` both as ``/api/v1/rounds/{}/``."""
    route = route.replace("^", "").replace("$", "").replace("\\.", ".")
    route = re.sub(r"<[^>]+>|\{[^}]+\}|\(\?P<[^>]+>[^)]*\)", "{}", route)
    return "/" + route.lstrip("/")


def test_every_api_route_is_in_the_schema_and_every_schema_path_is_routed():
    served = {normalised(r) for r in routes() if r.startswith("api/v1/")}
    documented = {normalised(label.split(" ", 1)[1]) for label in OPERATIONS}
    assert served == documented


def test_the_service_answers_nothing_but_the_api_its_schema_its_docs_the_admin_and_its_probes():
    tops = {normalised(r).split("/")[1] for r in routes()}
    # The probes and the scrape (casino.health, casino.metrics_endpoint; tests/test_health.py and
    # tests/test_metrics.py hold what they may say and to whom), outside the API and its schema.
    assert tops == {"admin", "api", "healthz", "readyz", "metrics"}
    api = {normalised(r) for r in routes() if r.startswith("api/") and not r.startswith("api/v1/")}
    assert api == {"/api/schema/", "/api/docs/"}


OUTBOUND = {"requests", "httpx", "aiohttp", "urllib3", "urllib.request", "http.client", "socket",
            "smtplib", "ftplib", "xmlrpc.client"}


def test_the_service_calls_out_to_nothing():
    imports = []
    for app in APPS:
        for path in (ROOT / app).rglob("*.py"):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                names = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module:
                    names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
                imports += [(path.relative_to(ROOT), n) for n in names if n in OUTBOUND]
    # The one exception, on purpose: the chain's anchor must leave the host to be worth
    # anything (audit/anchor_post.py, nothing else in it), and only to AUDIT_ANCHOR_URL.
    allowed = {(Path("audit/anchor_post.py"), "urllib.request")}
    assert [found for found in imports if found not in allowed] == []
    assert set(imports) == allowed, "the anchor's POST moved: look again at what may call out"
