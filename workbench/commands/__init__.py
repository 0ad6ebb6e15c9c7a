"""One module per `workbench` subcommand: `configure(parser)` and `run(args) -> exit code`.

Module top levels import nothing heavy (no torch, sentence_transformers, textual)."""
