"""One module per `workbench` subcommand: `configure(parser)` and `run(args) -> exit code`.

Module top levels import nothing heavy (no torch, sentence_transformers, textual)."""

from __future__ import annotations

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
