"""Reading golden.yaml: the composed node tree, field by field, every problem with its line
and key path; a grade outside the declared scale is an error."""

from __future__ import annotations

import os
from typing import Any

import yaml

from workbench.core.collector import gc_paused
from workbench.core.errors import quoted
from workbench.core.limits import MAX_QUERY_CHARS
from workbench.core.model import DEFAULT_GRADE_SCALE, Query, Role
from workbench.formats.golden.data import BAD, plain_scalar, read_data
from workbench.formats.golden.judges import read_judge_labels, read_judges, read_label_versions
from workbench.formats.golden.record import (
    ANNOTATOR_KEYS,
    COVERAGE_STATUSES,
    JUDGMENT_KEYS,
    POOL_KEYS,
    QUERY_KEYS,
    ROLES,
    SCHEMA,
    TOP_KEYS,
    VERSIONS,
    Golden,
)
from workbench.formats.golden.yamlnodes import NodeReader, compose, is_null, key_path
from workbench.formats.textio import read_text


def read_golden(path: str | os.PathLike[str]) -> Golden:
    text = read_text(path)
    reader = NodeReader(str(path), text)
    with gc_paused():
        root = compose(text, reader)
    reader.problems.raise_if_any()
    if root is None:
        reader.add(None, "", "empty file (expected a workbench-golden mapping)")
        reader.problems.raise_if_any()
    assert root is not None
    top = reader.mapping(root, "", TOP_KEYS, required=("schema", "version", "queries"))
    if top is None:
        reader.problems.raise_if_any()
    assert top is not None
    golden = Golden(name="")
    _read_header(reader, top, golden)
    if "coverage" in top and not is_null(top["coverage"]):
        if isinstance(top["coverage"], yaml.MappingNode):
            golden.coverage = read_data(reader, top["coverage"], "coverage")
            check_coverage(reader, top["coverage"])
        else:
            reader.add(top["coverage"], "coverage", "expected a mapping or null")
    if "disagreements" in top:
        for i, item in enumerate(reader.sequence(top["disagreements"], "disagreements")):
            if isinstance(item, yaml.MappingNode):
                golden.disagreements.append(read_data(reader, item, f"disagreements[{i}]"))
            else:
                reader.add(item, f"disagreements[{i}]", "expected a mapping")
    if "queries" in top:
        _read_queries(reader, top["queries"], golden)
    reader.problems.raise_if_any()
    return golden


def _read_header(reader: NodeReader, top: dict[str, yaml.Node], golden: Golden) -> None:
    """Schema, version, name, description, grade scale, annotators, pool and aliases."""
    if "schema" in top:
        schema = reader.text(top["schema"], "schema", required=True)
        if schema is not None and schema != SCHEMA:
            reader.add(top["schema"], "schema", f"expected {SCHEMA!r}, found {quoted(schema)}")
    if "version" in top:
        version = reader.integer(top["version"], "version")
        if version is not None and version not in VERSIONS:
            reads = ", ".join(map(str, VERSIONS))
            reader.add(
                top["version"], "version", f"unsupported version {version} (this reads {reads})"
            )
        elif version == 1 and "judges" in top:  # a writer of version 1 knows no judges
            reader.add(top["judges"], "judges", "version 1 records no judges (they came in 2)")
    if "name" in top:
        golden.name = reader.text(top["name"], "name", required=False) or ""
    if "description" in top:
        golden.description = reader.text(top["description"], "description", required=False) or ""
    if "grade_scale" in top:
        golden.grade_scale = _read_scale(reader, top["grade_scale"])
    if "annotators" in top:
        golden.annotators = _read_annotators(reader, top["annotators"])
    if "judges" in top:
        golden.judges = read_judges(reader, top["judges"], golden)
    if "pool" in top:
        golden.pool = _read_pool(reader, top["pool"])
    if "aliases" in top:
        golden.aliases = _read_aliases(reader, top["aliases"])


_COVERAGE_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # block: (counts, figures), as coverage.summary_for_store writes them
    "queries.*": (
        ("pool", "judged", "relevant", "sampled", "to_estimate"),
        ("est_rel", "est_rel_low", "est_rel_high", "completeness", "completeness_low"),
    ),
    "summary": (
        ("queries", "complete", "incomplete", "unmeasured", "pool", "judged", "relevant",
         "corpus_size", "measured", "relevant_measured"),
        ("est_rel", "mean_completeness", "median_completeness", "mean_completeness_low",
         "mean_label_coverage", "mean_last_quarter_share"),
    ),
    "thresholds": (("min_samples",), ("complete_at", "level")),
}  # fmt: skip


