"""How texts become vectors and pairs become scores: torch through sentence-transformers, or ONNX
Runtime on a graph exported from the same local model (`onnx_graphs`: fp32, or int8 by dynamic
quantisation, several times faster on a CPU).

sentence-transformers' own `backend="onnx"` needs optimum-onnx, whose releases pin
transformers < 4.58 while sentence-transformers >= 5 needs transformers >= 5; the export is
therefore done here with `torch.onnx` and quantised with `onnxruntime.quantization`, and only
the transformer's forward pass runs in ONNX Runtime: tokenising, pooling and normalising stay
sentence-transformers' own modules (or, for a plain folder with its graph cached, `st_folder`'s
torch-free ones), so both backends share them. Exported graphs are kept in the graph folder
(`onnx_graphs.graph_dir`), keyed by the model files and the variant; nothing is downloaded and
nothing is written next to the model. Which variant and device: `encoder_choice`."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from workbench.retrieval.batching import TOKENS_PER_ITEM, token_budget_batches
from workbench.retrieval.cache import default_cache_dir, load_entry
from workbench.retrieval.encoder_choice import TORCH_VARIANTS, VARIANTS
from workbench.retrieval.models import (
    ModelUnavailable,
    load_cross_encoder,
    load_sentence_transformer,
    model_fingerprint,
)
from workbench.retrieval.onnx_graphs import (
    CALIBRATION,
    INT8_SCHEMES,
    graph_entries,
)
from workbench.retrieval.onnx_graphs import export_graph as _export
from workbench.retrieval.onnx_graphs import quantize as _quantize
from workbench.retrieval.onnx_graphs import session as _session
from workbench.retrieval.onnx_graphs import store_graph as _store_graph
from workbench.retrieval.st_folder import FolderText, PlainFolder

MAX_BATCH = {"cpu": 64, "cuda": 256}
ProgressHook = Callable[[int], None]
"""Called with the number of items done so far, after each batch."""


COUNT_CHUNK = 1024
"""Texts tokenised at a time to count their tokens."""


def _token_counts(model: Any, texts: Sequence[Any]) -> list[int]:
    """Tokens per text (or per (query, passage) pair), truncated as the model truncates."""
    tokenizer = model.tokenizer
    limit = getattr(model, "max_seq_length", None) or getattr(model, "max_length", None)
    limit = min(int(limit or getattr(tokenizer, "model_max_length", 512) or 512), 8192)
    counts: list[int] = []
    for start in range(0, len(texts), COUNT_CHUNK):  # only lengths kept: a corpus's token ids
        chunk = texts[start : start + COUNT_CHUNK]  # at once would take gigabytes
        if isinstance(chunk[0], tuple):
            encoded = tokenizer(
                [q for q, _ in chunk], [p for _, p in chunk], truncation=True, max_length=limit
            )
        else:
            encoded = tokenizer(list(chunk), truncation=True, max_length=limit)
        counts.extend(len(ids) for ids in encoded["input_ids"])
    return counts


class _Backend:
    """A loaded sentence-transformers model and, for the ONNX variants, its session. With an
    exported graph already cached and a plain model folder (`st_folder.PlainFolder`), a
    sentence encoder tokenises and pools in numpy: torch and sentence-transformers are not even
    imported (`model` still loads them when asked for)."""

    task = ""
    output = ""

    def __init__(
        self,
        resolved: str,
        variant: str = "torch",
        device: str | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        max_batch: int | None = None,
    ) -> None:
        if variant not in VARIANTS:
            raise ValueError(f"unknown encoder variant {variant!r} (known: {', '.join(VARIANTS)})")
        self.resolved = resolved
        self.variant = variant
        self.device = device
        self.max_batch = max_batch or MAX_BATCH.get(device or "cpu", 64)
        self.cache_root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        self.fingerprint = model_fingerprint(resolved)
        self._model: Any = None
        self.text: FolderText | None = None
        """Set when this backend tokenises and pools without sentence-transformers."""
        self.session: Any = None
        self._fp32_session: Any = None
        if variant in TORCH_VARIANTS:
            self._model = self._load(device)
            return
        plain = PlainFolder.read(resolved) if self.task == "embed" else None
        cached = self._cached_graph() if plain is not None else None
        if cached is not None:
            try:
                self.session = _session(cached, device or "cpu")
                self.text = FolderText(plain)  # type: ignore[arg-type]
                return
            except Exception:  # noqa: S110 - a graph ONNX Runtime cannot load: exported below
                self.session, self.text = None, None
        # The ONNX variants use the torch model only to tokenise and pool: on the CPU.
        self._model = self._load("cpu")
        try:
            self.session = _session(self._graph(), device or "cpu")
        except Exception:  # a cached graph ONNX Runtime cannot load, though its manifest
            # vouches for it (written over by hand): export it again rather than give up
            self.session = _session(self._graph(fresh=True), device or "cpu")

    @property
    def model(self) -> Any:
        """The sentence-transformers model (loaded on first use where the backend needs it
        only for its files' pipeline)."""
        if self._model is None:
            self._model = self._load(self.device if self.variant in TORCH_VARIANTS else "cpu")
        return self._model

    def _load(self, device: str | None) -> Any:
        raise NotImplementedError

    def _precision(self) -> Any:
        """torch-bf16: the model's matmuls in bfloat16 (autocast; on a CPU with AMX 2.5x fp32's
        encoding, cosines with fp32 >= 0.9999); the other torch variant: as loaded."""
        import contextlib

        if self.variant != "torch-bf16":
            return contextlib.nullcontext()
        import torch

        return torch.autocast("cuda" if self.device == "cuda" else "cpu", dtype=torch.bfloat16)

    def _keys(self) -> list[tuple[Path, dict[str, Any]]]:
        return graph_entries(
            self.task, self.resolved, self.fingerprint, self.variant, self.cache_root
        )

    def _cached_graph(self) -> bytes | None:
        """The graph of this variant when the cache holds it (nothing exported)."""
        path, key = self._keys()[-1]
        return load_entry(path, key)

    def _graph(self, fresh: bool = False) -> bytes:
        """This model's ONNX graph in the asked variant, exported (and quantised) once;
        `fresh`: exported again whatever the cache holds."""
        transformer = self._transformer()
        entries = self._keys()
        fp32_path, key = entries[0]
        fp32 = None if fresh else load_entry(fp32_path, key)
        if fp32 is None:
            fp32 = _export(transformer, self._example(), self.output)
            _store_graph(fp32_path, fp32, key)
        if self.variant == "onnx":
            return fp32
        int8_path, int8_key = entries[1]
        int8 = None if fresh else load_entry(int8_path, int8_key)
        if int8 is None:
            int8 = _quantize(fp32, self.variant, self._calibration_features)
            _store_graph(int8_path, int8, int8_key)
        return int8

    def _calibration_features(self) -> list[dict[str, Any]]:
        """`CALIBRATION` tokenised as the model tokenises, in batches of 8 (numpy int64)."""
        items = self._calibration_inputs()
        batches = [items[i : i + 8] for i in range(0, len(items), 8)]
        return [
            {k: v.cpu().numpy() for k, v in dict(self.model.preprocess(b)).items()
             if hasattr(v, "cpu")}
            for b in batches
        ]  # fmt: skip

    def _calibration_inputs(self) -> list[Any]:
        return list(CALIBRATION)

    def _transformer(self) -> Any:
        """The Hugging Face model inside the first sentence-transformers module."""
        first = self.model[0] if len(self.model) else None
        transformer = getattr(first, "model", None)
        if transformer is None or not hasattr(transformer, "config"):
            raise ModelUnavailable(
                f"model at '{self.resolved}' does not start with a transformer module; "
                "the ONNX encoder cannot export it (use --encoder torch)"
            )
        return transformer

    def _example(self) -> dict[str, Any]:
        raise NotImplementedError

    def _run(self, features: dict[str, Any]) -> Any:
        """The transformer's output for tokenised features (torch tensors or numpy arrays),
        through ONNX Runtime."""
        import numpy as np

        feed = {}
        for i in self.session.get_inputs():
            value = features[i.name]
            value = value.cpu().numpy() if hasattr(value, "cpu") else value
            feed[i.name] = np.ascontiguousarray(value.astype(np.int64, copy=False))
        return self.session.run([self.output], feed)[0]

    def _batches(self, items: Sequence[Any]) -> list[list[int]]:
        if self.text is not None:
            counts = [
                n for start in range(0, len(items), COUNT_CHUNK)
                for n in self.text.counts(items[start : start + COUNT_CHUNK])
            ]  # fmt: skip
        else:
            counts = _token_counts(self.model, items)
        return token_budget_batches(counts, self.max_batch, self.max_batch * TOKENS_PER_ITEM)


class SentenceEncoder(_Backend):
    """Texts to unit-length float32 vectors with a sentence-transformers model."""

    task = "embed"
    output = "last_hidden_state"

    def _load(self, device: str | None) -> Any:
        return load_sentence_transformer(self.resolved, self.fingerprint, device)

    def _example(self) -> dict[str, Any]:
        return dict(self.model.preprocess(["a short text", "a longer text, so that it is padded"]))

    def embed(self, texts: Sequence[str], progress: ProgressHook | None = None) -> Any:
        """Each text's normalized embedding, in the order given; batches by token budget."""
        import numpy as np

        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        matrix: Any = None  # written batch by batch: no second copy of the corpus's vectors
        done = 0
        for batch in self._batches(texts):
            vectors = self._embed_batch([texts[i] for i in batch])
            if matrix is None:
                matrix = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
            matrix[np.array(batch)] = vectors
            done += len(batch)
            if progress:
                progress(done)
        return matrix

    def embed_queries(self, texts: Sequence[str]) -> Any:
        """Queries' normalized embeddings: as `embed`, except that an int8 variant whose scheme
        says `queries_fp32` runs them through the fp32 graph."""
        scheme = INT8_SCHEMES.get(self.variant)
        if scheme is None or not scheme.queries_fp32 or not texts:
            return self.embed(texts)
        if self._fp32_session is None:
            path, key = self._keys()[0]
            graph = load_entry(path, key)
            if graph is None:  # the graph folder could not keep it: exported again
                graph = _export(self._transformer(), self._example(), self.output)
            self._fp32_session = _session(graph, self.device or "cpu")
        passages_session, self.session = self.session, self._fp32_session
        try:
            return self.embed(texts)
        finally:
            self.session = passages_session

    def _embed_batch(self, texts: list[str]) -> Any:
        import numpy as np

        if self.text is not None:
            features = self.text.features(texts)
            return self.text.pool(self._run(features), features["attention_mask"])
        if self.session is None:
            with self._precision():
                vectors = self.model.encode(
                    texts,
                    batch_size=len(texts),
                    normalize_embeddings=True,
                    show_progress_bar=False,
                    convert_to_numpy=True,
                )
            return np.asarray(vectors, dtype=np.float32)
        import torch

        features = dict(self.model.preprocess(texts))
        hidden = self._run(features)
        features[getattr(self.model[0], "module_output_name", "token_embeddings")] = (
            torch.from_numpy(hidden)
        )
        with torch.inference_mode():
            for module in list(self.model)[1:]:
                features = module(features)
        vectors = features["sentence_embedding"].float().numpy()
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


class PairScorer(_Backend):
    """(query, passage) pairs to a cross-encoder's raw logits."""

    task = "pairs"
    output = "logits"

    def _load(self, device: str | None) -> Any:
        return load_cross_encoder(self.resolved, device)

    def _example(self) -> dict[str, Any]:
        return dict(
            self.model.preprocess([("a query", "short"), ("a query", "a longer passage, padded")])
        )

    def _calibration_inputs(self) -> list[Any]:
        return [(CALIBRATION[i - 1][:60], text) for i, text in enumerate(CALIBRATION)]

    def score(self, pairs: Sequence[tuple[str, str]], progress: ProgressHook | None = None) -> Any:
        """Each pair's logit (float64), in the order given; batches by token budget."""
        import numpy as np

        scores = np.zeros(len(pairs), dtype=np.float64)
        done = 0
        for batch in self._batches(pairs) if pairs else []:
            scores[np.array(batch)] = self._score_batch([pairs[i] for i in batch])
            done += len(batch)
            if progress:
                progress(done)
        return scores

    def _score_batch(self, pairs: list[tuple[str, str]]) -> Any:
        import numpy as np

        if self.session is None:
            import torch

            with self._precision():
                logits = self.model.predict(
                    pairs,
                    batch_size=len(pairs),
                    show_progress_bar=False,
                    activation_fn=torch.nn.Identity(),
                    convert_to_numpy=True,
                )
        else:
            logits = self._run(dict(self.model.preprocess(pairs)))
        return np.asarray(logits, dtype=np.float64).reshape(-1)
