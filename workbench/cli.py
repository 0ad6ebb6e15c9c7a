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
from workbench.core.eval_options import LARGEST
from workbench.core.exit_codes import ExitCode, exit_code_for

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
        command_parser = sub.add_parser(name, help=summary, description=summary)
        if name == only:
            module = importlib.import_module(_module_name(name))
            module.configure(command_parser)
            command_parser.set_defaults(_run=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    chosen = next((a for a in argv if not a.startswith("-")), None)
    parser = build_parser(chosen if chosen in COMMANDS else None)
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
