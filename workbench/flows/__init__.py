"""Use cases as plain calls: what `workbench pool`, `eval`, `compare`, `report`, the app and
the Python API each do, once, with no argparse. Below the commands, the app and
`workbench.api`; above the store, retrieval, formats and reports, which they combine; the core
computes.

Each flow takes plain values (paths, options as a dataclass) and returns a typed result; the
problems it finds with its inputs come back in the result (`problems`) or as one InputError,
never printed: the shell that called it decides how to say them."""
