"""How long work reports its progress without printing: the callable's shape, and the one stage
name with a meaning of its own (a model's load). Producers (retrieval, flows) call it; a shell
(`reports.progress`) draws it."""

from __future__ import annotations

from collections.abc import Callable

ProgressCallback = Callable[[str, int, int], None]
"""progress(stage, done, total): how retrievers report long work without printing."""

LOADING = "loading "
"""A stage whose name starts so is a model loading (`retrieval.models.loading`): one unit, 0 of
1 at its start and 1 of 1 when done, shown as a line with its time rather than a bar."""
