"""Text output fits the terminal: a table keeps the columns that fit `COLUMNS` (or the
terminal, or 100) by priority and names the rest, `--wide` shows them all, notes and warnings
wrap with a hanging indent at spaces only (no id or number cut in two), names from the data
shown literally. Markdown and JSON are unchanged (tests/golden_outputs)."""

from __future__ import annotations

import io
import json
import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.cli import main
from workbench.reports.document import Column, Document, Paragraph, Table
from workbench.reports.html import HTML_WIDTH, html_column_groups, render_html
from workbench.reports.render import render_text
from workbench.reports.width import DEFAULT_WIDTH, fitted_columns, terminal_width, wrapped

ROOT = Path(__file__).resolve().parents[2]
DEMO_GOLDEN = ROOT / "golden" / "demo.yaml"
DEMO_RUNS = [ROOT / "golden" / "demo-bm25.run", ROOT / "golden" / "demo-dense.run"]
NAME_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789-_./"


def run_cli(capsys, monkeypatch, columns: int | None, *argv: object) -> tuple[int, str]:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", str(columns))
    code = main([str(a) for a in argv])
    out, _ = capsys.readouterr()
    return code, out


def widest(text: str) -> int:
    return max(map(len, text.splitlines()))


def demo_pairs() -> dict[str, list[str]]:
    """The demo's documents per query, from its two runs (each ranked doc, once)."""
    docs: dict[str, list[str]] = {}
    for run in DEMO_RUNS:
        for line in run.read_text(encoding="utf-8").splitlines():
            qid, _, doc, *_ = line.split()
            if doc not in docs.setdefault(qid, []):
                docs[qid].append(doc)
    return docs


def seeded_runs(folder: Path, seed: int, runs: int, name_length: int) -> list[Path]:
    """`runs` runs over the demo's queries with seeded random rankings of its documents, each
    named (its tag) by a seeded random name of `name_length` characters."""
    rnd = random.Random(seed)
    docs = demo_pairs()
    paths = []
    for r in range(runs):
        name = f"r{r}-" + "".join(rnd.choice(NAME_CHARS) for _ in range(name_length - 3))
        lines = []
        for qid, pool in docs.items():
            ranking = rnd.sample(pool, min(len(pool), 12))
            lines += [f"{qid} Q0 {d} {i + 1} {20 - i}.5 {name}" for i, d in enumerate(ranking)]
        path = folder / f"run{r}.run"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        paths.append(path)
    return paths


def with_runs(paths: list[Path]) -> list[str]:
    return [arg for path in paths for arg in ("--run", str(path))]


# -- eval on the demo and on generated runs ------------------------------------------------------


@pytest.mark.parametrize("columns", [100, 80])
def test_eval_on_the_demo_fits_the_width_and_says_what_it_left_out(
    capsys, monkeypatch, columns: int
) -> None:
    code, out = run_cli(capsys, monkeypatch, columns, "eval", "--qrels", DEMO_GOLDEN,
                        *with_runs(DEMO_RUNS), "-k", "5,10")  # fmt: skip
    assert code == 0
    assert widest(out) <= columns
    lines = out.splitlines()
    header = next(line for line in lines if line.startswith("query "))
    assert header.split()[:5] == ["query", "|Rel|", "P@5", "R@5", "ceil@5"]
    assert "R@5 (est. |Rel|)" in header  # the audit's recall under the estimated |Rel|
    said = " ".join(" ".join(lines).split())
    assert f"(left out at width {columns}: " in said and "--wide shows them)" in said
    assert "MRR" in said.partition("left out at width")[2]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("columns", [100, 80])
def test_eval_with_many_runs_and_long_names_fits(
    tmp_path: Path, capsys, monkeypatch, seed: int, columns: int
) -> None:
    rnd = random.Random(seed)
    runs = seeded_runs(tmp_path, seed, runs=rnd.randint(3, 7), name_length=rnd.randint(20, 70))
    code, out = run_cli(capsys, monkeypatch, columns, "eval", "--qrels", DEMO_GOLDEN,
                        *with_runs(runs), "-k", rnd.choice(["10", "5,10", "5,10,20"]))  # fmt: skip
    assert code == 0
    assert widest(out) <= columns, max(out.splitlines(), key=len)
    for path in runs:  # every run's name whole, on its heading line
        name = path.read_text(encoding="utf-8").split()[5]
        assert f"run {name}" in out.splitlines()