def check_coverage(reader: NodeReader, node: yaml.MappingNode) -> None:
    """The coverage block's figures, each named with its line: a count is a non-negative
    integer, a figure a non-negative number, either may be null; a query's status is one of
    COVERAGE_STATUSES. Other keys are free-form (and, like all data, finite)."""
    for key_node, value_node in node.value:
        key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
        where = key_path("coverage", str(key))
        if key not in ("queries", "summary", "thresholds") or is_null(value_node):
            continue
        if not isinstance(value_node, yaml.MappingNode):
            reader.add(value_node, where, "expected a mapping")
            continue
        if key != "queries":
            _check_figures(reader, value_node, where, *_COVERAGE_FIELDS[key])
            continue
        for qid_node, row in value_node.value:
            row_where = key_path(
                where, qid_node.value if isinstance(qid_node, yaml.ScalarNode) else "?"
            )
            if not isinstance(row, yaml.MappingNode):
                reader.add(row, row_where, "expected a mapping of figures")
                continue
            _check_figures(reader, row, row_where, *_COVERAGE_FIELDS["queries.*"])
            _check_status(reader, row, row_where)


def _check_status(reader: NodeReader, row: yaml.MappingNode, row_where: str) -> None:
    for field_node, status in row.value:
        if getattr(field_node, "value", None) != "status":
            continue
        value = plain_scalar(status)[0] if isinstance(status, yaml.ScalarNode) else None
        if value not in COVERAGE_STATUSES and value is not BAD:
            shown = quoted(status.value) if isinstance(status, yaml.ScalarNode) else "a collection"
            reader.add(
                status, f"{row_where}.status",
                f"{shown} is not one of {', '.join(COVERAGE_STATUSES)}",
            )  # fmt: skip


def _check_figures(
    reader: NodeReader,
    node: yaml.MappingNode,
    where: str,
    counts: tuple[str, ...],
    figures: tuple[str, ...],
) -> None:
    for key_node, value_node in node.value:
        key = getattr(key_node, "value", None)
        if key not in counts and key not in figures:
            continue
        field_where = key_path(where, key)
        if not isinstance(value_node, yaml.ScalarNode):
            reader.add(value_node, field_where, "expected a number or null")
            continue
        value, problem = plain_scalar(value_node)
        if problem or value is None:  # a refused value was reported already
            continue
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if key in counts and (not number or type(value) is not int or value < 0):
            reader.add(value_node, field_where, f"{quoted(value_node.value)} is not a count (an "
                       "integer >= 0) or null")  # fmt: skip
        elif key in figures and (not number or value < 0):
            reader.add(value_node, field_where, f"{quoted(value_node.value)} is not a number "
                       ">= 0 or null")  # fmt: skip


def _read_scale(reader: NodeReader, node: yaml.Node) -> dict[int, str]:
    if not isinstance(node, yaml.MappingNode) or not node.value:
        reader.add(
            node, "grade_scale", "expected a mapping grade -> wording, e.g. {0: not relevant}"
        )
        return dict(DEFAULT_GRADE_SCALE)
    scale: dict[int, str] = {}
    for key_node, value_node in node.value:
        grade = reader.integer(key_node, "grade_scale")
        wording = reader.text(value_node, key_path("grade_scale", key_node.value), required=True)
        if grade is None or wording is None:
            continue
        if grade in scale:
            reader.add(key_node, f"grade_scale.{grade}", "duplicate key")
            continue
        scale[grade] = wording
    return scale


def _read_annotators(reader: NodeReader, node: yaml.Node) -> list[dict]:
    annotators: list[dict] = []
    seen: set[str] = set()
    for i, item in enumerate(reader.sequence(node, "annotators")):
        where = f"annotators[{i}]"
        fields = reader.mapping(item, where, ANNOTATOR_KEYS, required=("name",))
        if fields is None or "name" not in fields:
            continue
        name = reader.ident(fields["name"], f"{where}.name")
        role: str = Role.HUMAN
        if "role" in fields:
            role = reader.text(fields["role"], f"{where}.role", required=True) or Role.HUMAN
            if role not in ROLES:
                reader.add(
                    fields["role"],
                    f"{where}.role",
                    f"{quoted(role)} is not one of {', '.join(ROLES)}",
                )
        if name is None:
            continue
        if name in seen:
            reader.add(fields["name"], f"{where}.name", f"annotator {quoted(name)} listed twice")
            continue
        seen.add(name)
        annotators.append({"name": name, "role": role})
    return annotators


def _read_pool(reader: NodeReader, node: yaml.Node) -> dict | None:
    if is_null(node):
        return None
    fields = reader.mapping(node, "pool", POOL_KEYS, required=("systems", "depth", "strategy"))
    if fields is None:
        return None
    pool: dict[str, Any] = {}
    if "systems" in fields:
        pool["systems"] = reader.names(fields["systems"], "pool.systems") or []
    if "depth" in fields:
        pool["depth"] = reader.integer(fields["depth"], "pool.depth")
    if "strategy" in fields:
        pool["strategy"] = reader.text(fields["strategy"], "pool.strategy", required=True)
    if "seed" in fields:
        pool["seed"] = (
            None if is_null(fields["seed"]) else reader.integer(fields["seed"], "pool.seed")
        )
    if "params" in fields:
        params = read_data(reader, fields["params"], "pool.params")
        if not isinstance(params, dict):
            reader.add(fields["params"], "pool.params", "expected a mapping")
        pool["params"] = params
    return pool


