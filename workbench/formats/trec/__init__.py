"""TREC qrels (`qid iter docid grade`) and runs (`qid Q0 docid rank score tag`), read strictly.

Readers collect every problem as `path:line: message` and then raise one InputError. The loops
are plain `str.split` over lines with no per-line objects, so a 2-million-line run parses in
a couple of seconds.

Modules: `qrels` (the qrels reader), `run` (the run reader: chunks of lines, the line-by-line
loop where a chunk is in doubt), `chunks` (the fast column-wise chunk parser), `ranks` (the
rank-column check), `table` and `decimals` (the vectorised reader `workbench eval` scores from:
numpy columns, no object per line; None at any doubt), `writers`, `columns` (what the readers
share)."""

from workbench.formats.trec.columns import QRELS_COLUMNS, RUN_COLUMNS
from workbench.formats.trec.qrels import read_qrels
from workbench.formats.trec.run import read_run
from workbench.formats.trec.writers import qrels_text, write_qrels, write_run

__all__ = [
    "QRELS_COLUMNS",
    "RUN_COLUMNS",
    "qrels_text",
    "read_qrels",
    "read_run",
    "write_qrels",
    "write_run",
]
