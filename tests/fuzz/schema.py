"""The API as docs/openapi.yaml describes it: every operation, by its label ("POST /api/v1/rounds/")."""

from __future__ import annotations

from pathlib import Path

import schemathesis

SCHEMA_PATH = Path(__file__).resolve().parents[2] / "docs" / "openapi.yaml"
SCHEMA = schemathesis.openapi.from_path(SCHEMA_PATH)
OPERATIONS = {result.ok().label: result.ok() for result in SCHEMA.get_all_operations()}
# What a table may call; everything else is for casino staff.
TABLE_OPERATIONS = {"POST /api/v1/rounds/", "POST /api/v1/rounds/batch", "POST /api/v1/meter-readings/"}
