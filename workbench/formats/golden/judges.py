"""golden.yaml's judges (version 2): each version of each non-human judge, the version of an
oracle's grade in a judgment, and model judges' labels beside the set; read with every problem
named by line and key path, written one line per label.

    judges:
      - {name: llm, version: 3f2a9c1b2d4e, kind: judge-llm, model: qwen2.5:7b, prompt: ...}
    queries:
      - id: q1
        judgments:
          - {doc: d2, grade: 1, by: [oracle], versions: {oracle: 5d41402abc4b}}
        judge_labels:
          - {doc: d1, grade: 3, by: llm, version: 3f2a9c1b2d4e}

A label's version must be one `judges` lists for its judge; a label without one has an unknown
version (as every label of a version-1 file)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml

from workbench.core.errors import quoted
from workbench.core.judgments.judge_versions import IDENTITY_FIELDS, JudgeIdentity, JudgeLabel
from workbench.core.model import HUMAN_ROLES
from workbench.formats.golden.record import JUDGE_KEYS, JUDGE_LABEL_KEYS, Golden
from workbench.formats.golden.yamlnodes import NodeReader, key_path

# --- reading ---------------------------------------------------------------------------------


def judge_role_problem(golden: Golden, name: str) -> str | None:
    """Why `name` cannot be a judge of `golden`: not among its annotators (when it lists them),
    or one of the people."""
    if not golden.annotators:
        return None
    role = next((a["role"] for a in golden.annotators if a["name"] == name), None)
    if role is None:
        return f"{quoted(name)} is not in annotators"
    if role in HUMAN_ROLES:
        return f"{quoted(name)} is a {role}: only a non-human judge has versions"
    return None


def read_judges(
    reader: NodeReader, node: yaml.Node, golden: Golden
) -> dict[str, dict[str, JudgeIdentity]]:
    """`judges`: each version of each non-human judge; a version listed twice is an error."""
    judges: dict[str, dict[str, JudgeIdentity]] = {}
    for i, item in enumerate(reader.sequence(node, "judges")):
        where = f"judges[{i}]"
        fields = reader.mapping(item, where, JUDGE_KEYS, required=("name", "version", "kind"))
        if fields is None or not {"name", "version", "kind"} <= set(fields):
            continue
        name = reader.ident(fields["name"], f"{where}.name")
        version = reader.ident(fields["version"], f"{where}.version")
        values = {
            f: reader.text(fields[f], f"{where}.{f}", required=f == "kind")
            for f in IDENTITY_FIELDS
            if f in fields
        }
        if name is None or version is None or None in values.values():
            continue
        problem = judge_role_problem(golden, name)
        if problem:
            reader.add(fields["name"], f"{where}.name", problem)
        elif version in judges.get(name, {}):
            message = f"version {quoted(version)} of {quoted(name)} listed twice"
            reader.add(fields["version"], f"{where}.version", message)
        else:
            judges.setdefault(name, {})[version] = JudgeIdentity(**values)  # type: ignore[arg-type]
    return judges


def _known_version(
    reader: NodeReader, golden: Golden, name: str, node: yaml.Node, where: str
) -> str | None:
    """A label's version of judge `name`: an id that `judges` lists for it."""
    version = reader.ident(node, where)
    if version is not None and version not in golden.judges.get(name, {}):
        reader.add(node, where, f"version {quoted(version)} of {quoted(name)} is not in judges")
        return None
    return version


def read_label_versions(
    reader: NodeReader, node: yaml.Node, where: str, by: list[str] | None, golden: Golden
) -> dict[str, str]:
    """A judgment's `versions`: each non-human grader of its `by` -> its grade's version."""
    if not isinstance(node, yaml.MappingNode):
        reader.add(node, where, "expected a mapping judge -> version, e.g. {oracle: 5d41402abc4b}")
        return {}
    versions: dict[str, str] = {}
    for key_node, value_node in node.value:
        name = reader.ident(key_node, where)
        if name is None:
            continue
        at = key_path(where, name)
        problem = (
            "duplicate key"
            if name in versions
            else f"{quoted(name)} is not in this judgment's by"
            if name not in (by or [])
            else judge_role_problem(golden, name)
        )
        if problem:
            reader.add(key_node, at, problem)
            continue
        version = _known_version(reader, golden, name, value_node, at)
        if version is not None:
            versions[name] = version
    return versions


