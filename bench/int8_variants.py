"""Int8 variants of the dense model against torch fp32 (issue 14 item 1: >= 2x torch fp32 on a
CPU with a top-20 overlap >= 0.95): prints one table of cosine, overlap and speed per variant.

Each variant is an ONNX graph built from the same fp32 export as `--encoder onnx` (optionally
after ONNX Runtime's transformer optimiser, which fuses attention, LayerNorm and GELU) and then
quantised: dynamic int8 with chosen nodes kept fp32, per channel or not, reduced range or not, or
static int8 (QDQ) calibrated on passages of the corpora themselves. Three stages:

1. screen: mean/min cosine to torch fp32 over `--screen` passages (half from each collection);
2. overlap: variants whose screening mean cosine reaches `--overlap-min-cosine` encode both
   corpora and their queries; top-20 overlap with torch fp32's rankings and found-relevant
   share, as `bench/encode_speed.py` computes them;
3. speed: passages/s on a fixed subset (`--speed` passages), every variant and torch fp32
   interleaved chunk by chunk in a rotating order, so a change of load falls on all alike.

Torch fp32's vectors for the corpora and queries are cached under `--work-dir` (computed once),
with each variant's graph and its figures (`results.json`: a variant measured before is not
measured again; a speed run replaces the previous one, so speed ratios always come from one
interleaved run). `--overlap-min-cosine 0` measures overlap for every variant chosen.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/int8_variants.py \
        [--collections-dir ../shared/collections] [--variants a,b] [--work-dir /tmp/int8-variants]
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from workbench.retrieval.encoders import SentenceEncoder
from workbench.retrieval.models import DEFAULT_DENSE_MODEL, resolve_model

sys.path.insert(0, str(Path(__file__).resolve().parent))
from encode_speed import COLLECTIONS, DEPTH, load, load_line, top_ids  # noqa: E402

NodeFilter = Callable[[str, str], bool]
"""(node name, op type) -> True when the node is kept in fp32."""


def attention_scores(name: str, op: str) -> bool:
    """The two activation x activation MatMuls of each attention (Q.K^T and softmax.V)."""
    return op == "MatMul" and bool(re.search(r"attention/self/MatMul(_1)?$", name))


def ffn_output(name: str, op: str) -> bool:
    """The FFN's down projection (1536 -> 384, fed by GELU's output)."""
    return op == "MatMul" and "/output/dense/" in name and "attention" not in name


def layers(*numbers: int) -> NodeFilter:
    pattern = re.compile(r"layer\.(\d+)/|^Attention_(\d+)$")  # fused: Attention_N

    def chosen(name: str, op: str) -> bool:
        found = pattern.search(name)
        return bool(found) and int(found.group(1) or found.group(2)) in numbers

    return chosen


def any_of(*filters: NodeFilter) -> NodeFilter:
    return lambda name, op: any(f(name, op) for f in filters)


def not_ffn(name: str, op: str) -> bool:
    """Everything but the FFN's two MatMuls (up and down projection)."""
    return not ("/intermediate/dense/" in name or ffn_output(name, op))


@dataclass(frozen=True)
class Variant:
    name: str
    description: str
    source: str = "fp32"  # "fp32" (the torch.onnx export) or "optimized" (ORT's bert fusions)
    quant: str | None = None  # None, "dynamic" or "static"
    op_types: tuple[str, ...] = ("MatMul",)
    per_channel: bool = True
    reduce_range: bool = True
    keep_fp32: NodeFilter | None = None
    session: dict[str, Any] = field(default_factory=dict)
    max_batch: int = 64  # passages per batch at most (the token budget scales with it)
    smooth: float | None = None  # SmoothQuant alpha (onnx_graphs.smooth, its CALIBRATION texts)
    graph_of: str | None = None  # the same graph as this other variant's


