"""A sentence-transformers model folder read without torch: its tokenizer (`tokenizer.json`, through
the `tokenizers` library that transformers' fast tokenizers wrap), its truncation length and its
pooling, so that an ONNX graph exported earlier can encode texts without importing torch,
transformers or sentence-transformers (seconds of a cold pool, more on a loaded machine).

Only the plain layout is read: modules Transformer, Pooling (mean, CLS or max) and optionally
Normalize, no prompts, no lower-casing of its own. Any other folder gives None, and the caller
loads the model with sentence-transformers as before."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TRANSFORMER = "sentence_transformers.models.Transformer"
POOLING = "sentence_transformers.models.Pooling"
NORMALIZE = "sentence_transformers.models.Normalize"
POOLING_MODES = {
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
}


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


@dataclass(frozen=True, slots=True)
class PlainFolder:
    """What a plain sentence-transformers folder says about its text pipeline."""

    folder: Path
    max_length: int
    pooling: str
    """"mean", "cls" or "max"."""
    normalize: bool

    @classmethod
    def read(cls, resolved: str) -> PlainFolder | None:
        """The folder's pipeline when it is the plain layout (see the module's note), else None."""
        folder = Path(resolved)
        modules = _json(folder / "modules.json")
        if not isinstance(modules, list) or not (folder / "tokenizer.json").is_file():
            return None
        types = [m.get("type") if isinstance(m, dict) else None for m in modules]
        if types not in ([TRANSFORMER, POOLING], [TRANSFORMER, POOLING, NORMALIZE]):
            return None
        if modules[0].get("path") not in ("", None):
            return None
        config = _json(folder / "sentence_bert_config.json")
        if not isinstance(config, dict) or config.get("do_lower_case"):
            return None
        max_length = config.get("max_seq_length")
        if not isinstance(max_length, int) or isinstance(max_length, bool) or max_length < 2:
            return None
        if set(config) - {"max_seq_length", "do_lower_case"}:
            return None  # model or tokenizer arguments of its own: sentence-transformers reads them
        st_config = _json(folder / "config_sentence_transformers.json") or {}
        if (
            not isinstance(st_config, dict)
            or st_config.get("prompts")
            or st_config.get("default_prompt_name")
        ):
            return None
        pooling = _json(folder / str(modules[1].get("path", "")) / "config.json")
        if not isinstance(pooling, dict):
            return None
        chosen = [mode for key, mode in POOLING_MODES.items() if pooling.get(key)]
        others = [
            k for k, v in pooling.items()
            if k.startswith("pooling_mode_") and k not in POOLING_MODES and v
        ]  # fmt: skip
        if len(chosen) != 1 or others or pooling.get("include_prompt") is False:
            return None
        return cls(folder, max_length, chosen[0], len(types) == 3)


class FolderText:
    """Tokenising and pooling as sentence-transformers does for a `PlainFolder`, in numpy."""

    def __init__(self, plain: PlainFolder) -> None:
        from tokenizers import Tokenizer

        self.plain = plain
        self.tokenizer = Tokenizer.from_file(str(plain.folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(plain.max_length, strategy="longest_first")
        padding = _json(plain.folder / "tokenizer.json").get("padding") or {}
        self.pad_id = int(padding.get("pad_id", 0))
        self.pad_type_id = int(padding.get("pad_type_id", 0))

    def _encodings(self, texts: Sequence[str]) -> list[Any]:
        return self.tokenizer.encode_batch([str(t) for t in texts], add_special_tokens=True)

    def counts(self, texts: Sequence[str]) -> list[int]:
        """Tokens per text, truncated as the model truncates."""
        return [len(e.ids) for e in self._encodings(texts)]

    def features(self, texts: Sequence[str]) -> dict[str, Any]:
        """input_ids, attention_mask and token_type_ids (int64), padded to the longest text."""
        import numpy as np

        encodings = self._encodings(texts)
        width = max(len(e.ids) for e in encodings)
        ids = np.full((len(texts), width), self.pad_id, dtype=np.int64)
        mask = np.zeros((len(texts), width), dtype=np.int64)
        types = np.full((len(texts), width), self.pad_type_id, dtype=np.int64)
        for row, encoding in enumerate(encodings):
            size = len(encoding.ids)
            ids[row, :size] = encoding.ids
            mask[row, :size] = 1
            types[row, :size] = encoding.type_ids
        return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}

    def pool(self, hidden: Any, mask: Any) -> Any:
        """The sentence embeddings (float32) of a batch's token embeddings, as the folder's
        Pooling (and Normalize) modules compute them."""
        import numpy as np

        hidden = hidden.astype(np.float32, copy=False)
        if self.plain.pooling == "cls":
            vectors = hidden[:, 0]
        elif self.plain.pooling == "max":
            vectors = np.where(mask[:, :, None] > 0, hidden, np.float32(-1e9)).max(axis=1)
        else:
            weights = mask[:, :, None].astype(np.float32)
            vectors = (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)
        if self.plain.normalize:
            vectors = vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        return vectors.astype(np.float32, copy=False)
