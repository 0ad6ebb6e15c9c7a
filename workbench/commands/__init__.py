"""One module per `workbench` subcommand: `configure(parser)` and `run(args) -> exit code`.

Module top levels import nothing heavy (no torch, sentence_transformers, textual)."""

from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING, Any, TextIO

from workbench.core.display import visible
from workbench.flows.study_context import (  # light: the study's stored threshold, read once
    DEFAULT_REL_THRESHOLD,
    REL_THRESHOLD_KEY,
    rel_threshold_of,
)

if TYPE_CHECKING:
    from workbench.core.store_url import StoreLocation
    from workbench.formats.passages import PassageRule


def say(text: str = "", *, file: TextIO | None = None) -> None:
    """print() for human-readable output that may quote data: control characters visible
    (`workbench.core.display.visible`). The commands print; the core does not."""
    print(visible(text), file=file if file is not None else sys.stdout)


def store_location(text: str) -> StoreLocation:
    """argparse type of a store option (`--db`, store copy's SRC and DST): a file path or a
    postgresql:// URL; a name SQLite would not open as that path (`file:...`, `:memory:`) is
    refused here, before the command opens anything (`store_url.sqlite_name_problem`)."""
    from workbench.core.store_url import StoreLocation, is_url, sqlite_name_problem

    problem = None if is_url(text) else sqlite_name_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(visible(problem, one_line=True))
    return StoreLocation(text)


def add_store_option(parser: Any, help: str = "the judgments store", **kwargs: Any) -> None:
    """`--db`: a SQLite file or a postgresql:// URL (printed with its password masked)."""
    parser.add_argument(
        "--db",
        type=store_location,
        metavar=kwargs.pop("metavar", "STORE"),
        help=f"{help} (a SQLite file, or a postgresql:// URL)",
        **kwargs,
    )


