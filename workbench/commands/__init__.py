"""One module per `workbench` subcommand: `configure(parser)` and `run(args) -> exit code`.

Module top levels import nothing heavy (no torch, sentence_transformers, textual)."""

from __future__ import annotations

import argparse
import math
from typing import Any


def add_store_option(parser: Any, help: str = "the judgments store", **kwargs: Any) -> None:
    """`--db`: a SQLite file or a postgresql:// URL (printed with its password masked)."""
    from workbench.core.store_url import StoreLocation

    parser.add_argument(
        "--db",
        type=StoreLocation,
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
    """`--rel-threshold G`, its default said in its help (one default for every command)."""
    parser.add_argument(
        "--rel-threshold", type=int, default=1, metavar="G", help=f"{what} (default %(default)s)"
    )
