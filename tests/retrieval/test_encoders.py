"""Encoding backends: token-budget batches, ONNX Runtime (fp32 and int8, exported here from the
packaged MiniLM and from a tiny cross-encoder) against torch, the cache keys they write, and what
`workbench pool` says when the machine lacks what --encoder or --device asks for."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from pool_fixtures import make_collection
from retrieval_fixtures import QUERIES, build_tiny_cross_encoder, farm_docs

from workbench.cli import main
from workbench.core.errors import InputError
from workbench.retrieval import CrossEncoderReranker, DenseRetriever, passage_text
from workbench.retrieval.batching import token_budget_batches
from workbench.retrieval.encoder_choice import VARIANTS, choose_encoder, cuda_visible


def test_batches_hold_each_index_once_longest_first_within_the_budget() -> None:
    counts = [5, 300, 40, 40, 12, 7, 256, 90, 3, 40]
    batches = token_budget_batches(counts, max_batch=4, token_budget=200)
    assert sorted(i for b in batches for i in b) == list(range(len(counts)))
    flat = [counts[i] for b in batches for i in b]
    assert flat == sorted(counts, reverse=True)
    for batch in batches:
        assert len(batch) <= 4
        assert len(batch) == 1 or len(batch) * max(counts[i] for i in batch) <= 200
    assert batches[:2] == [[1], [6]]  # longer than the budget: alone
    assert token_budget_batches([], 8) == []


def test_short_texts_go_many_at_a_time_and_long_ones_few() -> None:
    batches = token_budget_batches([10] * 100 + [256] * 10, max_batch=64)  # 8,192 tokens
    # 32 fit when padded to 256 tokens (the 10 long ones and 22 short), then 64 short at most.
    assert [len(b) for b in batches] == [32, 64, 14]


@pytest.mark.parametrize("variant", ["onnx", "onnx-int8", "onnx-int8-smooth"])
def test_a_missing_onnx_runtime_exits_2_saying_how_to_install(
    variant, tmp_path, capsys, monkeypatch
):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if the extra were not installed
    corpus, queries = make_collection(tmp_path)
    db = tmp_path / "j.db"
    code = main(["pool", "--corpus", str(corpus), "--queries", str(queries), "--db", str(db),
                 "--systems", "bm25,dense", "--encoder", variant,
                 "--device", "cpu"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert f"--encoder {variant}: ONNX Runtime is not installed" in err
    assert "pip install 'workbench[onnx]'" in err
    assert "Traceback" not in err and not db.exists()


def test_auto_without_onnx_runtime_falls_back_to_torch_and_says_why(monkeypatch) -> None:
    """auto is the default: its fallback is said on the encoder line, not warned of."""
    from workbench.retrieval import encoder_choice

    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    monkeypatch.setattr(encoder_choice, "bf16_cpu", lambda: False)
    choice = choose_encoder("auto", "cpu")
    assert (choice.variant, choice.device) == ("torch", "cpu")
    assert not choice.warnings and "no ONNX Runtime" in choice.reason
    assert choice.line("auto").startswith("Encoder: torch on the CPU (--encoder auto: no bf16")


@pytest.mark.skipif(cuda_visible(), reason="this machine has a CUDA device")
def test_auto_on_a_cpu_with_onnx_runtime_runs_the_smoothed_int8(monkeypatch) -> None:
    from workbench.retrieval import encoder_choice

    monkeypatch.setattr(encoder_choice, "onnx_installed", lambda: True)
    monkeypatch.setattr(encoder_choice, "bf16_cpu", lambda: False)
    choice = choose_encoder("auto", "auto")
    assert (choice.variant, choice.device, choice.warnings) == ("onnx-int8-smooth", "cpu", ())
    with pytest.raises(InputError, match="--encoder: unknown 'onnx-int4'"):
        choose_encoder("onnx-int4", "cpu")


@pytest.mark.skipif(cuda_visible(), reason="this machine has a CUDA device")
def test_auto_on_a_cpu_with_bf16_instructions_runs_torch_in_bf16(monkeypatch, tmp_path) -> None:
    from workbench.retrieval import encoder_choice

    amx = tmp_path / "cpuinfo-amx"
    amx.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512f amx_bf16 amx_tile\n")
    plain = tmp_path / "cpuinfo-plain"
    plain.write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512f avx512_vnni\n")
    assert encoder_choice.bf16_cpu(str(amx)) and not encoder_choice.bf16_cpu(str(plain))
    assert not encoder_choice.bf16_cpu(str(tmp_path / "none"))  # no such file: another system
    monkeypatch.setattr(encoder_choice, "bf16_cpu", lambda: True)
    chosen = choose_encoder("auto", "auto")
    assert (chosen.variant, chosen.device, chosen.warnings) == ("torch-bf16", "cpu", ())
    assert "bf16 instructions" in chosen.line("auto") and "2.1x" in chosen.line("auto")
    monkeypatch.setattr(encoder_choice, "bf16_cpu", lambda: False)
    emulated = choose_encoder("torch-bf16", "cpu")
    assert emulated.variant == "torch-bf16" and "emulated" in emulated.warnings[0]


def test_encoder_options_are_ignored_without_a_model_system(tmp_path, monkeypatch) -> None:
    """bm25 alone needs neither ONNX Runtime nor a GPU: --encoder and --device are not checked."""
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    corpus, queries = make_collection(tmp_path)
    code = main(["pool", "--corpus", str(corpus), "--queries", str(queries), "--systems", "bm25",
                 "--db", str(tmp_path / "j.db"), "--encoder", "onnx",
                 "--device", "cuda"])  # fmt: skip
    assert code == 0


@pytest.mark.skipif(cuda_visible(), reason="this machine has a CUDA device")
def test_device_cuda_without_one_exits_2_naming_the_option(tmp_path, capsys) -> None:
    corpus, queries = make_collection(tmp_path)
    code = main(["pool", "--corpus", str(corpus), "--queries", str(queries),
                 "--db", str(tmp_path / "j.db"), "--device", "cuda"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2
    assert "--device cuda: torch sees no CUDA device here" in err and "Traceback" not in err
    with pytest.raises(InputError, match="--device cuda"):
        choose_encoder("torch", "cuda")


needs_onnx = pytest.mark.skipif(
    any(__import__("importlib").util.find_spec(m) is None for m in ("onnxruntime", "onnx")),
    reason="the onnx extra is not installed",
)


@pytest.fixture(scope="module")
def encoded(tmp_path_factory):
    """The farm corpus encoded by each backend into one cache, the graphs into their own folder
    (MiniLM exported once)."""
    cache = tmp_path_factory.mktemp("encoders-cache")
    graphs = tmp_path_factory.mktemp("encoders-graphs")
    docs = farm_docs()
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WORKBENCH_GRAPH_DIR", str(graphs))
        yield cache, graphs, {v: DenseRetriever(docs, cache_dir=cache, encoder=v, device="cpu")
                              for v in VARIANTS}  # fmt: skip


def cosines(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    return (left * right).sum(axis=1) / np.linalg.norm(left, axis=1) / np.linalg.norm(right, axis=1)


@pytest.mark.slow
@needs_onnx
def test_onnx_fp32_embeddings_match_torch(encoded) -> None:
    _, _, by_variant = encoded
    torch_vectors, onnx = by_variant["torch"].embeddings, by_variant["onnx"]
    assert cosines(onnx.embeddings, torch_vectors).min() > 0.999
    # One text alone (no padding at all) and the queries too.
    texts = [passage_text(farm_docs()[3])] + [q.text for q in QUERIES]
    alone = np.concatenate([onnx._encode([t]) for t in texts])
    assert cosines(alone, by_variant["torch"]._encode(texts)).min() > 0.999


@pytest.mark.slow
def test_bf16_embeddings_rank_as_fp32(encoded) -> None:
    """torch-bf16 (bfloat16 autocast) against torch fp32: on this project's CPU (AMX) cisi's
    cosines are >= 0.99997 and its top 20 overlap .995 (docs/encoders.md); here, the farm."""
    _, _, by_variant = encoded
    bf16, fp32 = by_variant["torch-bf16"], by_variant["torch"]
    assert bf16.embeddings.dtype == np.float32
    assert cosines(bf16.embeddings, fp32.embeddings).min() > 0.999
    assert 0 < np.abs(bf16.embeddings - fp32.embeddings).max()  # it ran in bf16: not fp32's
    texts = [q.text for q in QUERIES]
    assert cosines(bf16._encode(texts), fp32._encode(texts)).min() > 0.999
    reference = fp32.search(QUERIES, depth=5).rankings()
    for query, ranked in bf16.search(QUERIES, depth=5).rankings().items():
        assert len(set(ranked) & set(reference[query])) >= 4


@pytest.mark.slow
@needs_onnx
def test_onnx_int8_embeddings_stay_close_to_torch(encoded) -> None:
    _, _, by_variant = encoded
    similarity = cosines(by_variant["onnx-int8"].embeddings, by_variant["torch"].embeddings)
    assert similarity.min() > 0.97 and similarity.mean() > 0.985
    smooth = cosines(by_variant["onnx-int8-smooth"].embeddings, by_variant["torch"].embeddings)
    assert smooth.min() > 0.995 and smooth.mean() > similarity.mean()
    int8_run = by_variant["onnx-int8"].search(QUERIES, depth=5)
    torch_run = by_variant["torch"].search(QUERIES, depth=5)
    for query in QUERIES:  # the same passages on top, perhaps in another order
        overlap = set(int8_run.rankings()[query.query_id]) & set(
            torch_run.rankings()[query.query_id]
        )
        assert len(overlap) >= 4, query.query_id


@pytest.mark.slow
@needs_onnx
def test_each_variant_has_its_own_cache_entry_and_the_export_is_reused(encoded) -> None:
    cache, graph_folder, by_variant = encoded
    paths = {v: r.cache_path for v, r in by_variant.items()}
    assert len(set(paths.values())) == len(VARIANTS)
    graphs = sorted(p.name for p in graph_folder.glob("onnx-embed-*.onnx"))
    assert [name.split("-", 3)[3] for name in graphs] == [
        "fp32.onnx", "int8-smooth.onnx", "int8.onnx"
    ]  # fmt: skip
    assert not list(cache.glob("*.onnx"))  # graphs are kept apart from the embeddings
    stamps = {p: p.stat().st_mtime_ns for p in graph_folder.glob("onnx-*.onnx")}
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("WORKBENCH_GRAPH_DIR", str(graph_folder))
        for variant in ("onnx-int8", "onnx-int8-smooth"):
            again = DenseRetriever(farm_docs(), cache_dir=cache, encoder=variant, device="cpu")
            assert again.encoded_count == 0 and again.cache_path == paths[variant]
            again._encode(["warm cache: queries still need the model"])
    assert {p: p.stat().st_mtime_ns for p in graph_folder.glob("onnx-*.onnx")} == stamps


@pytest.mark.slow
@needs_onnx
def test_the_reranker_runs_a_local_cross_encoder_folder_through_onnx(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("WORKBENCH_GRAPH_DIR", str(tmp_path))
    (tmp_path / "tiny-ce").mkdir()
    folder, _, _ = build_tiny_cross_encoder(tmp_path / "tiny-ce")
    docs = {d.doc_id: d for d in farm_docs()}
    candidates = {q.query_id: list(docs) for q in QUERIES}
    runs = {
        v: CrossEncoderReranker(
            model=str(folder), encoder=v, device="cpu", cache_dir=tmp_path
        ).rerank(QUERIES, docs, candidates, depth=len(docs))
        for v in VARIANTS
    }
    for query in QUERIES:
        reference = runs["torch"].scores[query.query_id]
        for variant, tolerance in (("onnx", 1e-5), ("onnx-int8", 2e-3), ("onnx-int8-smooth", 2e-3)):
            scores = runs[variant].scores[query.query_id]
            assert scores.keys() == reference.keys()
            assert max(abs(scores[d] - reference[d]) for d in reference) < tolerance, variant
    assert len(list(tmp_path.glob("onnx-pairs-*.onnx"))) == 3


@pytest.mark.slow
@needs_onnx
def test_pool_with_onnx_int8_writes_a_dense_run(tmp_path, capsys, monkeypatch) -> None:
    corpus, queries = make_collection(tmp_path)
    cache = tmp_path / "cache"
    monkeypatch.setenv("WORKBENCH_GRAPH_DIR", str(cache))
    code = main(["pool", "--corpus", str(corpus), "--queries", str(queries), "--systems",
                 "bm25,dense", "--depth", "5", "--db", str(tmp_path / "j.db"), "--cache-dir",
                 str(cache), "--encoder", "onnx-int8", "--device", "cpu", "--json"])  # fmt: skip
    assert code == 0, capsys.readouterr().err
    assert len(list(cache.glob("onnx-embed-*-int8.onnx"))) == 1
    from workbench.store import Store

    with Store(tmp_path / "j.db") as store:  # the study says how its dense run was made
        params = store.poolings()[0]["params"]
    assert params["encoder"] == {"variant": "onnx-int8", "device": "cpu"}
    from workbench.formats import read_run

    dense = read_run(Path(tmp_path / "j-runs" / "dense.run"))
    assert {q: r[0].rstrip("0123456789") for q, r in dense.rankings().items()} == {
        "q_maize": "maize", "q_dairy": "dairy", "q_storage": "storage"
    }  # fmt: skip


def test_pool_encodes_with_auto_unless_told() -> None:
    """The measured-equivalent fast path is the default; `--encoder torch` stays for fp32."""
    from workbench.cli import build_parser
    from workbench.flows.pool import PoolOptions

    argv = ["pool", "--corpus", "c", "--queries", "q", "--db", "d"]
    assert build_parser("pool").parse_args(argv).encoder == "auto"
    assert build_parser("pool").parse_args([*argv, "--encoder", "torch"]).encoder == "torch"
    assert PoolOptions("c", "q", "d").encoder == "auto"
