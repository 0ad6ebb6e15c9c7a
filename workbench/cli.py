"""`workbench` subcommands. Thin: each command lives in workbench/commands/NAME.py and imports
heavy libraries only inside its `run`, so `workbench eval` starts fast."""

from __future__ import annotations

import argparse
import importlib
import io
import os
import sys
from typing import TextIO

from workbench import __version__
from workbench.core.display import visible
from workbench.core.errors import InputError
from workbench.core.exit_codes import ExitCode, exit_code_for
from workbench.core.measures.eval_options import LARGEST

COMMANDS: dict[str, str] = {
    "eval": "Score runs against qrels or a golden.yaml, with the denominator audit.",
    "compare": "Compare runs with a baseline: deltas, paired tests, Holm, wins/losses.",
    "pool": "Run retrievers and pool their top results into a judging store.",
    "judge": "Open the judging app on an annotator's queue (--adjudicate: the disagreements).",
    "assign": "Mark a share of the pool to be judged by two annotators, blind (overlap).",
    "demo": "Pool the embedded demo corpus (once) and open the judging app on it.",
    "export": "Export judgments from a store as golden.yaml and/or TREC qrels.",
    "coverage": "Report how complete the judged relevant set is, per query.",
    "simulate": "Judge a store's queue with an oracle that answers from existing qrels.",
    "agree": "Inter-annotator agreement: Cohen's and weighted kappa, confusion, disagreements.",
    "import-labels": "Import external labels (qrels or JSONL) as a non-human annotator.",
    "draw-sample": "Draw the human sample (recorded probabilities) that eval --judge corrects by.",
    "judge-model": "Grade the pool with a cross- or bi-encoder, thresholds fitted on human labels.",
    "judge-llm": "Grade the pool with an LLM behind any OpenAI-compatible chat-completions server.",
    "position-bias": "Position consistency of a pairwise judge judged in both orders.",
    "report": "One self-contained HTML page on a judging round: coverage, metrics, agreement.",
    "serve": "Serve the judging app to browsers, one URL per annotator (`serve token`).",
    "store": "Copy a store (SQLite <-> PostgreSQL, every row), or print the annotator role's SQL.",
}


EXAMPLES: dict[str, tuple[str, ...]] = {
    "eval": ("workbench eval --qrels golden/demo.qrels --run golden/demo-bm25.run -k 5,10",),
    "compare": (
        "workbench compare --qrels golden/demo.qrels --run golden/demo-bm25.run"
        " --run golden/demo-dense.run -k 10",
    ),
    "pool": (
        "workbench pool --corpus corpora/demo/docs --passages paragraphs"
        " --queries corpora/demo/queries.jsonl --db study.db --systems bm25,dense",
        "workbench pool --db study.db  # the options of ./workbench.toml's [pool] table",
    ),
    "judge": ("workbench judge --db study.db --annotator alice",),
    "assign": ("workbench assign --db study.db --overlap 0.2",),
    "demo": ("workbench demo --annotator alice",),
    "export": ("workbench export --db study.db --golden golden/study.yaml --qrels study.qrels",),
    "coverage": ("workbench coverage --db study.db",),
    "simulate": ("workbench simulate --db study.db --oracle golden/demo.qrels --budget 240",),
    "agree": ("workbench agree --db study.db", "workbench agree golden/demo.qrels study.qrels"),
    "import-labels": (
        "workbench import-labels golden/demo.qrels --db study.db --annotator trec --role human",
    ),
    "draw-sample": (
        "workbench draw-sample --db study.db --judge llm --share 0.1  # a static study's",
    ),
    "judge-model": (
        "workbench judge-model --db study.db --scorer bi-encoder --annotator minilm"
        " --fit-on trec",
    ),
    "judge-llm": (
        "workbench judge-llm --db study.db --endpoint http://127.0.0.1:8000/v1"
        " --model qwen2.5-7b-instruct --annotator llm --limit 50",
    ),
    "position-bias": ("workbench position-bias comparisons.jsonl",),
    "report": ("workbench report --db study.db --run study-runs/bm25.run -o round.html",),
    "serve": (
        "workbench serve --db study.db",
        "workbench serve token --db study.db --annotator alice",
    ),
    "store": (
        "workbench store copy study.db postgresql://lead@db.example/study",
        'workbench store role-sql --db "$STORE" --annotator alice | psql "$STORE"',
    ),
}
"""Each command's examples, run from a checkout's root on the demo corpus (`workbench pool`
first makes study.db), shown at the end of its --help and in the command reference."""


def example_text(command: str) -> str:
    """The epilog of `command`'s --help: its examples, one a line."""
    examples = EXAMPLES[command]
    head = "Example:" if len(examples) == 1 else "Examples:"
    return "\n".join([head, *(f"  {line}" for line in examples)])


