"""The passages the screens have read on the store thread (`flows.judging_start.read_passages`,
run as a `writer.ReadRequest`), kept by doc id so that showing the next one needs no read."""

from __future__ import annotations

from collections.abc import Iterable

from workbench.core.model import Doc
from workbench.flows.judging_start import Passages


class PassageCache:
    """Passages read on the store thread, by doc id; None for one missing from the store."""

    def __init__(self) -> None:
        self._docs: dict[str, Doc | None] = {}
        self._errors: dict[str, str] = {}
        self._asked: set[str] = set()

    def has(self, doc_id: str) -> bool:
        """Whether the passage's read is back (found, missing or failed)."""
        return doc_id in self._docs

    def get(self, doc_id: str) -> Doc | None:
        return self._docs.get(doc_id)

    def error(self, doc_id: str) -> str:
        """Why the passage could not be read ("" when it was)."""
        return self._errors.get(doc_id, "")

    def unasked(self, doc_ids: Iterable[str]) -> list[str]:
        """The ids neither read nor on their way."""
        return [d for d in dict.fromkeys(doc_ids) if d not in self._docs and d not in self._asked]

    def asking(self, doc_ids: Iterable[str]) -> None:
        self._asked.update(doc_ids)

    def take(self, passages: Passages) -> None:
        for doc_id in passages.asked:
            self._docs[doc_id] = passages.found.get(doc_id)
            if passages.error:
                self._errors[doc_id] = passages.error
            self._asked.discard(doc_id)