def read_judge_labels(
    reader: NodeReader,
    labels: list[yaml.Node],
    where: str,
    qid: str,
    golden: Golden,
    read_grade: Callable[[yaml.Node, str], int | None],
) -> None:
    """One query's `judge_labels` (`{doc, grade, by, version?}`) into `golden.judge_labels`;
    a judge labelling one doc twice is an error. `read_grade` checks the grade scale."""
    first: dict[tuple[str, str], int] = {}
    for j, node in enumerate(labels):
        at = f"{where}[{j}]"
        fields = reader.mapping(node, at, JUDGE_LABEL_KEYS, required=("doc", "grade", "by"))
        if fields is None or not {"doc", "grade", "by"} <= set(fields):
            continue
        doc_id = reader.ident(fields["doc"], f"{at}.doc")
        grade = read_grade(fields["grade"], f"{at}.grade")
        judge = reader.ident(fields["by"], f"{at}.by")
        problem = judge_role_problem(golden, judge) if judge is not None else None
        if problem:
            reader.add(fields["by"], f"{at}.by", problem)
            judge = None
        version: str | None = ""
        if "version" in fields and judge is not None:
            version = _known_version(reader, golden, judge, fields["version"], f"{at}.version")
        if doc_id is None or grade is None or judge is None or version is None:
            continue
        if (doc_id, judge) in first:
            message = (
                f"doc {quoted(doc_id)} labelled twice by {quoted(judge)} for query {quoted(qid)}"
                f" (first at judge_labels[{first[(doc_id, judge)]}])"
            )
            reader.add(fields["doc"], f"{at}.doc", message)
            continue
        first[(doc_id, judge)] = j
        golden.judge_labels.append(JudgeLabel(qid, doc_id, judge, grade, version))


# --- writing ---------------------------------------------------------------------------------


def judges_lines(golden: Golden, scalar: Callable[[str], str]) -> list[str]:
    """The `judges` block (nothing when the set records none), judges and versions sorted."""
    if not golden.judges:
        return []
    out = ["judges:"]
    for name in sorted(golden.judges):
        for version, identity in sorted(golden.judges[name].items()):
            parts = [f"name: {scalar(name)}", f"version: {scalar(version)}"]
            parts += [
                f"{f}: {scalar(getattr(identity, f))}"
                for f in IDENTITY_FIELDS
                if f == "kind" or getattr(identity, f)
            ]
            out.append(f"  - {{{', '.join(parts)}}}")
    return out


def versions_part(golden: Golden, pair: tuple[str, str], scalar: Callable[[str], str]) -> str:
    """A judgment's `versions: {...}` part, or ''."""
    versions = golden.label_versions.get(pair)
    if not versions:
        return ""
    inner = ", ".join(f"{scalar(n)}: {scalar(versions[n])}" for n in sorted(versions))
    return f"versions: {{{inner}}}"


def judge_label_lines(labels: list[JudgeLabel], scalar: Callable[[str], str]) -> list[str]:
    """One query's model labels (sorted by doc, then judge), one per line."""
    if not labels:
        return []
    out = ["    judge_labels:"]
    for label in sorted(labels, key=lambda lb: (lb.doc_id, lb.judge)):
        parts = [f"doc: {scalar(label.doc_id)}", f"grade: {int(label.grade)}",
                 f"by: {scalar(label.judge)}"]  # fmt: skip
        if label.version:
            parts.append(f"version: {scalar(label.version)}")
        out.append(f"      - {{{', '.join(parts)}}}")
    return out


def judge_problems(
    golden: Golden, ids: list[tuple[str, Any]], texts: list[tuple[str, Any]]
) -> list[str]:
    """What the reader would refuse in the judges, refused before writing: a version a label
    names that `judges` lacks, a label of a query not in the set, a grade outside the scale; the
    names, versions and fields added to `ids` and `texts` for the common checks."""
    problems: list[str] = []
    for name, versions in golden.judges.items():
        ids.append(("judges: name", name))
        for version, identity in versions.items():
            ids.append((f"judges: {quoted(name)} version", version))
            texts += [(f"judges: {quoted(name)} {f}", getattr(identity, f))
                      for f in IDENTITY_FIELDS]  # fmt: skip
    named = [(f"query {quoted(q)} doc {quoted(d)}: versions", n, v)
             for (q, d), versions in golden.label_versions.items()
             for n, v in versions.items()]  # fmt: skip
    known = {q.query_id for q in golden.queries}
    for label in golden.judge_labels:
        where = f"query {quoted(label.query_id)} doc {quoted(label.doc_id)}: judge label"
        ids += [(f"{where} by", label.judge), (f"{where} doc", label.doc_id)]
        if label.query_id not in known:
            problems.append(f"golden: {where}: the query is not in queries")
        if label.grade not in golden.grade_scale:
            problems.append(f"golden: {where}: grade {quoted(label.grade)} is outside the scale")
        if label.version:
            named.append((where, label.judge, label.version))
    for where, name, version in named:
        if version not in golden.judges.get(name, {}):
            problems.append(f"golden: {where}: version {quoted(version)} of {quoted(name)} is "
                            "not in judges")  # fmt: skip
    return problems
