"""Exported ONNX graphs: kept in a graph folder shared by every cache folder, keyed by the model's
files; read back without torch (a plain sentence-transformers folder tokenised and pooled in
numpy, the same features and vectors as sentence-transformers'); int8 queries through fp32."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from retrieval_fixtures import farm_docs

from workbench.retrieval import DenseRetriever, passage_text
from workbench.retrieval.encoder_choice import ENCODERS, VARIANTS, encoder_key
from workbench.retrieval.encoders import SentenceEncoder
from workbench.retrieval.models import DEFAULT_DENSE_MODEL, model_fingerprint, resolve_model
from workbench.retrieval.onnx_graphs import INT8_SCHEMES, graph_dir, graph_entries
from workbench.retrieval.st_folder import FolderText, PlainFolder

ROOT = Path(__file__).resolve().parents[2]
MINILM = resolve_model(DEFAULT_DENSE_MODEL)
needs_onnx = pytest.mark.skipif(
    any(__import__("importlib").util.find_spec(m) is None for m in ("onnxruntime", "onnx")),
    reason="the onnx extra is not installed",
)
ODD_TEXTS = [
    "",
    "  leading and trailing spaces  ",
    "Ünïcödé ßtraße 東京 🎉 — “quotes”",
    "tabs\tand\nnewlines\r\n",
    "word " * 400,  # truncated at 256 tokens
    "short",
]


def light_copy(tmp_path: Path) -> Path:
    """MiniLM's folder with its configuration files copied (editable) and its weights linked."""
    folder = tmp_path / "minilm"
    shutil.copytree(MINILM, folder, ignore=shutil.ignore_patterns("*.safetensors", "*.bin"))
    for weights in Path(MINILM).glob("*.safetensors"):
        (folder / weights.name).symlink_to(weights)
    return folder


def test_the_packaged_minilm_is_a_plain_folder_and_other_layouts_are_not(tmp_path) -> None:
    plain = PlainFolder.read(MINILM)
    assert plain is not None
    assert (plain.max_length, plain.pooling, plain.normalize) == (256, "mean", True)
    changes = {
        "a Dense module": (
            "modules.json",
            lambda m: (
                m
                + [
                    {
                        "idx": 3,
                        "name": "3",
                        "path": "3_D",
                        "type": "sentence_transformers.models.Dense",
                    }
                ]
            ),
        ),  # fmt: skip
        "lower-casing of its own": (
            "sentence_bert_config.json",
            lambda c: {**c, "do_lower_case": True},
        ),  # fmt: skip
        "prompts": (
            "config_sentence_transformers.json",
            lambda c: {**c, "prompts": {"query": "query: "}},
        ),  # fmt: skip
        "mean-sqrt pooling": (
            "1_Pooling/config.json",
            lambda c: {
                **c,
                "pooling_mode_mean_tokens": False,
                "pooling_mode_mean_sqrt_len_tokens": True,
            },
        ),  # fmt: skip
        "no max_seq_length": ("sentence_bert_config.json", lambda c: {"do_lower_case": False}),
    }
    for reason, (name, change) in changes.items():
        folder = tmp_path / reason.replace(" ", "-")
        shutil.copytree(MINILM, folder, ignore=shutil.ignore_patterns("*.safetensors"))
        path = folder / name
        original = json.loads(path.read_text()) if path.exists() else {}
        path.write_text(json.dumps(change(original)))
        assert PlainFolder.read(str(folder)) is None, reason
    broken = tmp_path / "broken"
    shutil.copytree(MINILM, broken, ignore=shutil.ignore_patterns("*.safetensors"))
    (broken / "modules.json").write_text("{not json")
    assert PlainFolder.read(str(broken)) is None
    assert PlainFolder.read(str(tmp_path / "no-such-folder")) is None


def test_the_graph_key_changes_when_the_model_files_change(tmp_path) -> None:
    folder = light_copy(tmp_path)
    before = graph_entries("embed", str(folder), model_fingerprint(str(folder)), "onnx-int8",
                           tmp_path)  # fmt: skip
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "layer_norm_eps": 1e-6}))
    after = graph_entries("embed", str(folder), model_fingerprint(str(folder)), "onnx-int8",
                          tmp_path)  # fmt: skip
    assert [p for p, _ in before] != [p for p, _ in after]
    assert before[0][1]["model_fingerprint"] != after[0][1]["model_fingerprint"]
    assert [p.name.rsplit("-", 1)[1] for p, _ in before] == ["fp32.onnx", "int8.onnx"]
    # Each int8 scheme has its own graph and its own embeddings.
    names = {graph_entries("embed", MINILM, "f", v, tmp_path)[-1][0].name for v in INT8_SCHEMES}
    assert len(names) == len(INT8_SCHEMES)
    assert len({encoder_key(v) for v in VARIANTS}) == len(VARIANTS)
    assert set(VARIANTS) <= set(ENCODERS)