class _HelpWithExamples(argparse.HelpFormatter):
    """argparse's help, the examples kept one a line (the rest wrapped as usual)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("Example"):
            return "".join(indent + line + "\n" for line in text.splitlines()).rstrip("\n")
        return super()._fill_text(text, width, indent)


def _module_name(command: str) -> str:
    return "workbench.commands." + command.replace("-", "_")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser. Only the chosen command's module is imported, so start-up stays fast."""
    parser = argparse.ArgumentParser(
        prog="workbench",
        description="Pool, judge, measure coverage, then score retrieval with an audit.",
    )
    parser.add_argument("--version", action="version", version=f"workbench {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, summary in COMMANDS.items():
        command_parser = sub.add_parser(
            name, help=summary, description=summary, epilog=example_text(name),
            formatter_class=_HelpWithExamples,
        )  # fmt: skip
        if name == only:
            module = importlib.import_module(_module_name(name))
            module.configure(command_parser)
            command_parser.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    chosen = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(chosen if chosen in COMMANDS else None)
    if chosen in COMMANDS:
        try:
            argv = _with_project_file(parser, chosen, argv)
        except InputError as exc:
            for problem in exc.problems:
                print(f"error: {problem}", file=sys.stderr)
            return ExitCode.USAGE
    args = parser.parse_args(argv)
    if not getattr(args, "_run", None):
        parser.print_help()
        return ExitCode.USAGE
    if sys.stdout is None:  # started with stdout closed (`>&-`): nowhere to say anything
        print("error: stdout is closed; give the command somewhere to print", file=sys.stderr)
        return ExitCode.USAGE
    sys.stdout = whole_writes(sys.stdout)
    try:
        _check_numbers(args)
        from workbench.commands import resolve_rel_threshold

        resolve_rel_threshold(args)
        code = int(args._run(args) or ExitCode.OK)
        sys.stdout.flush()  # here, not at exit, so that a full disk is reported as one
        return code
    except (Exception, KeyboardInterrupt) as exc:  # said in one plain line, never a traceback
        return _stopped(args, exc)


def _with_project_file(parser: argparse.ArgumentParser, command: str, argv: list[str]) -> list[str]:
    """`argv` with the options of the command's table in workbench.toml (the commands that
    read one: their `PROJECT_TABLE`) put before the command line's own, which win."""
    module = importlib.import_module(_module_name(command))
    table = getattr(module, "PROJECT_TABLE", None)
    if table is None:
        return argv
    from workbench.commands.project_file import with_project_file

    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    at = argv.index(command) + 1
    return argv[:at] + with_project_file(sub.choices[command], table, argv[at:])


class _WholeWrites(io.RawIOBase):
    """stdout's descriptor, each write made whole (the kernel may take part of one: a disk
    with little room, RLIMIT_FSIZE) or raised: Python's unbuffered stdout (PYTHONUNBUFFERED,
    set on this project's machines) ignores a short write's count, so the rest of a large print
    was dropped unsaid (exit 0, output cut)."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return os.isatty(self._fd)

    def write(self, data: bytes | bytearray | memoryview) -> int:  # type: ignore[override]
        view = memoryview(data).cast("B")
        size = len(view)
        while view:
            view = view[os.write(self._fd, view) :]  # the error of the write that fails rises
        return size


def whole_writes(stream: TextIO) -> TextIO:
    """`stream` (the process's stdout, buffered or not: PYTHONUNBUFFERED) over a writer that
    writes every byte or raises, with its encoding, errors and buffering; anything else
    (pytest's capture) as it is."""
    buffer = getattr(stream, "buffer", None)
    raw = buffer.raw if isinstance(buffer, io.BufferedWriter) else buffer
    if not (isinstance(stream, io.TextIOWrapper) and isinstance(raw, io.FileIO)):
        return stream
    stream.flush()
    whole = _WholeWrites(raw.fileno())
    return io.TextIOWrapper(
        whole if raw is buffer else io.BufferedWriter(whole), encoding=stream.encoding,
        errors=stream.errors, line_buffering=stream.line_buffering,
        write_through=stream.write_through,
    )  # fmt: skip


def _stopped(args: argparse.Namespace, exc: BaseException) -> int:
    """Say why the command stopped, as its exit status (`exit_code_for`) tells it."""
    code = exit_code_for(exc)
    if code is ExitCode.USAGE and isinstance(exc, InputError):
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)  # made visible by InputError
    elif code is ExitCode.BROKEN_PIPE:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    elif code is ExitCode.USAGE:  # stdout cannot be written (a full disk, /dev/full)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit flush too
        print(f"error: stdout: cannot write ({exc.strerror})", file=sys.stderr)  # type: ignore[attr-defined]
    elif code is ExitCode.INTERNAL:
        return _internal_error(args, exc)
    return code


def _check_numbers(args: argparse.Namespace) -> None:
    """An integer option too large for any store (`--depth 99999999999999999999`), refused by
    name before the command starts, in one place for every command."""
    problems = [
        f"{'-' if len(name) == 1 else '--'}{name.replace('_', '-')}: {value} is too large"
        f" (at most {LARGEST})"
        for name, value in vars(args).items()
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > LARGEST
    ]
    if problems:
        raise InputError(problems)


def _internal_error(args: argparse.Namespace, exc: BaseException) -> int:
    if os.environ.get("WORKBENCH_DEBUG"):
        raise exc
    print(
        f"workbench {args.command}: internal error ({type(exc).__name__}: "
        f"{visible(str(exc), one_line=True)[:300]}); nothing was written that is not whole."
        " Please report it; WORKBENCH_DEBUG=1 shows where it happened.",
        file=sys.stderr,
    )
    return ExitCode.INTERNAL

if __name__ == "__main__":
    sys.exit(main())