def test_wide_gives_the_full_table(capsys, monkeypatch) -> None:
    argv = ["eval", "--qrels", DEMO_GOLDEN, *with_runs(DEMO_RUNS), "-k", "5,10"]
    _, markdown = run_cli(capsys, monkeypatch, 80, *argv, "--format", "markdown")
    md_header = next(line for line in markdown.splitlines() if line.startswith("| query"))
    every = [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", md_header)[1:-1]]
    code, wide = run_cli(capsys, monkeypatch, 80, *argv, "--wide")
    assert code == 0 and "left out" not in wide
    header = next(line for line in wide.splitlines() if line.startswith("query "))
    assert re.split(r"  +", header.strip()) == every
    assert widest(wide) > 180  # the full table and unwrapped warnings, as before


def test_fitting_and_wide_change_nothing_in_markdown_or_json(capsys, monkeypatch) -> None:
    argv = ["eval", "--qrels", DEMO_GOLDEN, *with_runs(DEMO_RUNS), "-k", "10"]
    for fmt in ("markdown", "json"):
        outputs = {run_cli(capsys, monkeypatch, columns, *argv, "--format", fmt, *extra)[1]
                   for columns in (40, 80, None) for extra in ((), ("--wide",))}  # fmt: skip
        assert len(outputs) == 1, fmt


def test_warnings_wrap_with_a_hanging_indent_and_keep_every_word(capsys, monkeypatch) -> None:
    argv = ["eval", "--qrels", DEMO_GOLDEN, "--run", DEMO_RUNS[0], "-k", "10"]
    _, data = run_cli(capsys, monkeypatch, 80, *argv, "--json")
    problems = json.loads(data)["problems"]
    _, out = run_cli(capsys, monkeypatch, 80, *argv)
    lines = out.splitlines()
    long = next(p for p in problems if len(p["message"]) > 200)
    said = f"{long['level']} [{long['code']}] {long['qid']}: {long['message']}"
    start = lines.index(next(line for line in lines if line.startswith(f"  {said[:40]}")))
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("    "))
    item = lines[start:end]
    assert len(item) > 2 and all(len(line) <= 80 for line in item)
    assert all(line.startswith("    ") and line[4] != " " for line in item[1:])  # hanging
    assert " ".join(line.strip() for line in item) == " ".join(said.split())  # no word cut


def test_markup_in_names_is_shown_literally(tmp_path: Path, capsys, monkeypatch) -> None:
    qrels = tmp_path / "q.qrels"
    qids = ["<i>q|0", "*q_1*", "[q2](x)"]
    qrels.write_text("".join(f"{q} 0 <b>d{i} 1\n{q} 0 d{i} 0\n" for i, q in enumerate(qids)))
    run = tmp_path / "r.run"
    name = "<b>run</b>|*x*_[y](z)"
    run.write_text("".join(f"{q} Q0 <b>d{i} 1 2.0 {name}\n{q} Q0 d{i} 2 1.0 {name}\n"
                           for i, q in enumerate(qids)))  # fmt: skip
    code, out = run_cli(capsys, monkeypatch, 60, "eval", "--qrels", qrels, "--run", run)
    assert code == 0 and widest(out) <= 60
    assert "run <b>run</b>|*x*_[y](z)" in out.splitlines()
    for qid in qids:
        assert any(line.startswith(qid + " ") for line in out.splitlines())


def test_a_name_longer_than_the_width_stays_whole(tmp_path: Path, capsys, monkeypatch) -> None:
    runs = seeded_runs(tmp_path, 9, runs=1, name_length=120)
    name = runs[0].read_text(encoding="utf-8").split()[5]
    code, out = run_cli(capsys, monkeypatch, 80, "eval", "--qrels", DEMO_GOLDEN, "--run", runs[0])
    assert code == 0
    too_long = [line for line in out.splitlines() if len(line) > 80]
    assert too_long == [f"  {name}"]  # on its own line, never cut in two; every other fits


