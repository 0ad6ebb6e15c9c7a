"""How texts become vectors and pairs become scores: torch through sentence-transformers, or ONNX
Runtime on a graph exported here from the same local model (fp32, or int8 by dynamic
quantisation, several times faster on a CPU).

sentence-transformers' own `backend="onnx"` needs optimum-onnx, whose releases pin
transformers < 4.58 while sentence-transformers >= 5 needs transformers >= 5; the export is
therefore done here with `torch.onnx` and quantised with `onnxruntime.quantization`, and only
the transformer's forward pass runs in ONNX Runtime: tokenising, pooling and normalising stay
sentence-transformers' own modules, so both backends share them. Exported graphs are cached
under the cache folder, keyed by the model's fingerprint and the variant; nothing is
downloaded and nothing is written next to the model."""

from __future__ import annotations

import importlib.util
import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.errors import InputError
from workbench.retrieval.batching import TOKENS_PER_ITEM, token_budget_batches
from workbench.retrieval.cache import default_cache_dir, key_digest, load_entry, store_entry
from workbench.retrieval.models import (
    ModelUnavailable,
    load_cross_encoder,
    load_sentence_transformer,
    model_fingerprint,
)
from workbench.retrieval.st_folder import FolderText, PlainFolder

ENCODERS = ("torch", "onnx", "onnx-int8", "onnx-int8-smooth", "auto")
"""`--encoder`: torch fp32; ONNX Runtime fp32; ONNX Runtime int8 (every weight MatMul, the
fastest); int8 smoothed (SmoothQuant-style, FFN down projections and queries fp32: torch's
ranking within a few per cent); auto (onnx-int8-smooth on a CPU when ONNX Runtime is installed,
else torch)."""
VARIANTS = ("torch", "onnx", "onnx-int8", "onnx-int8-smooth")
AUTO_CPU = "onnx-int8-smooth"
"""What `--encoder auto` runs on a CPU with ONNX Runtime installed (chosen by measured speed
and top-20 overlap with torch fp32: see docs/encoders.md)."""
DEVICES = ("auto", "cpu", "cuda")
"""`--device`: auto is cuda when torch sees one, else cpu."""
INSTALL_HINT = "pip install 'workbench[onnx]' (or `make setup`)"
OPSET = 17
INT8_SCHEME = "dynamic-int8/matmul/per-channel/reduced-range"
"""Signed int8 MatMul weights per output channel, 7-bit range: per-tensor int8 weights cost
MiniLM a mean cosine of 0.93 to its fp32 vectors, this scheme about 0.994."""


@dataclass(frozen=True, slots=True)
class Int8Scheme:
    """How an int8 variant is quantised (ONNX Runtime's `quantize_dynamic` of MatMul weights)."""

    name: str
    """As the cache keys name it: a change of scheme is a new graph and new embeddings."""
    per_channel: bool = True
    reduce_range: bool = True
    keep_fp32: tuple[str, ...] = ()
    """Regular expressions: MatMuls whose node name matches one are left in fp32."""
    smooth_alpha: float | None = None
    """SmoothQuant (Xiao et al. 2023): each quantised MatMul's input channels divided by
    s = max|x|^alpha / max|w|^(1 - alpha) (ranges from `CALIBRATION` texts run through the fp32
    graph) and its weight rows multiplied by s, so that a few outlier channels no longer set the
    whole activation tensor's int8 step; None: no smoothing."""
    queries_fp32: bool = False
    """Queries through the fp32 graph (few and short: little time), passages through int8: a
    score then carries the passage's quantisation error alone."""


