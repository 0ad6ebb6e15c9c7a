"""The ONNX graphs the encoders run: the transformer's forward pass exported with `torch.onnx`
(`export_graph`), int8 by ONNX Runtime's dynamic quantisation after optional SmoothQuant-style
smoothing (`Int8Scheme`, `INT8_SCHEMES`, `quantize`, `smooth`), where graphs are kept (a folder
shared by every cache folder, keyed by the model files: `graph_dir`, `graph_entries`), and the
session that runs one (`session`)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.core.errors import InputError
from workbench.retrieval.cache import key_digest, store_entry
from workbench.retrieval.models import ModelUnavailable

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


def store_graph(path: Path, graph: bytes, key: dict[str, Any]) -> None:
    """A graph into the cache; one that cannot be written is exported again next time."""
    try:
        store_entry(path, graph, key)
    except InputError:
        pass


def export_graph(transformer: Any, example: dict[str, Any], output: str) -> bytes:
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


def quantize(
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
        smooth(model, fp32, calibration(), scheme.smooth_alpha, set(keep))
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


def smooth(
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
    sort_nodes(graph)


def onnx_with_outputs(graph: bytes, names: Sequence[str], element_type: int, helper: Any) -> bytes:
    """`graph` with the named intermediate tensors as extra outputs."""
    import onnx

    model = onnx.load_from_string(graph)
    for name in names:
        model.graph.output.append(helper.make_tensor_value_info(name, element_type, None))
    return model.SerializeToString()


def sort_nodes(graph: Any) -> None:
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


def session(graph: bytes, device: str) -> Any:
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
