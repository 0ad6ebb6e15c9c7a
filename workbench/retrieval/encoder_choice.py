"""Which encoder a pool runs (`--encoder`, `--device`), made concrete for this machine
(`choose_encoder`): torch, ONNX Runtime fp32 or one of its int8 schemes, on the CPU or CUDA, with
what the user should know. Decided before any model or ONNX Runtime is loaded."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from workbench.core.errors import InputError
from workbench.retrieval.onnx_graphs import INT8_SCHEMES

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