FFN_DOWN = r"layer\.\d+/output/dense/MatMul"
"""The FFN's down projections (fed by GELU's long-tailed output): int8 there costs the most."""
INT8_SCHEMES = {
    "onnx-int8": Int8Scheme(INT8_SCHEME),
    "onnx-int8-smooth": Int8Scheme(
        "dynamic-int8/matmul/per-channel/full-range/smooth-0.7/ffn-down-fp32/queries-fp32",
        reduce_range=False,
        keep_fp32=(FFN_DOWN,),
        smooth_alpha=0.7,
        queries_fp32=True,
    ),
}
CALIBRATION = (
    "The present study is a history of the classification scheme and of its editions.",
    "An experimental investigation of the boundary layer on a flat plate at supersonic speeds",
    "Patients with chronic kidney disease were randomised to two doses; 14% had adverse events.",
    "How do I reset my password? I tried the link in the e-mail, but it says it has expired.",
    "The committee will meet on Tuesday, 3 March 2026, at 10:00 in room B-12 to vote on it.",
    "Maize is dried to 13 per cent moisture before it is stored in sealed silos over winter.",
    "def encode(texts): return [model(t) for t in texts]  # one call per text, no batching",
    "Shares fell 4.2 per cent after the company cut its forecast for the third quarter.",
    "Information retrieval systems rank documents by their estimated relevance to a query.",
    "She left the village at dawn, crossed the river and reached the city by nightfall.",
    "Thermal stresses in thin cylindrical shells under axisymmetric heating and pressure.",
    "Citation indexes let a reader follow a paper's influence forward through later work.",
    "What is the effect of the Reynolds number on the drag of a sphere at low speeds?",
    "Le comité a rejeté la proposition; die Sitzung wurde vertagt. 会議は延期された。",
    "ERROR 1045 (28000): Access denied for user 'root'@'localhost' (using password: YES)",
    "A survey of 1,200 public libraries found that loans of printed books rose in 2024.",
)
"""Texts the smoothing's activation ranges are measured on: fixed (a graph depends on the model
files alone), varied (outlier channels are the model's, not the text's)."""
MAX_BATCH = {"cpu": 64, "cuda": 256}
ProgressHook = Callable[[int], None]
"""Called with the number of items done so far, after each batch."""


@dataclass(frozen=True, slots=True)
class EncoderChoice:
    """The backend and device a pool encodes with, and what the user should know about it."""

    variant: str
    """One of `VARIANTS`."""
    device: str
    """"cpu" or "cuda"."""
    warnings: tuple[str, ...] = ()


def encoder_key(variant: str) -> str:
    """A variant as embedding caches name it: int8 with its quantisation scheme."""
    scheme = INT8_SCHEMES.get(variant)
    return f"{variant}/{scheme.name}" if scheme else variant


GRAPH_DIR_ENV = "WORKBENCH_GRAPH_DIR"


def graph_dir(cache_root: Path) -> Path:
    """Where exported graphs are kept: $WORKBENCH_GRAPH_DIR, else the user's cache
    ($XDG_CACHE_HOME or ~/.cache)/workbench/graphs, shared by every cache folder so that only a
    model's first pool exports it; `cache_root` when that folder cannot be written."""
    configured = os.environ.get(GRAPH_DIR_ENV)
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    shared = Path(base) / "workbench" / "graphs"
    try:
        shared.mkdir(parents=True, exist_ok=True)
    except OSError:
        return cache_root
    return shared if os.access(shared, os.W_OK | os.X_OK) else cache_root


def graph_entries(
    task: str, resolved: str, fingerprint: str, variant: str, cache_root: Path
) -> list[tuple[Path, dict[str, Any]]]:
    """(path, manifest key) of each graph an ONNX variant is built from, fp32 first: in
    `graph_dir`, named and keyed by the model files' fingerprint (a changed model is a new
    graph) and, for int8, the quantisation scheme."""
    key = {
        "kind": "onnx",
        "task": task,
        "model": resolved,
        "model_fingerprint": fingerprint,
        "opset": OPSET,
    }
    name = f"onnx-{task}-{key_digest(key)}"
    root = graph_dir(cache_root)
    entries = [(root / f"{name}-fp32.onnx", key)]
    scheme = INT8_SCHEMES.get(variant)
    if scheme is not None:
        suffix = variant.removeprefix("onnx-")
        entries.append((root / f"{name}-{suffix}.onnx", {**key, "quantization": scheme.name}))
    return entries


def _store_graph(path: Path, graph: bytes, key: dict[str, Any]) -> None:
    """A graph into the cache; one that cannot be written is exported again next time."""
    try:
        store_entry(path, graph, key)
    except InputError:
        pass


def onnx_installed() -> bool:
    """ONNX Runtime and onnx (the `onnx` extra) are importable."""
    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx"))


def cuda_visible() -> bool:
    """torch is installed and sees a CUDA device."""
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


def _onnx_cuda() -> bool:
    import onnxruntime

    return "CUDAExecutionProvider" in onnxruntime.get_available_providers()


