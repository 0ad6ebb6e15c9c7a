"""golden.yaml: the versioned, human-readable record of a finished judging round.

It keeps every judged pair (grade 0 included), who judged it, the grade scale and its wording,
the pool annotators saw, aliases, a coverage summary and the disagreements. Reading is strict:
YAML tags, anchors and aliases are refused, a repeated mapping key or an unknown key is a
problem naming its line and key path, and a grade outside the declared scale is an error. The
writer emits one line per judged pair, so a regrade is a one-line diff.

Modules: `record` (the Golden record and the schema's keys), `yamlnodes` (the strict YAML
composer and node reader), `data` (free-form data), `reader`, `writer`."""

from __future__ import annotations

from workbench.formats.golden.reader import read_golden
from workbench.formats.golden.record import (
    ANNOTATOR_KEYS,
    COVERAGE_STATUSES,
    JUDGMENT_KEYS,
    POOL_KEYS,
    QUERY_KEYS,
    ROLES,
    SCHEMA,
    TOP_KEYS,
    VERSION,
    Golden,
    expand_aliases,
)
from workbench.formats.golden.writer import golden_text, write_golden

__all__ = [
    "ANNOTATOR_KEYS",
    "COVERAGE_STATUSES",
    "JUDGMENT_KEYS",
    "POOL_KEYS",
    "QUERY_KEYS",
    "ROLES",
    "SCHEMA",
    "TOP_KEYS",
    "VERSION",
    "Golden",
    "expand_aliases",
    "golden_text",
    "read_golden",
    "write_golden",
]