VARIANTS = [
    Variant("onnx-fp32", "torch.onnx export, fp32 (--encoder onnx)"),
    Variant(
        "int8-current",
        "dynamic int8, all MatMuls, per channel, reduced range (current onnx-int8)",
        quant="dynamic",
    ),
    Variant(
        "int8-per-tensor",
        "dynamic int8, all MatMuls, per tensor, full range",
        quant="dynamic",
        per_channel=False,
        reduce_range=False,
    ),
    Variant(
        "int8-pc-full",
        "dynamic int8, all MatMuls, per channel, full range",
        quant="dynamic",
        reduce_range=False,
    ),
    Variant(
        "int8-no-ffnout",
        "dynamic int8, FFN down projections kept fp32",
        quant="dynamic",
        keep_fp32=ffn_output,
    ),
    Variant(
        "int8-no-ffnout-full",
        "dynamic int8, FFN down projections kept fp32, full range",
        quant="dynamic",
        keep_fp32=ffn_output,
        reduce_range=False,
    ),
    Variant(
        "int8-no-l0l5",
        "dynamic int8, first and last layer kept fp32",
        quant="dynamic",
        keep_fp32=layers(0, 5),
    ),
    Variant(
        "int8-no-l5", "dynamic int8, last layer kept fp32", quant="dynamic", keep_fp32=layers(5)
    ),
    Variant(
        "int8-ffn-only",
        "dynamic int8, only the FFN MatMuls (up and down)",
        quant="dynamic",
        keep_fp32=not_ffn,
    ),
    Variant(
        "opt-fp32",
        "ORT bert optimiser (fused attention, LayerNorm, GELU), fp32",
        source="optimized",
    ),
    Variant(
        "opt-int8",
        "optimiser, then dynamic int8 of MatMul and Attention (pc, rr)",
        source="optimized",
        quant="dynamic",
        op_types=("MatMul", "Attention"),
    ),
    Variant(
        "opt-int8-matmul",
        "optimiser, then dynamic int8 of MatMuls only (fused "
        "Attention, with its QKV projection, fp32)",
        source="optimized",
        quant="dynamic",
    ),
    Variant(
        "opt-int8-full",
        "optimiser, then dynamic int8 of MatMul and Attention, full range",
        source="optimized",
        quant="dynamic",
        op_types=("MatMul", "Attention"),
        reduce_range=False,
    ),
    Variant(
        "opt-int8-no-ffnout",
        "optimiser, then dynamic int8 of MatMul and Attention, FFN down projections fp32",
        source="optimized",
        quant="dynamic",
        op_types=("MatMul", "Attention"),
        keep_fp32=ffn_output,
    ),
    Variant(
        "opt-int8-no-ffnout-full",
        "optimiser, then dynamic int8 of MatMul and Attention, "
        "FFN down projections fp32, full range",
        source="optimized",
        quant="dynamic",
        op_types=("MatMul", "Attention"),
        keep_fp32=ffn_output,
        reduce_range=False,
    ),
    Variant(
        "int8-no-ffnout-l0-full",
        "dynamic int8, FFN down projections and layer 0 fp32, full range",
        quant="dynamic",
        keep_fp32=any_of(ffn_output, layers(0)),
        reduce_range=False,
    ),
    Variant(
        "opt-int8-no-ffnout-l0-full",
        "as opt-int8-no-ffnout-full, layer 0 fp32 too",
        source="optimized",
        quant="dynamic",
        op_types=("MatMul", "Attention"),
        keep_fp32=any_of(ffn_output, layers(0)),
        reduce_range=False,
    ),
    Variant(
        "opt-int8-no-ffnout-l0l5-full",
        "as opt-int8-no-ffnout-full, layers 0 and 5 fp32 too",
        source="optimized",
        quant="dynamic",
        op_types=("MatMul", "Attention"),
        keep_fp32=any_of(ffn_output, layers(0, 5)),
        reduce_range=False,
    ),
    Variant(
        "smooth-0.7-full",
        "SmoothQuant alpha 0.7, dynamic int8 of all MatMuls, full range",
        quant="dynamic",
        reduce_range=False,
        smooth=0.7,
    ),
    Variant(
        "smooth-0.7-no-ffnout-full",
        "SmoothQuant alpha 0.7, FFN down projections fp32, full range (onnx-int8-smooth)",
        quant="dynamic",
        keep_fp32=ffn_output,
        reduce_range=False,
        smooth=0.7,
    ),
    Variant(
        "smooth-0.8-no-ffnout-full",
        "SmoothQuant alpha 0.8, FFN down projections fp32, full range",
        quant="dynamic",
        keep_fp32=ffn_output,
        reduce_range=False,
        smooth=0.8,
    ),
    Variant(
        "int8-pc-full-b8",
        "int8-pc-full in batches of at most 8 passages (finer activation scales)",
        graph_of="int8-pc-full",
        max_batch=8,
    ),
    Variant(
        "int8-pc-full-b1",
        "int8-pc-full one passage at a time (activation scales per passage)",
        graph_of="int8-pc-full",
        max_batch=1,
    ),
    Variant(
        "int8-no-ffnout-full-b1",
        "int8-no-ffnout-full one passage at a time",
        graph_of="int8-no-ffnout-full",
        max_batch=1,
    ),
    Variant(
        "static-qdq",
        "static int8 QDQ (MinMax, calibrated on 128 corpus passages), attention scores fp32",
        quant="static",
        keep_fp32=attention_scores,
    ),
]
"""Session-option variants (same graph, speed only) are added for the best by `--sessions`."""

