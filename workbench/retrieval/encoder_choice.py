"""Which encoder a pool runs (`--encoder`, `--device`), made concrete for this machine
(`choose_encoder`): torch (fp32 or bf16), ONNX Runtime fp32 or one of its int8 schemes, on the
CPU or CUDA, with what the user should know. Decided before any model or ONNX Runtime is
loaded."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

from workbench.core.errors import InputError
from workbench.retrieval.onnx_graphs import INT8_SCHEMES

ENCODERS = ("torch", "torch-bf16", "onnx", "onnx-int8", "onnx-int8-smooth", "auto")
"""`--encoder`: torch fp32; torch with bfloat16 autocast (fast where the CPU has bf16
instructions, AMX or AVX-512 BF16); ONNX Runtime fp32; ONNX Runtime int8 (every weight MatMul);
int8 smoothed (SmoothQuant-style, FFN down projections and queries fp32: torch's ranking within
a few per cent); auto (torch-bf16 on a CPU with bf16 instructions, else onnx-int8-smooth when
ONNX Runtime is installed, else torch)."""
DEFAULT_ENCODER = "auto"
"""`pool`'s encoder when none is asked for: the measured-equivalent fast path (docs/encoders.md:
about 2x torch fp32 on a cold pool, top-20 overlap .994 to .968); `--encoder torch` for fp32."""
VARIANTS = ("torch", "torch-bf16", "onnx", "onnx-int8", "onnx-int8-smooth")
TORCH_VARIANTS = ("torch", "torch-bf16")
"""The variants that run the sentence-transformers model itself (no ONNX graph)."""
AUTO_CPU = "onnx-int8-smooth"
"""What `--encoder auto` runs on a CPU without bf16 instructions when ONNX Runtime is installed
(chosen by measured speed and top-20 overlap with torch fp32: see docs/encoders.md)."""
AUTO_BF16 = "torch-bf16"
"""What `--encoder auto` runs on a CPU with bf16 instructions: on this project's machine (AMX)
2.5x torch fp32's encoding, top-20 overlap .995 (docs/encoders.md)."""
BF16_FLAGS = ("amx_bf16", "avx512_bf16")
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
    reason: str = ""
    """Why `auto` chose it (empty for a variant asked for by name)."""

    def line(self, asked: str) -> str:
        """`pool`'s line on the encoder the models load with."""
        said = f"Encoder: {self.variant} on the {self.device.upper()}"
        if asked == "auto":
            said += f" (--encoder auto: {self.reason}; --encoder torch for exact fp32)"
        return said + "."


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


def bf16_cpu(cpuinfo: str = "/proc/cpuinfo") -> bool:
    """The CPU has bf16 instructions (AMX or AVX-512 BF16), as Linux reports its flags; False
    where it does not say (another system): no torch import, the choice is made before any."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return any(flag in line.split() for flag in BF16_FLAGS)
    except OSError:
        pass
    return False


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
            return EncoderChoice("torch", "cuda", reason="a CUDA device runs fp32 fast")
        if bf16_cpu() and importlib.util.find_spec("torch") is not None:
            return EncoderChoice(AUTO_BF16, "cpu", reason="this CPU has bf16 instructions; "
                                 "measured 2.1x fp32, top-20 overlap .994")  # fmt: skip
        if onnx_installed():
            return EncoderChoice(AUTO_CPU, "cpu", reason="int8 through ONNX Runtime; measured "
                                 "1.5-2.05x fp32, top-20 overlap .968")  # fmt: skip
        return EncoderChoice(
            "torch", "cpu",
            reason=f"no bf16 CPU and no ONNX Runtime, fp32; faster with {INSTALL_HINT}",
        )  # fmt: skip
    if encoder == "torch-bf16" and resolved_device == "cpu" and not bf16_cpu():
        warnings.append(
            "--encoder torch-bf16: this CPU reports no bf16 instructions (AMX, AVX-512 BF16): "
            "bf16 is emulated there, slower than --encoder torch"
        )
    if encoder not in TORCH_VARIANTS:
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
