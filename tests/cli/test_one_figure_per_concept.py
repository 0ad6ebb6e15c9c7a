"""One store, every screen, one figure per concept: the demo corpus pooled for the adaptive
queue (its two shipped runs) and judged by the oracle: 8 judgments a query in turn, then 100
more in the app's order (every query measured in turn), so that some queries have an estimate
of |Rel| and some do not. `coverage` (text, JSON, Markdown, HTML),
`eval`, `compare`, `report` and the app's overview and status line must say the same thing of
the estimated |Rel| and its sum, the measured queries, what a mean covers, the ceiling, the
judgments to an estimate, the count of problems and the study line."""

from __future__ import annotations

import contextlib
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from tui_fixtures import run_async, settle

from workbench.cli import main
from workbench.core.audit.figures import completeness_words, est_rel_words, mean_label
from workbench.core.coverage.to_go import to_go
from workbench.core.measures.metrics import ceiling
from workbench.flows.coverage import coverage_for_store
from workbench.store import Store

ROOT = Path(__file__).resolve().parents[2]
RUNS = [ROOT / "golden" / "demo-bm25.run", ROOT / "golden" / "demo-dense.run"]



def cli(*argv: object) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main([str(a) for a in argv])
    return code, out.getvalue()


def flat(text: str) -> str:
    """Text with its wrapping undone (notes wrap to the width), HTML tags and entities out."""
    text = re.sub(r"<[^>]+>", " ", text).replace("&#x27;", "'").replace("&amp;", "&")
    text = text.replace("\\|", "|")  # Markdown's escaped bars
    return " ".join(text.split())


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("figures")
    db = folder / "study.db"
    runs = [arg for run in RUNS for arg in ("--run", run)]
    code, _ = cli("pool", "--corpus", ROOT / "corpora" / "demo" / "docs", "--passages",
                  "paragraphs", "--queries", ROOT / "corpora" / "demo" / "queries.jsonl",
                  "--db", db, "--systems", "", *runs)  # fmt: skip
    assert code == 0
    oracle = ("simulate", "--db", db, "--oracle", ROOT / "golden" / "demo.qrels")
    assert cli(*oracle, "--per-query", "8")[0] == 0
    assert cli(*oracle, "--budget", "100")[0] == 0
    return db


@pytest.fixture(scope="module")
def coverage(store: Path) -> dict:
    code, out = cli("coverage", "--db", store, "--json")
    assert code == 0
    data = json.loads(out)
    measured = [q for q, row in data["queries"].items() if row["est_rel"] is not None]
    assert 0 < len(measured) < len(data["queries"])  # the point: some measured, some not
    return data


def test_est_rel_names_the_queries_it_sums(store: Path, coverage: dict) -> None:
    """'judged 117, relevant 77, est |Rel| 24': the estimate summed 2 measured queries, the
    relevant count all 12, and the summary did not say so (nor did the report)."""
    rows = coverage["queries"]
    measured = {q: row for q, row in rows.items() if row["est_rel"] is not None}
    summary = coverage["summary"]
    assert summary["measured"] == len(measured)
    assert summary["est_rel"] == pytest.approx(sum(r["est_rel"] for r in measured.values()))
    assert summary["relevant_measured"] == sum(r["relevant"] for r in measured.values())
    assert summary["relevant"] == sum(r["relevant"] for r in rows.values())
    with Store(store) as opened:
        report = coverage_for_store(opened)
    words, means = est_rel_words(report.summary), completeness_words(report.summary)
    assert f"over the {len(measured)} measured queries" in words
    assert f"(relevant found there: {summary['relevant_measured']})" in words
    assert f"est |Rel| {summary['est_rel']:.0f} " in words
    pages = {fmt: cli("coverage", "--db", store, "--format", fmt)[1]
             for fmt in ("table", "markdown", "html")}  # fmt: skip
    pages["report"] = report_page(store)
    for name, page in pages.items():
        shown = flat(page)
        assert words in shown and means in shown, name


def report_page(store: Path) -> str:
    page = store.parent / "report.html"
    if not page.exists():
        runs = [arg for run in RUNS for arg in ("--run", run)]
        code, _ = cli("report", "--db", store, *runs, "-k", "10", "-o", page)
        assert code == 0
    return page.read_text(encoding="utf-8")


def test_the_report_says_what_it_shows(store: Path, coverage: dict) -> None:
    """It said '4824 items in the judging queue' (its frames: 12 x the corpus) and named 'the
    study line below the table', which it did not show."""
    page = flat(report_page(store))
    assert "items in the judging queue" not in page
    assert f"{coverage['summary']['judged']} judged by the adaptive queue" in page
    assert page.count("study (the mean over") == 2  # each run's study line...
    assert page.count("(the study line below the table)") <= 2  # ...named only beside it


def test_a_mean_says_which_queries_it_covers(store: Path, coverage: dict) -> None:
    """eval's legend said 'Means cover the measured queries' beside `mean (12 q)`, the mean of
    all 12, with the interval cell over 2."""
    rows = coverage["queries"].values()
    scored = sum(1 for row in rows if row["relevant"] > 0)  # eval's means: a relevant found
    measured = sum(1 for row in rows if row["relevant"] > 0 and row["est_rel"] is not None)
    code, out = cli("eval", "--qrels", store, "--run", RUNS[0], "-k", "10", "--wide")
    shown = flat(out)
    assert mean_label(scored) in out and "Means cover the measured queries" not in shown
    assert f"averages each measure over the {scored} scored queries" in shown
    assert f"the {measured} measured ones ({measured} q)" in shown
    mean_line = next(line for line in out.splitlines() if line.startswith(mean_label(scored)))
    assert mean_line.count(f"({measured} q)") == 2  # the recall interval and compl.
    # the study line says the same scored and unmeasured queries as coverage
    unmeasured = [q for q, row in coverage["queries"].items() if row["status"] == "unmeasured"]
    assert f"study (the mean over {scored} queries" in shown
    assert f"R@10 - (no estimate yet for {', '.join(unmeasured)})" in shown


