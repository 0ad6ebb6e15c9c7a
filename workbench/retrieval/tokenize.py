"""BM25's tokenizer is the project's one tokenizer, kept in the pure core
(workbench.core.tokenize) so that the adaptive queue's similarities split text the same way."""

from workbench.core.tokenize import TOKENIZER_VERSION, tokenize

__all__ = ["TOKENIZER_VERSION", "tokenize"]