def test_compare_with_long_run_names_fits_and_keeps_the_verdict(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    runs = seeded_runs(tmp_path, 3, runs=3, name_length=40)
    code, out = run_cli(capsys, monkeypatch, 80, "compare", "--qrels", DEMO_GOLDEN,
                        *with_runs(runs), "-k", "10")  # fmt: skip
    assert code == 0 and widest(out) <= 80
    header = next(line for line in out.splitlines() if line.startswith("measure "))
    assert {"delta", "(Holm)", "verdict"} <= set(header.split()) and "moved" not in header
    _, wide = run_cli(capsys, monkeypatch, 80, "compare", "--qrels", DEMO_GOLDEN,
                      *with_runs(runs), "-k", "10", "--wide")  # fmt: skip
    assert "moved most" in wide and "left out" not in wide


# -- the width -----------------------------------------------------------------------------------


WIDTHS = [("77", 77), (" 120 ", 120), ("0", DEFAULT_WIDTH), ("-5", DEFAULT_WIDTH),
          ("wide", DEFAULT_WIDTH)]  # fmt: skip


@pytest.mark.parametrize(("value", "width"), WIDTHS)
def test_terminal_width_reads_columns_else_defaults(monkeypatch, value: str, width: int) -> None:
    monkeypatch.setenv("COLUMNS", value)
    assert terminal_width(io.StringIO()) == width


def test_terminal_width_without_columns_or_terminal_is_the_default(monkeypatch) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    assert terminal_width(io.StringIO()) == DEFAULT_WIDTH == 100


# -- the renderer --------------------------------------------------------------------------------

words = st.text(alphabet="abcxyz0123456789.,;:-[]()|<>*_#!", min_size=1, max_size=30)


@settings(max_examples=200, deadline=None)
@given(st.lists(words, min_size=1, max_size=60), st.integers(20, 120))
def test_wrapped_lines_fit_and_keep_every_word(items: list[str], width: int) -> None:
    text = " ".join(items)
    lines = wrapped(text, width, indent="  ")
    assert all(len(line) <= width or " " not in line.strip() for line in lines)  # a long word
    assert " ".join(line.strip() for line in lines).split() == items
    assert all(line.startswith("    ") for line in lines[1:])


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(1, 30), st.integers(0, 5)), min_size=1, max_size=20),
    st.integers(10, 140),
)
def test_fitted_columns_fit_by_priority(spec: list[tuple[int, int]], width: int) -> None:
    columns = [Column(f"c{i}", priority=p) for i, (_, p) in enumerate(spec)]
    widths = [w for w, _ in spec]
    kept = fitted_columns(columns, widths, width)
    assert kept[0] == 0 and kept == sorted(kept)
    assert widths[0] > width or sum(widths[i] for i in kept) + 2 * (len(kept) - 1) <= width
    for i in set(range(len(columns))) - set(kept):  # each left out would not have fit
        ahead = [j for j in kept[1:] if (columns[j].priority, j) < (columns[i].priority, i)]
        assert widths[0] + sum(2 + widths[j] for j in ahead) + 2 + widths[i] > width
    assert fitted_columns(columns, widths, None) == list(range(len(columns)))


def wide_table(names: list[str]) -> Table:
    columns = [Column("query", "left"), *(Column(n, priority=i) for i, n in enumerate(names))]
    rows = [[f"q{r}", *(0.5 + r / 100 for _ in names)] for r in range(3)]
    return Table(columns, rows, footer=[["mean", *(0.5 for _ in names)]])


def test_a_table_left_out_line_names_the_columns_literally() -> None:
    names = [f"<b>m{i}</b>|*" for i in range(12)]
    text = render_text(Document("t", blocks=[wide_table(names)]), width=60)
    assert widest(text) <= 60
    said = " ".join(text.split())
    assert "left out at width 60: " in said and "<b>m11</b>|*" in said


def test_html_keeps_essential_columns_and_folds_the_rest() -> None:
    names = [f"measure-{i} <i>" for i in range(30)]
    table = wide_table(names)
    groups = html_column_groups(table)
    assert len(groups) > 1 and sorted(i for g in groups for i in g[1:]) == list(range(1, 31))
    assert all(g[0] == 0 for g in groups)
    page = render_html(Document("t", blocks=[table, Paragraph("p")]))
    assert page.count("<table>") == len(groups) and page.count("<details>") == 1
    assert "measure-29 &lt;i&gt;" in page and "<i>" not in page.split("<body>")[1]
    first = page.split("<details>")[0]
    assert first.count("<th>") + first.count("<th title") == len(groups[0])
    # each table fits HTML_WIDTH characters: a column is its header's longest word wide
    chars = [len("query"), *(max(len("0.500"), *map(len, n.split())) for n in names)]
    assert all(sum(chars[i] + 2 for i in g[1:]) + chars[0] <= HTML_WIDTH for g in groups)


def test_html_detail_columns_go_in_the_fold() -> None:
    table = Table([Column("q", "left"), Column("a"), Column("b", detail=True)], [["x", 1, 2]])
    first, fold = html_column_groups(table)
    assert first == [0, 1] and fold == [0, 2]
    page = render_html(Document("t", blocks=[table]))
    assert "<summary>more columns: b</summary>" in page