def test_one_ceiling_named_by_its_denominator(store: Path, coverage: dict) -> None:
    """'ceiling' was k / est |Rel| in coverage and k / judged |Rel| in eval, both unnamed."""
    code, out = cli("coverage", "--db", store)
    assert "ceiling est." in out and "with the estimated |Rel|" in flat(out)
    code, evaluated = cli("eval", "--qrels", store, "--run", RUNS[0], "-k", "10", "--json")
    rows = json.loads(evaluated)["runs"]["bm25"]["per_query"]
    for qid, row in coverage["queries"].items():
        if row["est_rel"] is not None:
            assert row["ceiling_est"] == ceiling(10, row["est_rel"])
        assert rows[qid]["ceiling"] == ceiling(10, rows[qid]["rel"]) == row["ceiling"]
    code, text = cli("eval", "--qrels", store, "--run", RUNS[0], "-k", "10")
    assert "ceil@10: min(1, k / |Rel|)" in flat(text) and "with the judged |Rel|" in flat(text)


def test_compare_counts_problems_as_eval_does(store: Path) -> None:
    """compare said '0 error(s) and 48 warning(s)' where eval --strict reports 12 errors a
    run."""
    runs = [arg for run in RUNS for arg in ("--run", run)]
    code, compared = cli("compare", "--qrels", store, *runs, "-k", "10")
    compared = flat(compared)
    for run in RUNS:
        code, evaluated = cli("eval", "--qrels", store, "--run", run, "-k", "10")
        (count,) = re.findall(
            r"problems: (\d+ error\(s\), \d+ warning\(s\)[^:]*?\))", flat(evaluated)
        )
        assert f"{run.stem.split('-')[1]}: {count}" in compared
        code, strict = cli("eval", "--qrels", store, "--run", run, "-k", "10", "--strict", "--json")
        errors = sum(p["level"] == "error" for p in json.loads(strict)["problems"])
        assert f"({errors} of them errors under --strict)" in count


def test_a_flat_discovery_curve_is_drawn_low(store: Path, coverage: dict) -> None:
    """A query that found 1 relevant, then only non-relevant, drew a full bar."""
    flat_query = min(coverage["queries"], key=lambda q: coverage["queries"][q]["relevant"])
    assert coverage["queries"][flat_query]["discovery"][-1] == 1
    code, out = cli("coverage", "--db", store)
    curves = out[out.index("Discovery curves") :].splitlines()
    line = next(line for line in curves if re.match(rf"^ [ !]{flat_query} ", line))
    assert set(line.split()[-1]) <= set("▁▂")  # it was a full bar: █ every judgment


@run_async
async def test_the_app_says_what_coverage_says(store: Path, coverage: dict) -> None:
    from workbench.tui.app import JudgeApp
    from workbench.tui.status_lines import StatusLine

    copy = store.parent / "app.db"
    shutil.copy(store, copy)
    opened = Store(copy)
    try:
        report = coverage_for_store(opened)
        app = JudgeApp(opened, "ann")
        async with app.run_test(size=(160, 40)) as pilot:
            await settle(pilot, app)
            query = app.screen._shown_key[0]
            status = str(app.screen.query_one(StatusLine).render())
            # before the app serves anything of its own, its word on the query is coverage's
            assert to_go(report.queries[query], adaptive=True).words in status
            await pilot.press("o")
            for _ in range(300):
                await pilot.pause(0.02)
                panel = str(app.screen.query_one("#coverage-text").render())
                if "computing" not in panel:
                    break
        shown = " ".join(panel.split())
        assert est_rel_words(report.summary) in shown
        assert completeness_words(report.summary) in shown
        flat_query = min(report.queries, key=lambda q: report.queries[q].relevant)
        line = next(line for line in panel.splitlines() if line.startswith(flat_query + " "))
        assert "▁▁▁▁▁▁▁▁" in line  # its curve, low: it was a full bar
    finally:
        opened.close()


def test_the_study_line_is_one_figure_in_coverage_and_eval(store: Path, tmp_path: Path) -> None:
    """coverage's study (the pool's recorded ranks) and eval's (the run files, aliases folded)
    read one figure: the pool holds no twin of a passage ranked above it, and its ranks used to
    close up over the gap (bm25 R@10 0.615 [0.528, 0.660] in coverage, 0.635 [0.544, 0.679] in
    eval, on this store judged 20 a query)."""
    store = Path(shutil.copy(store, tmp_path / "measured.db"))
    code, _ = cli("simulate", "--db", store, "--oracle", ROOT / "golden" / "demo.qrels",
                  "--budget", "200")  # fmt: skip
    assert code == 0
    code, out = cli("coverage", "--db", store, "--json")
    planned = json.loads(out)["study"]["runs"]
    args = ["eval", "--qrels", store, "-k", "10", "--json"]
    code, evaluated = cli(*args, *[a for run in RUNS for a in ("--run", run)])
    runs = json.loads(evaluated)["runs"]
    assert set(planned) == set(runs) == {"bm25", "dense"}
    for name, interval in planned.items():
        assert interval["low"] is not None
        ours = {k: interval[k] for k in ("estimate", "low", "high")}
        assert ours == {k: runs[name]["study"]["R@10"][k] for k in ours}, name
