"""The served app's latency in a real browser (headless chromium through playwright) against a
real `workbench serve` on 127.0.0.1, with 1 and with 8 annotators connected at once.

  load     from the browser's navigation to an annotator's URL to the first passage's title
           reaching the page (its performance clock: page, token check, app process start,
           the first frame);
  keypress from a grade key's keydown in the page to the next passage's title reaching it,
           after the grade is committed (the same moment `bench/judge_latency.py` times in a
           terminal, plus the websocket both ways).
With 8 annotators every page grades in turn (round-robin), each a process of its own sharing
one queue. Run: .venv/bin/python bench/serve_latency.py [--grades 200] [--annotators 1 8]
[--db URL]; compare with bench/judge_latency.py on the same machine."""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "web"))

from served import Browser, Server, free_port, token_url, wait_next  # noqa: E402
from tui_fixtures import build_store  # noqa: E402

TITLE = r"Passage Q\d+-\d+"


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def one_round(db: str, annotators: int, grades: int, tmp: Path) -> tuple[list[float], list[float]]:
    """(load times, keypress latencies) in ms with `annotators` connected."""
    server = Server(db, free_port(), tmp / f"server-{annotators}.log")
    browser = Browser()
    try:
        pages, loads, state = [], [], []
        for number in range(annotators):
            page = browser.page()
            page.goto(token_url(db, f"bench{annotators}-{number}", server.port))
            end, arrived, title = wait_next(page, TITLE, "", 0)
            loads.append(arrived)
            pages.append(page)
            state.append([end, title])
        for page in pages:
            page.wait_for_timeout(300)  # the first screen settled
        latencies = []
        for turn in range(grades):
            number = turn % annotators
            page, (offset, title) = pages[number], state[number]
            page.keyboard.press(str(turn % 4))
            end, arrived, title = wait_next(page, TITLE, title, offset)
            latencies.append(arrived - page.evaluate("window.__wb.keyAt"))
            state[number] = [end, title]
        return loads, latencies
    finally:
        browser.close()
        server.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grades", type=int, default=200)
    parser.add_argument("--annotators", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--db", help="a PostgreSQL URL of an empty schema (default: SQLite)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        db = args.db or str(tmp / "bench.db")
        build_store(db, queries=100, per_query=50, words=75).close()
        print(f"{'PostgreSQL' if args.db else 'SQLite'} store: 5,000 pooled items")
        for annotators in args.annotators:
            loads, latencies = one_round(db, annotators, args.grades, tmp)
            print(
                f"{annotators} annotator(s) connected: page load to first passage median "
                f"{statistics.median(loads):.0f} ms (max {max(loads):.0f}); grade key to next "
                f"passage, {len(latencies)} grades: p50 {percentile(latencies, 0.5):.1f} ms, "
                f"p95 {percentile(latencies, 0.95):.1f} ms, max {max(latencies):.1f} ms"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