def choose_encoder(encoder: str, device: str) -> EncoderChoice:
    """The user's `--encoder` and `--device` made concrete; InputError (exit 2) when one asks
    for what this machine lacks."""
    problems: list[str] = []
    if encoder not in ENCODERS:
        problems.append(f"--encoder: unknown {encoder!r} (known: {', '.join(ENCODERS)})")
    if device not in DEVICES:
        problems.append(f"--device: unknown {device!r} (known: {', '.join(DEVICES)})")
    if problems:
        raise InputError(problems)
    warnings: list[str] = []
    if device == "cuda" and not cuda_visible():
        raise InputError(
            ["--device cuda: torch sees no CUDA device here (use --device cpu or --device auto)"]
        )
    resolved_device = device if device != "auto" else ("cuda" if cuda_visible() else "cpu")
    if encoder == "auto":
        if resolved_device == "cuda":
            return EncoderChoice("torch", "cuda")
        if onnx_installed():
            return EncoderChoice(AUTO_CPU, "cpu")
        return EncoderChoice(
            "torch",
            "cpu",
            (f"--encoder auto: ONNX Runtime is not installed, encoding with torch (slower); "
             f"{INSTALL_HINT}",),
        )  # fmt: skip
    if encoder != "torch":
        if not onnx_installed():
            raise InputError(
                [f"--encoder {encoder}: ONNX Runtime is not installed; {INSTALL_HINT}, "
                 "or use --encoder torch"]
            )  # fmt: skip
        if resolved_device == "cuda" and not _onnx_cuda():
            if device == "cuda":
                raise InputError(
                    [f"--device cuda with --encoder {encoder}: this ONNX Runtime has no CUDA "
                     "provider (install onnxruntime-gpu, or use --encoder torch)"]
                )  # fmt: skip
            warnings.append(
                f"--encoder {encoder}: this ONNX Runtime has no CUDA provider; running on the CPU"
            )
            resolved_device = "cpu"
    return EncoderChoice(encoder, resolved_device, tuple(warnings))


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
        if variant == "torch":
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
            self._model = self._load("cpu" if self.variant != "torch" else self.device)
        return self._model

    def _load(self, device: str | None) -> Any:
        raise NotImplementedError

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