SESSION_VARIANTS = {
    "threads2-spin": {"threads": 2, "spinning": True},
    "threads2-seq": {"threads": 2, "spinning": False, "sequential": True},
    "threads1": {"threads": 1, "spinning": False},
}


def session(
    graph: bytes, threads: int | None = None, spinning: bool = False, sequential: bool = False
) -> Any:
    """As `onnx_graphs.session` (ORT_ENABLE_ALL, no spinning), with the options varied."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.add_session_config_entry("session.intra_op.allow_spinning", "1" if spinning else "0")
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    if threads:
        options.intra_op_num_threads = threads
    if sequential:
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(graph, options, providers=["CPUExecutionProvider"])


class Builder:
    """Graphs of each variant, built once into the work folder."""

    def __init__(self, work: Path, encoder: SentenceEncoder, calibration: list[str]) -> None:
        self.work = work
        self.encoder = encoder
        self.calibration = calibration
        self.fp32 = work / "fp32.onnx"
        if not self.fp32.exists():
            self.fp32.write_bytes(encoder._graph())

    def source(self, kind: str) -> Path:
        if kind == "fp32":
            return self.fp32
        path = self.work / "optimized.onnx"
        if not path.exists():
            from onnxruntime.transformers.optimizer import optimize_model

            config = self.encoder._transformer().config
            model = optimize_model(
                str(self.fp32),
                model_type="bert",
                opt_level=1,
                num_heads=config.num_attention_heads,
                hidden_size=config.hidden_size,
            )
            print(
                f"  optimiser fusions: "
                f"{ {k: v for k, v in model.get_fused_operator_statistics().items() if v} }"
            )
            model.save_model_to_file(str(path))
        return path

    def graph(self, variant: Variant) -> bytes:
        if variant.graph_of:
            return self.graph(next(v for v in VARIANTS if v.name == variant.graph_of))
        path = self.work / f"{variant.name}.onnx"
        if path.exists():
            return path.read_bytes()
        source = self.source(variant.source)
        if variant.quant is None:
            return source.read_bytes()
        import onnx

        nodes = onnx.load(str(source), load_external_data=False).graph.node
        keep = [n.name for n in nodes if variant.keep_fp32 and variant.keep_fp32(n.name, n.op_type)]
        if variant.smooth is not None:
            from workbench.retrieval.onnx_graphs import smooth as _smooth

            model = onnx.load(str(source))
            raw = source.read_bytes()
            _smooth(model, raw, self.encoder._calibration_features(), variant.smooth, set(keep))
            source = self.work / f"{variant.name}-smoothed.onnx"
            onnx.save(model, str(source))
        root = logging.getLogger()
        level, _ = root.level, root.setLevel(logging.ERROR)
        try:
            if variant.quant == "dynamic":
                from onnxruntime.quantization import QuantType, quantize_dynamic

                quantize_dynamic(
                    source,
                    path,
                    weight_type=QuantType.QInt8,
                    op_types_to_quantize=list(variant.op_types),
                    per_channel=variant.per_channel,
                    reduce_range=variant.reduce_range,
                    nodes_to_exclude=keep,
                    extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
                )
            else:
                self.static(source, path, variant, keep)
        finally:
            root.setLevel(level)
        print(f"  {variant.name}: built, {len(keep)} nodes kept fp32")
        return path.read_bytes()

    def static(self, source: Path, path: Path, variant: Variant, keep: list[str]) -> None:
        from onnxruntime.quantization import (
            CalibrationDataReader,
            CalibrationMethod,
            QuantFormat,
            QuantType,
            quantize_static,
        )

        encoder = self.encoder
        texts = self.calibration

        class Reader(CalibrationDataReader):
            def __init__(self) -> None:
                self.batches = iter(
                    {
                        k: v.cpu().numpy().astype(np.int64)
                        for k, v in dict(encoder.model.preprocess(texts[i : i + 16])).items()
                        if k in ("input_ids", "attention_mask", "token_type_ids")
                    }
                    for i in range(0, len(texts), 16)
                )

            def get_next(self) -> dict[str, np.ndarray] | None:
                return next(self.batches, None)

        quantize_static(
            source,
            path,
            Reader(),
            quant_format=QuantFormat.QDQ,
            op_types_to_quantize=list(variant.op_types),
            per_channel=variant.per_channel,
            reduce_range=variant.reduce_range,
            activation_type=QuantType.QUInt8,
            weight_type=QuantType.QInt8,
            nodes_to_exclude=keep,
            calibrate_method=CalibrationMethod.MinMax,
        )


def encode(
    encoder: SentenceEncoder, graph_session: Any, texts: list[str], max_batch: int = 64
) -> np.ndarray:
    """Dynamic quantisation scales activations per batch: smaller batches, finer scales."""
    encoder.session, encoder.max_batch = graph_session, max_batch
    return encoder.embed(texts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", default="cranfield,cisi")
    parser.add_argument("--collections-dir", type=Path, default=COLLECTIONS)
    parser.add_argument("--variants", help="comma-separated names (default: all)")
    parser.add_argument("--screen", type=int, default=500, help="passages for the cosine screen")
    parser.add_argument("--overlap-min-cosine", type=float, default=0.995)
    parser.add_argument("--speed", type=int, default=512, help="passages timed per variant")
    parser.add_argument("--speed-variants", help="comma-separated (default: all screened)")
    parser.add_argument("--sessions", help="a variant to also time with other session options")
    parser.add_argument("--chunk", type=int, default=64)
    parser.add_argument("--work-dir", type=Path, default=Path("/tmp/int8-variants"))
    args = parser.parse_args()
    work = args.work_dir
    work.mkdir(parents=True, exist_ok=True)
    results_path = work / "results.json"
    results: dict[str, dict[str, Any]] = (
        json.loads(results_path.read_text()) if results_path.exists() else {}
    )

    model = resolve_model(DEFAULT_DENSE_MODEL)
    torch_encoder = SentenceEncoder(model, "torch", "cpu", work / "cache")
    onnx_encoder = SentenceEncoder(model, "onnx", "cpu", work / "cache")
    names = args.collections.split(",")
    data = {n: load(args.collections_dir / n, None) for n in names}

    reference: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for name, (_, passages, queries, _) in data.items():
        corpus_file, query_file = work / f"torch-{name}-corpus.npy", work / f"torch-{name}-q.npy"
        if not corpus_file.exists():
            begin = time.perf_counter()
            np.save(corpus_file, torch_encoder.embed(passages))
            np.save(query_file, torch_encoder.embed([t for _, t in queries]))
            print(f"torch fp32 reference for {name}: {time.perf_counter() - begin:.0f}s")
        reference[name] = (np.load(corpus_file), np.load(query_file))

    half = args.screen // len(names)
    screen_texts = [t for n in names for t in data[n][1][:half]]
    screen_ref = np.concatenate([reference[n][0][:half] for n in names])
    calibration = [t for n in names for t in data[n][1][-64:]]
    builder = Builder(work, onnx_encoder, calibration)
    chosen = [v for v in VARIANTS if not args.variants or v.name in args.variants.split(",")]
    print(f"model {model}; {load_line()}")

    sessions: dict[str, Any] = {}
    for variant in chosen:
        sessions[variant.name] = session(builder.graph(variant), **variant.session)
        row = results.setdefault(variant.name, {"description": variant.description})
        if "screen_mean" not in row:
            vectors = encode(onnx_encoder, sessions[variant.name], screen_texts, variant.max_batch)
            cosine = np.sum(vectors * screen_ref, axis=1)
            row.update(screen_mean=float(cosine.mean()), screen_min=float(cosine.min()))
            print(
                f"  {variant.name}: screen cosine mean {cosine.mean():.4f} min "
                f"{cosine.min():.4f}; {load_line()}"
            )
        if row["screen_mean"] >= args.overlap_min_cosine and "overlap" not in row:
            row["overlap"], row["found"] = {}, {}
            for name, (doc_ids, passages, queries, relevant) in data.items():
                matrix = encode(onnx_encoder, sessions[variant.name], passages, variant.max_batch)
                query_vectors = encode(
                    onnx_encoder, sessions[variant.name], [t for _, t in queries], variant.max_batch
                )
                mine = top_ids(doc_ids, matrix, query_vectors)
                theirs = top_ids(doc_ids, *reference[name])
                row["overlap"][name] = float(
                    np.mean(
                        [len(set(a) & set(b)) / DEPTH for a, b in zip(mine, theirs, strict=True)]
                    )
                )
                judged = [i for i, (qid, _) in enumerate(queries) if relevant.get(qid)]
                row["found"][name] = sum(
                    len(set(mine[i]) & relevant[queries[i][0]]) for i in judged
                ) / sum(len(relevant[queries[i][0]]) for i in judged)
                cosine = np.sum(matrix * reference[name][0], axis=1)
                row.setdefault("cosine", {})[name] = [float(cosine.mean()), float(cosine.min())]
            print(f"  {variant.name}: overlap {row['overlap']}; {load_line()}")
        results_path.write_text(json.dumps(results, indent=1))

    timed = [v.name for v in chosen]
    if args.speed_variants:
        timed = [n for n in args.speed_variants.split(",") if n in sessions]
    if args.sessions:
        base = next(v for v in chosen if v.name == args.sessions)
        for suffix, options in SESSION_VARIANTS.items():
            sessions[f"{base.name}+{suffix}"] = session(builder.graph(base), **options)
            timed.append(f"{base.name}+{suffix}")
    if args.speed and timed:
        per = args.speed // len(names)
        subset = [t for n in names for t in data[n][1][half : half + per]]
        print(f"timing {len(subset)} passages x {len(timed) + 1} backends; {load_line()}")
        seconds: dict[str, float] = defaultdict(float)
        runners: dict[str, Callable[[list[str]], Any]] = {"torch": torch_encoder.embed}
        for name in timed:
            batch = next(v.max_batch for v in chosen if v.name == name.split("+")[0])
            runners[name] = (lambda s, b: lambda texts: encode(onnx_encoder, s, texts, b))(
                sessions[name], batch
            )
        for runner in runners.values():
            runner(["warm up: the first batch pays for allocation"] * 4)
        order = list(runners)
        loads = [os.getloadavg()[0]]
        for number, start in enumerate(range(0, len(subset), args.chunk)):
            chunk = subset[start : start + args.chunk]
            rotation = number % len(order)
            for name in order[rotation:] + order[:rotation]:
                begin = time.perf_counter()
                runners[name](chunk)
                seconds[name] += time.perf_counter() - begin
            loads.append(os.getloadavg()[0])
        speed_run = {
            "passages": len(subset),
            "chunk": args.chunk,
            "load_1min_min_max": [min(loads), max(loads)],
            "rates": {n: len(subset) / s for n, s in seconds.items()},
        }
        results["_speed"] = speed_run
        results_path.write_text(json.dumps(results, indent=1))
    print_table(results, names)


def print_table(results: dict[str, Any], names: list[str]) -> None:
    speed = results.get("_speed", {})
    rates = speed.get("rates", {})
    torch_rate = rates.get("torch")
    print()
    if speed:
        low, high = speed["load_1min_min_max"]
        print(
            f"Speed: {speed['passages']} passages per backend, interleaved in chunks of "
            f"{speed['chunk']}; 1-min load average {low:.1f}-{high:.1f} on "
            f"{os.cpu_count()} CPUs; torch fp32 {torch_rate:.1f} passages/s"
        )
    header = f"{'variant':<28} {'cos mean':>8} {'cos min':>8}"
    header += "".join(f" {n[:9] + ' ov':>12} {n[:9] + ' fr':>12}" for n in names)
    print(header + f" {'p/s':>6} {'vs torch':>8}")
    for name, row in sorted(results.items(), key=lambda kv: kv[0] != "onnx-fp32"):
        if name.startswith("_"):
            continue
        cells = [
            f"{name:<28}",
            f"{row.get('screen_mean', float('nan')):>8.4f}",
            f"{row.get('screen_min', float('nan')):>8.4f}",
        ]
        for n in names:
            overlap = row.get("overlap", {}).get(n)
            found = row.get("found", {}).get(n)
            cells.append(f"{overlap:>12.3f}" if overlap is not None else f"{'-':>12}")
            cells.append(f"{found:>12.3f}" if found is not None else f"{'-':>12}")
        rate = rates.get(name)
        cells.append(f"{rate:>6.1f}" if rate else f"{'-':>6}")
        cells.append(f"{rate / torch_rate:>7.2f}x" if rate and torch_rate else f"{'-':>8}")
        print(" ".join(cells))
    for name, rate in rates.items():
        if "+" in name:
            print(
                f"{name:<28} {'(same graph)':>17}"
                + " " * (26 * len(names))
                + f" {rate:>6.1f} {rate / torch_rate:>7.2f}x"
            )


if __name__ == "__main__":
    main()
