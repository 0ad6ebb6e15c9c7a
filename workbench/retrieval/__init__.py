"""Retrievers that feed the pool: BM25, dense embeddings, a cross-encoder reranker.

`base` says what a system is (a first-stage `Retriever`, a second-stage `Reranker`),
`registry` names the ones `workbench pool --systems` knows, `systems` runs them for a pool.
Importing this package is cheap: torch, sentence_transformers and bm25s load only when a
retriever is built."""

from workbench.retrieval.base import BuildOptions, Reranker, Retriever
from workbench.retrieval.bm25 import BM25Retriever, passage_text
from workbench.retrieval.cache import corpus_hash, default_cache_dir
from workbench.retrieval.dense import DenseRetriever
from workbench.retrieval.models import DEFAULT_DENSE_MODEL, DEFAULT_RERANK_MODEL, ModelUnavailable
from workbench.retrieval.registry import RERANKERS, RETRIEVERS
from workbench.retrieval.rerank import CrossEncoderReranker
from workbench.retrieval.select import ProgressCallback
from workbench.retrieval.tokenize import TOKENIZER_VERSION, tokenize

__all__ = [
    "BM25Retriever",
    "BuildOptions",
    "CrossEncoderReranker",
    "DEFAULT_DENSE_MODEL",
    "DEFAULT_RERANK_MODEL",
    "DenseRetriever",
    "ModelUnavailable",
    "ProgressCallback",
    "RERANKERS",
    "RETRIEVERS",
    "Reranker",
    "Retriever",
    "TOKENIZER_VERSION",
    "corpus_hash",
    "default_cache_dir",
    "passage_text",
    "tokenize",
]