def test_graphs_go_to_the_shared_folder_or_beside_the_cache(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("WORKBENCH_GRAPH_DIR", str(tmp_path / "chosen"))
    assert graph_dir(tmp_path / "cache") == tmp_path / "chosen"
    monkeypatch.delenv("WORKBENCH_GRAPH_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert graph_dir(tmp_path / "cache") == tmp_path / "xdg" / "workbench" / "graphs"
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the folder would go")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocked))
    assert graph_dir(tmp_path / "cache") == tmp_path / "cache"


@pytest.mark.slow
def test_folder_text_tokenises_and_pools_as_sentence_transformers() -> None:
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(MINILM, device="cpu", local_files_only=True)
    text = FolderText(PlainFolder.read(MINILM))  # type: ignore[arg-type]
    texts = ODD_TEXTS + [passage_text(d) for d in farm_docs()]
    theirs, mine = dict(model.preprocess(texts)), text.features(texts)
    for name in ("input_ids", "attention_mask", "token_type_ids"):
        assert np.array_equal(theirs[name].numpy(), mine[name]), name
    assert text.counts(texts) == mine["attention_mask"].sum(axis=1).tolist()
    hidden = model[0](theirs)["token_embeddings"].detach().numpy()
    reference = model.encode(texts, batch_size=len(texts), normalize_embeddings=True)
    assert np.abs(text.pool(hidden, mine["attention_mask"]) - reference).max() < 1e-5


@pytest.mark.slow
@needs_onnx
def test_a_cached_graph_encodes_without_torch_as_the_exporting_run_did(tmp_path) -> None:
    """The first encoder exports (torch loaded); a later process, another cache folder, reads
    the graph back and tokenises and pools in numpy: torch never imported, the same vectors."""
    graphs = tmp_path / "graphs"
    texts = ODD_TEXTS + [passage_text(d) for d in farm_docs()]
    probe = (
        "import json, sys\n"
        "import numpy as np\n"
        "from workbench.retrieval.encoders import SentenceEncoder\n"
        "from workbench.retrieval.models import DEFAULT_DENSE_MODEL, resolve_model\n"
        "texts = json.loads(sys.argv[1])\n"
        "encoder = SentenceEncoder(resolve_model(DEFAULT_DENSE_MODEL), sys.argv[2], 'cpu',"
        " sys.argv[3])\n"
        "np.save(sys.argv[4], np.concatenate([encoder.embed(texts),"
        " encoder.embed_queries(texts[-3:])]))\n"
        "print(json.dumps({'light': encoder.text is not None,"
        " 'torch': 'torch' in sys.modules, 'st': 'sentence_transformers' in sys.modules}))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1",
           "WORKBENCH_GRAPH_DIR": str(graphs)}  # fmt: skip
    seen = {}
    for variant in ("onnx", "onnx-int8"):
        for run in ("first", "later"):
            out = tmp_path / f"{variant}-{run}.npy"
            done = subprocess.run(
                [sys.executable, "-c", probe, json.dumps(texts), variant,
                 str(tmp_path / f"cache-{run}"), str(out)],
                capture_output=True, text=True, env=env, timeout=600, check=True,
            )  # fmt: skip
            seen[variant, run] = json.loads(done.stdout.splitlines()[-1])
            assert np.isfinite(np.load(out)).all()
        first, later = np.load(tmp_path / f"{variant}-first.npy"), np.load(out)
        assert np.abs(first - later).max() < 1e-5, variant
    assert seen["onnx", "first"] == {"light": False, "torch": True, "st": True}
    for variant in ("onnx", "onnx-int8"):
        assert seen[variant, "later"] == {"light": True, "torch": False, "st": False}, variant
    assert not list((tmp_path / "cache-first").glob("*.onnx"))  # graphs in the graph folder


@pytest.mark.slow
@needs_onnx
def test_queries_of_an_int8_variant_whose_scheme_says_so_go_through_fp32(tmp_path) -> None:
    fp32 = SentenceEncoder(MINILM, "onnx", "cpu", tmp_path)
    texts = ["how is maize stored", "dairy cattle in winter"]
    for variant, scheme in INT8_SCHEMES.items():
        int8 = SentenceEncoder(MINILM, variant, "cpu", tmp_path)
        same = np.abs(int8.embed_queries(texts) - fp32.embed(texts)).max() < 1e-5
        assert same == scheme.queries_fp32, variant
        assert np.abs(int8.embed(texts) - fp32.embed(texts)).max() > 1e-4, variant  # int8
    retriever = DenseRetriever(farm_docs(), cache_dir=tmp_path, encoder="onnx-int8", device="cpu")
    assert retriever.encoder().variant == "onnx-int8"