def _read_aliases(reader: NodeReader, node: yaml.Node) -> dict[str, str]:
    if is_null(node):
        return {}
    if not isinstance(node, yaml.MappingNode):
        reader.add(node, "aliases", "expected a mapping alias id -> canonical id")
        return {}
    aliases: dict[str, str] = {}
    for key_node, value_node in node.value:
        alias = reader.ident(key_node, "aliases")
        canonical = reader.ident(value_node, f"aliases.{getattr(key_node, 'value', '?')}")
        if alias is None or canonical is None:
            continue
        if alias in aliases:
            reader.add(key_node, key_path("aliases", alias), "duplicate key")
        elif alias == canonical:
            reader.add(key_node, key_path("aliases", alias), "a doc cannot be its own alias")
        else:
            aliases[alias] = canonical
    for alias, canonical in aliases.items():
        if canonical in aliases:
            reader.add(
                node,
                key_path("aliases", alias),
                f"canonical id {quoted(canonical)} is itself an alias (no chains)",
            )
    return aliases


def _read_queries(reader: NodeReader, node: yaml.Node, golden: Golden) -> None:
    names = {a["name"] for a in golden.annotators}
    query_line: dict[str, int] = {}
    for i, item in enumerate(reader.sequence(node, "queries")):
        where = f"queries[{i}]"
        fields = reader.mapping(item, where, QUERY_KEYS, required=("id", "text"))
        if fields is None or "id" not in fields:
            continue
        qid = reader.ident(fields["id"], f"{where}.id")
        text = (
            reader.text(fields["text"], f"{where}.text", required=False, limit=MAX_QUERY_CHARS)
            if "text" in fields
            else ""
        )
        narrative = ""
        if "narrative" in fields:
            node, at = fields["narrative"], f"{where}.narrative"
            narrative = reader.text(node, at, required=False, limit=MAX_QUERY_CHARS) or ""
        if qid is None:
            continue
        if qid in query_line:
            reader.add(
                fields["id"],
                f"{where}.id",
                f"query {quoted(qid)} listed twice (first on line {query_line[qid]})",
            )
            continue
        query_line[qid] = item.start_mark.line + 1
        golden.queries.append(Query(query_id=qid, text=text or "", narrative=narrative))
        judgments = (
            reader.sequence(fields["judgments"], f"{where}.judgments")
            if "judgments" in fields
            else []
        )
        _read_judgments(reader, judgments, where, qid, golden, names)
        if "judge_labels" in fields:
            labels = reader.sequence(fields["judge_labels"], f"{where}.judge_labels")
            read_judge_labels(
                reader, labels, f"{where}.judge_labels", qid, golden,
                lambda node, at: _read_grade(reader, node, at, golden),
            )  # fmt: skip


def _read_grade(reader: NodeReader, node: yaml.Node, where: str, golden: Golden) -> int | None:
    """A grade: an integer of the declared grade scale."""
    grade = reader.integer(node, where)
    if grade is not None and grade not in golden.grade_scale:
        message = f"grade {grade} is outside the grade scale {sorted(golden.grade_scale)}"
        reader.add(node, where, message)
        return None
    return grade


def _read_judgments(
    reader: NodeReader,
    judgments: list[yaml.Node],
    where: str,
    qid: str,
    golden: Golden,
    names: set[str],
) -> None:
    """One query's judgments into `golden`; a doc judged twice is an error."""
    judged = golden.qrels.setdefault(qid, {})
    seen_docs: set[str | None] = set()
    for j, judgment in enumerate(judgments):
        jwhere = f"{where}.judgments[{j}]"
        jfields = reader.mapping(judgment, jwhere, JUDGMENT_KEYS, required=("doc", "grade"))
        if jfields is None or "doc" not in jfields or "grade" not in jfields:
            continue
        doc_id = reader.ident(jfields["doc"], f"{jwhere}.doc")
        grade = _read_grade(reader, jfields["grade"], f"{jwhere}.grade", golden)
        by = reader.names(jfields["by"], f"{jwhere}.by") if "by" in jfields else []
        if by and names:
            for name in by:
                if name not in names:
                    reader.add(
                        jfields["by"], f"{jwhere}.by", f"{quoted(name)} is not in annotators"
                    )
        note = (
            reader.text(jfields["note"], f"{jwhere}.note", required=False)
            if "note" in jfields
            else ""
        )
        versions = (
            read_label_versions(reader, jfields["versions"], f"{jwhere}.versions", by, golden)
            if "versions" in jfields
            else {}
        )
        if doc_id is not None and doc_id in seen_docs:
            reader.add(
                jfields["doc"],
                f"{jwhere}.doc",
                f"doc {quoted(doc_id)} judged twice for query {quoted(qid)}",
            )
            continue
        seen_docs.add(doc_id)
        if doc_id is None or grade is None:
            continue
        judged[doc_id] = grade
        if by:
            golden.judged_by[(qid, doc_id)] = by
        if note:
            golden.notes[(qid, doc_id)] = note
        if versions:
            golden.label_versions[(qid, doc_id)] = versions