def finite_number(text: str) -> float:
    """argparse type of every number option that is not a count (--complete-at, --alpha,
    --overlap, ...): nan and inf are refused here alike, each command then checks its range."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def add_rel_threshold_option(parser: Any, what: str = "lowest grade counted as relevant") -> None:
    """`--rel-threshold G`, its default said in its help (one default for every command: the
    study's, read by `resolve_rel_threshold` before the command runs)."""
    parser.add_argument(
        "--rel-threshold", type=int, default=None, metavar="G",
        help=f"{what} (default: the study's, set by `pool --rel-threshold`; else "
        f"{DEFAULT_REL_THRESHOLD})",
    )  # fmt: skip


def resolve_rel_threshold(args: Any, *, now: bool = False) -> None:
    """`--rel-threshold` left out: the threshold stored with the study the command reads (its
    `--db`, or a store given as `--qrels`), else 1. A store that cannot be read leaves 1: the
    command itself says why it cannot read it. A command that reads its study once
    (`reads_study_once`) finds it there instead, without opening the store first, unless it
    asks for it `now` (a path of it that reads the store otherwise)."""
    if getattr(args, "rel_threshold", 0) is not None:
        return
    if getattr(args, "_reads_study", False) and not now:
        return
    args.rel_threshold = DEFAULT_REL_THRESHOLD
    stored = stored_rel_threshold(getattr(args, "db", None) or getattr(args, "qrels", None))
    if stored is not None:
        args.rel_threshold = stored


def stored_rel_threshold(location: Any) -> int | None:
    """The relevance threshold stored with the study at `location` (None: none stored, or not
    a store that can be read)."""
    from workbench.core.store_url import StoreLocation
    from workbench.formats.store_file import is_store

    if location is None:
        return None
    location = StoreLocation(location)
    if not is_store(location.secret_text()):  # a qrels or golden file: no store package loaded
        return None
    from workbench.store import open_store

    try:
        with open_store(location, read_only=True) as store:  # a read changes no byte
            value = store.get_meta(REL_THRESHOLD_KEY)
    except Exception:  # noqa: BLE001 - missing, someone else's, unreachable: the command says
        return None
    return rel_threshold_of(value)


def reads_study_once(parser: Any) -> None:
    """The command reads its study once (`flows.study_context.StudyContext`), the study's
    relevance threshold included: `resolve_rel_threshold` leaves `--rel-threshold` unset
    (None) for it rather than open the store a first time."""
    parser.set_defaults(_reads_study=True)


def add_judge_covariate_option(
    parser: Any, uses: str = "the estimate", *, stores: bool = True
) -> None:
    """`--queue-judge NAME` of the adaptive study (simulate, judge, coverage, export, report): a
    model judge's labels as a covariate of the queue's relevance model; `stores`: the command
    stores the choice with the study (simulate, judge), else it holds for this run only (a read
    command: `coverage --save` stores it). `--judge NAME`, its former name, is a hidden alias
    (`eval --judge` scores with a judge: another thing)."""
    if stores:
        kept = "stored with the study, which the app, simulate, coverage, eval, export and "
        kept += "report then use"
    else:
        kept = "for this run only, never stored (`coverage --queue-judge NAME --save` stores it)"
    parser.add_argument(
        "--queue-judge",
        dest="judge",
        metavar="NAME",
        help="adaptive store: a model judge of the store (judge-llm, judge-model, import-labels "
        "--role model) whose labels, at its latest version, become a covariate of the "
        f"relevance model behind {uses}; {kept} (default: the judge stored, else none)",
    )
    parser.add_argument("--judge", dest="judge", metavar="NAME", help=argparse.SUPPRESS)


def store_judge_choice(location: Any, name: str, rel_threshold: int, command: str) -> None:
    """`--queue-judge NAME` of a command that stores it (judge): record the judge covariate
    with the study, said on stderr when the choice changed. A store that is not adaptive takes
    none, and an unknown judge or a person exits 2 naming it, before anything else is done."""
    from workbench.flows.study_context import RunChoices, save_choices
    from workbench.store import open_store

    with open_store(location) as store:
        for said in save_choices(store, RunChoices(queue_judge=name), rel_threshold):
            say(f"{command}: {said}", file=sys.stderr)


def add_passage_options(parser: Any) -> None:
    """`--passages`, `--passage-words` and `--passage-rows`: how a text folder corpus is cut
    into passages."""
    from workbench.formats.passages import DEFAULT_ROWS, DEFAULT_WORDS, KINDS, MIN_ROWS

    low, high = DEFAULT_WORDS
    parser.add_argument(
        "--passages",
        choices=KINDS,
        default=None,
        help=f"how a folder of .txt/.md files is cut into passages: blocks (the default: "
        f"blocks merged into passages of --passage-words, {low}:{high}, each an exact span of "
        "its file; Markdown cut between its blocks, never inside code, a table, a list item "
        f"or an admonition that fits, and at most --passage-rows, {DEFAULT_ROWS}, on screen), "
        "merged (the rule before blocks: paragraphs merged, "
        "whitespace rejoined), paragraphs (one a paragraph, split over 200 words), file (one "
        "a file). Default: as the store was pooled",
    )
    parser.add_argument(
        "--passage-words",
        type=_passage_words,
        default=None,
        metavar="MIN:MAX",
        help=f"--passages blocks or merged: the passages' size in words (default {low}:{high})",
    )
    parser.add_argument(
        "--passage-rows",
        type=_passage_rows,
        default=None,
        metavar="N",
        help=f"--passages blocks: a Markdown passage's rows at most as the app renders it in a "
        f"100-column terminal, so it shows whole on one screen (default {DEFAULT_ROWS}; 0: no "
        f"limit, the rule before rows; else at least {MIN_ROWS})",
    )


def _passage_rows(value: str) -> int:
    import argparse

    from workbench.formats.passages import MIN_ROWS, parse_rows

    rows = 0 if value == "0" else parse_rows(value)
    if rows is None:
        raise argparse.ArgumentTypeError(
            f"{value!r}: expected 0 (no limit) or a whole number of rows from {MIN_ROWS}, e.g. 20"
        )
    return rows


def add_chunk_options(parser: Any) -> None:
    """`--chunks` and `--text-by-grade` (eval, compare): runs over another chunking of the
    judged folder."""
    parser.add_argument(
        "--chunks",
        action="append",
        metavar="FILE",
        help='the runs rank chunks of this JSONL ({"_id", "source", "start", "end"} a line, or '
        '"text" for the offsets), cut from the --corpus folder: each chunk is graded from the '
        "judged passages it overlaps (the rule is printed), and text recall, text precision "
        "and read@k are added; one file for every run, or one per --run in order",
    )
    parser.add_argument(
        "--text-by-grade",
        action="store_true",
        help="with --chunks: weight the relevant text by its passage's grade in text recall",
    )


def _passage_words(value: str) -> tuple[int, int]:
    import argparse

    from workbench.formats.passages import parse_words

    bounds = parse_words(value)
    if bounds is None:
        raise argparse.ArgumentTypeError(
            f"{value!r}: expected MIN:MAX, whole numbers of words with 1 <= MIN <= MAX and "
            "MAX >= 10, e.g. 80:250"
        )
    return bounds


def passage_rule(args: Any) -> PassageRule | None:
    """The `PassageRule` that `--passages`, `--passage-words` and `--passage-rows` ask for;
    None when none is given (the store's, else the default, is used)."""
    from workbench.core.errors import InputError
    from workbench.formats.passages import DEFAULT_ROWS, DEFAULT_WORDS, SIZED, PassageRule

    kind, words, rows = args.passages, args.passage_words, getattr(args, "passage_rows", None)
    if words is not None and kind not in (None, *SIZED):
        raise InputError([f"--passage-words: sizes blocks or merged passages; --passages {kind} "
                          "has none"])  # fmt: skip
    if rows is not None and kind not in (None, "blocks"):
        raise InputError([f"--passage-rows: sizes blocks passages; --passages {kind} has none"])
    if kind is None and words is None and rows is None:
        return None
    kind = kind or "blocks"
    if rows is None:
        rows = DEFAULT_ROWS if kind == "blocks" else 0
    return PassageRule(kind, *(words or DEFAULT_WORDS), rows)


OUTPUT_HELP = {
    "table": "terminal text",
    "markdown": "Markdown, ready to paste into a pull request",
    "html": "one self-contained HTML page",
    "json": "one JSON object",
}


def add_output_options(
    parser: Any, formats: tuple[str, ...] = ("table", "json"), what: str = "the report"
) -> None:
    """How a command prints, declared once for every command: `--json`, and `--format` where
    it has more than text and JSON, and `--wide` where its text has tables to fit. Read back by
    `output_format`."""
    same = " (= --format json)" if len(formats) > 2 else ""
    parser.add_argument(
        "--json", action="store_true", help=f"print {what} as one JSON object{same}"
    )
    parser.set_defaults(_output_formats=formats)
    if len(formats) > 2:
        kinds = "; ".join(f"{name}: {OUTPUT_HELP[name]}" for name in formats)
        parser.add_argument(
            "--format", choices=formats, default=None, help=f"{kinds} (default table)"
        )
    if "markdown" in formats or "html" in formats:
        add_wide_option(parser)


def output_format(args: Any) -> str:
    """The format a command prints in: json with --json, else --format, else table. --json
    beside another --format is refused (which one was meant?)."""
    from workbench.core.errors import InputError

    chosen = getattr(args, "format", None) if len(args._output_formats) > 2 else None
    if args.json:
        if chosen not in (None, "json"):
            raise InputError([f"--json and --format {chosen}: give one of them"])
        return "json"
    return chosen or "table"


def add_wide_option(parser: Any) -> None:
    """`--wide`: text tables with every column and notes unwrapped, whatever the width."""
    parser.add_argument(
        "--wide",
        action="store_true",
        help="text output at full width: every column of each table, each note on one line "
        "(by default text fits COLUMNS, else the terminal, else 100 characters: a table keeps "
        "the columns that fit and names the rest; markdown, html and json have them all)",
    )


def text_width(args: Any) -> int | None:
    """The width text output is fitted to: None (no fitting) with --wide, else the terminal's."""
    from workbench.reports.width import terminal_width

    return None if getattr(args, "wide", False) else terminal_width()