def _export(transformer: Any, example: dict[str, Any], output: str) -> bytes:
    """The transformer's forward pass as an ONNX graph (batch and sequence axes dynamic),
    traced with eager attention so the graph holds plain ops that ONNX Runtime fuses."""
    import io
    import warnings

    import torch

    names = [n for n in ("input_ids", "attention_mask", "token_type_ids") if n in example]

    class Graph(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = transformer

        def forward(self, *tensors: Any) -> Any:
            return getattr(self.inner(**dict(zip(names, tensors, strict=True))), output)

    previous = getattr(transformer.config, "_attn_implementation", None)
    switch = hasattr(transformer, "set_attn_implementation") and previous not in (None, "eager")
    buffer = io.BytesIO()
    try:
        if switch:
            transformer.set_attn_implementation("eager")
        # The tracer's notes on Python constants and legacy export are not for users.
        with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad():
            warnings.simplefilter("ignore")
            torch.onnx.export(
                Graph().eval(),
                tuple(example[n].cpu() for n in names),
                buffer,
                dynamo=False,
                input_names=names,
                output_names=[output],
                dynamic_axes={n: {0: "batch", 1: "sequence"} for n in (*names, output)},
                opset_version=OPSET,
            )
    except Exception as error:
        detail = " ".join(str(error).split())[:300]
        raise ModelUnavailable(f"the ONNX export failed: {detail}") from error
    finally:
        if switch:
            transformer.set_attn_implementation(previous)
    return buffer.getvalue()


def _quantize(
    fp32: bytes,
    variant: str = "onnx-int8",
    calibration: Callable[[], list[dict[str, Any]]] | None = None,
) -> bytes:
    """The variant's `Int8Scheme` applied to an fp32 graph (ONNX Runtime's dynamic quantisation:
    activations are quantised per batch at run time; a smoothing scheme's ranges come from
    `calibration`'s features, run through the fp32 graph)."""
    import logging
    import re

    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    scheme = INT8_SCHEMES[variant]
    model = onnx.load_from_string(fp32)
    keep = [
        n.name for n in model.graph.node
        if n.op_type == "MatMul" and any(re.search(p, n.name) for p in scheme.keep_fp32)
    ]  # fmt: skip
    if scheme.smooth_alpha is not None:
        if calibration is None:
            raise ValueError(f"{variant}: smoothing needs calibration features")
        _smooth(model, fp32, calibration(), scheme.smooth_alpha, set(keep))
    root_logger = logging.getLogger()
    level = root_logger.level
    root_logger.setLevel(logging.ERROR)  # its advice to pre-process logs on the root logger
    try:
        with tempfile.TemporaryDirectory(prefix="workbench-int8-") as folder:
            source, target = Path(folder) / "fp32.onnx", Path(folder) / "int8.onnx"
            source.write_bytes(model.SerializeToString() if scheme.smooth_alpha else fp32)
            quantize_dynamic(
                source,
                target,
                weight_type=QuantType.QInt8,
                op_types_to_quantize=["MatMul"],
                per_channel=scheme.per_channel,
                reduce_range=scheme.reduce_range,
                nodes_to_exclude=keep,
            )
            return target.read_bytes()
    finally:
        root_logger.setLevel(level)


def _smooth(
    model: Any, fp32: bytes, features: list[dict[str, Any]], alpha: float, keep: set[str]
) -> None:
    """SmoothQuant in place on `model` (see `Int8Scheme.smooth_alpha`): for each MatMul with a
    constant weight not in `keep`, a Mul by 1/s on its input and its weight's rows times s (the
    fp32 product unchanged)."""
    import numpy as np
    import onnxruntime
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    weights = {i.name: i for i in graph.initializer}
    targets = [
        n for n in graph.node
        if n.op_type == "MatMul" and n.input[1] in weights and n.name not in keep
    ]  # fmt: skip
    inputs = sorted({n.input[0] for n in targets})
    probe = onnx_with_outputs(fp32, inputs, TensorProto.FLOAT, helper)
    session = onnxruntime.InferenceSession(probe, providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    ranges: dict[str, Any] = {}
    for batch in features:
        outputs = session.run(inputs, {n: batch[n].astype(np.int64) for n in names})
        for name, value in zip(inputs, outputs, strict=True):
            peak = np.abs(value).reshape(-1, value.shape[-1]).max(axis=0)
            ranges[name] = np.maximum(ranges[name], peak) if name in ranges else peak
    for number, node in enumerate(targets):
        weight = numpy_helper.to_array(weights[node.input[1]])
        peak_w = np.maximum(np.abs(weight).max(axis=1), 1e-8)
        scale = np.clip(ranges[node.input[0]] ** alpha / peak_w ** (1 - alpha), 1e-5, None)
        scale = scale.astype(np.float32)
        smoothed = numpy_helper.from_array(
            (weight * scale[:, None]).astype(np.float32), f"{node.input[1]}_smooth_{number}"
        )
        inverse = numpy_helper.from_array((1 / scale).astype(np.float32), f"smooth_{number}")
        graph.initializer.extend([smoothed, inverse])
        out = f"smooth_{number}_output"
        graph.node.append(helper.make_node("Mul", [node.input[0], inverse.name], [out],
                                           name=f"Smooth_{number}"))  # fmt: skip
        node.input[0], node.input[1] = out, smoothed.name
    _sort_nodes(graph)


def onnx_with_outputs(graph: bytes, names: Sequence[str], element_type: int, helper: Any) -> bytes:
    """`graph` with the named intermediate tensors as extra outputs."""
    import onnx

    model = onnx.load_from_string(graph)
    for name in names:
        model.graph.output.append(helper.make_tensor_value_info(name, element_type, None))
    return model.SerializeToString()


def _sort_nodes(graph: Any) -> None:
    """The graph's nodes in topological order (ONNX requires it; the smoothing Muls were
    appended at the end)."""
    ready = {i.name for i in graph.input} | {i.name for i in graph.initializer} | {""}
    ordered, pending = [], list(graph.node)
    while pending:
        waiting = []
        for node in pending:
            if all(name in ready for name in node.input):
                ordered.append(node)
                ready.update(node.output)
            else:
                waiting.append(node)
        if len(waiting) == len(pending):
            raise ValueError("the smoothed graph has a cycle")
        pending = waiting
    del graph.node[:]
    graph.node.extend(ordered)


def _session(graph: bytes, device: str) -> Any:
    """An ONNX Runtime session on `device`; threads do not spin while idle (the CPU is shared
    with tokenising and, often, with other work)."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.log_severity_level = 3
    providers = ["CPUExecutionProvider"]
    if device == "cuda":
        providers.insert(0, "CUDAExecutionProvider")
    return onnxruntime.InferenceSession(graph, options, providers=providers)
