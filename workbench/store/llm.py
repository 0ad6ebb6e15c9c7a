"""An LLM judge's answers, kept per (model, prompt hash, item): a rerun, or a resume after a
kill, sends no request for an item already answered. The answer text is kept as it came (for
audit); a grade read from it is also a judgment (role model) of the judge's name, written in the
same transaction. What is kept of an answer is bounded (its head and tail, see `kept_answer`)."""

from __future__ import annotations

import time
from collections.abc import Collection

from workbench.core.judges.llm_grade import kept_answer
from workbench.core.model import Judgment
from workbench.store.core import StoreCore, Tx


class LlmTables(StoreCore):
    """The llm_answers table (created when first written in a SQLite store)."""

    def llm_answers(
        self, model: str, prompt_hash: str
    ) -> dict[tuple[str, str], tuple[str, int | None]]:
        """(query_id, doc_id) -> (status 'graded' or 'unparseable', grade) for this model and
        prompt."""
        if not self._has_table("llm_answers"):
            return {}
        rows = self._read(
            "SELECT query_id, doc_id, status, grade FROM llm_answers"
            " WHERE model = ? AND prompt_hash = ?",
            (model, prompt_hash),
        )
        return {(q, d): (status, None if g is None else int(g)) for q, d, status, g in rows}

    def llm_answer_texts(
        self, model: str, prompt_hash: str, items: Collection[tuple[str, str]]
    ) -> dict[tuple[str, str], str]:
        """(query_id, doc_id) -> the stored answer, for these items of this model and prompt
        (to read them again under another answer rule)."""
        if not items or not self._has_table("llm_answers"):
            return {}
        rows = self._read(
            "SELECT query_id, doc_id, answer FROM llm_answers WHERE model = ? AND prompt_hash = ?",
            (model, prompt_hash),
        )
        wanted = set(items)
        return {(q, d): answer for q, d, answer in rows if (q, d) in wanted}

    def add_llm_answer(
        self,
        model: str,
        prompt_hash: str,
        query_id: str,
        doc_id: str,
        answer: str,
        grade: int | None,
        judgment: Judgment | None = None,
    ) -> None:
        """Keep one answer, bounded (and its judgment, when it held a grade), committed
        together."""
        status = "unparseable" if grade is None else "graded"
        kept = kept_answer(answer)

        def insert(tx: Tx) -> None:
            self._ensure_llm(tx)
            added = tx.execute(
                "INSERT INTO llm_answers VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                (model, prompt_hash, query_id, doc_id, status, grade, kept, time.time()),
            ).rowcount
            if judgment is not None and added:  # another run answered it first: its grade stands
                self._insert_judgment(tx, judgment)

        self._write(insert)
