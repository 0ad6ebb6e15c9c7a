"""Retrievers that feed the pool: BM25, dense embeddings, a cross-encoder reranker.

Importing this package is cheap: torch, sentence_transformers and bm25s load only when a
retriever is built."""

from workbench.retrieval.bm25 import BM25Retriever, passage_text
from workbench.retrieval.cache import corpus_hash, default_cache_dir
from workbench.retrieval.dense import DenseRetriever
from workbench.retrieval.models import DEFAULT_DENSE_MODEL, DEFAULT_RERANK_MODEL, ModelUnavailable
from workbench.retrieval.rerank import CrossEncoderReranker
from workbench.retrieval.select import ProgressCallback
from workbench.retrieval.tokenize import TOKENIZER_VERSION, tokenize

__all__ = [
    "BM25Retriever",
    "CrossEncoderReranker",
    "DEFAULT_DENSE_MODEL",
    "DEFAULT_RERANK_MODEL",
    "DenseRetriever",
    "ModelUnavailable",
    "ProgressCallback",
    "TOKENIZER_VERSION",
    "corpus_hash",
    "default_cache_dir",
    "passage_text",
    "tokenize",
]
