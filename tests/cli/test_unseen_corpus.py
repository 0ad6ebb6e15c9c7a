"""The main loop, through the CLI, on corpora generated from a seed and unlike the demo: a random
vocabulary in several scripts, boilerplate text shared by documents with different titles, true
re-ingested copies, ids with brackets, spaces and non-Latin letters, markup and escape sequences,
empty and very long passages, and a query with nothing relevant. Each step's exit code is
asserted, and one judged set gives one verdict whatever its format (store, golden.yaml, qrels)."""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.formats import read_corpus_any
from workbench.store import Store

BOILERPLATE = "NO ABSTRACT AVAILABLE."
HOSTILE_IDS = ["d[/]", "[b]x[/b]", "ü-ñ", "Ω.β", "[@click=app.quit]q", "#hash", "семь"]
HOSTILE_TEXT = ["[bold]x[/bold] [@click=app.quit]quit[/]", "\x1b]2;TITLE\x07 \x1b[2J\x1b[H",
                "<script>alert(1)</script>", "\u202eevil", "\x1b]52;c;aGk=\x07"]  # fmt: skip
ALPHABETS = ["abcdefghijklmnopqrstuvwxyz"] * 5 + [
    "αβγδεζηθικλμνξοπρστυφχψω", "абвгдежзийклмнопрст", "ắạấầẩẫậèéẹẻẽêềếệ"
]  # fmt: skip


def generate(
    folder: Path, seed: int, as_text_folder: bool, topic_count: int = 6
) -> tuple[Path, Path, list[dict]]:
    """Write a corpus (corpus.jsonl or a folder of .md files) and queries.jsonl; return the
    documents with their topic (-1: boilerplate, relevant to nothing)."""
    rnd = random.Random(seed)

    def word() -> str:
        alphabet = rnd.choice(ALPHABETS)
        return "".join(rnd.choice(alphabet) for _ in range(rnd.randint(3, 9)))

    vocab = [word() for _ in range(300)]
    topics = [rnd.sample(vocab, 10) for _ in range(topic_count)]
    docs: list[dict] = []
    for i in range(rnd.randint(90, 140)):
        topic = rnd.randrange(len(topics))
        words = rnd.choices(topics[topic], k=rnd.randint(4, 60)) + rnd.choices(vocab, k=8)
        rnd.shuffle(words)
        text = " ".join(words)
        if i % 17 == 0:
            text, topic = BOILERPLATE, -1
        elif i % 13 == 0:
            text += " " + rnd.choice(HOSTILE_TEXT)
        elif i == 5:
            text = " ".join(rnd.choices(topics[topic], k=2500))  # a very long passage
        elif i == 7:
            text = ""  # title only
        doc_id = f"{rnd.choice(HOSTILE_IDS)}{i}" if i % 9 == 0 else f"doc{i}"
        title = f"{word()} {word()}"
        if topic < 0:  # titles that a query matches, so the boilerplate gets pooled
            title = f"{' '.join(topics[0][:4])} {word()}"
        docs.append({"_id": doc_id, "title": title, "text": text, "topic": topic})
    for original in docs[1:4]:  # true re-ingested copies
        docs.append(dict(original, _id=original["_id"] + "-copy", text=original["text"].upper()))
    queries = [
        {"_id": f"q{t}", "text": " ".join(topic[:4]), "narrative": f"about {topic[0]} [b]!"}
        for t, topic in enumerate(topics)
    ]
    queries.append({"_id": "q-none", "text": "zzzz qqqq", "narrative": "nothing is relevant"})
    if as_text_folder:
        corpus = folder / "corpus"
        for i, doc in enumerate(docs):
            name = f"My Notes {i} [draft]" if i % 7 == 0 else f"n{i}"
            sub = corpus / ("boiler" if doc["topic"] < 0 else f"t{doc['topic']}")
            sub.mkdir(parents=True, exist_ok=True)
            body = doc["text"] or "-"
            (sub / f"{name}.md").write_text(f"# {doc['title']}\n\n{body}\n", encoding="utf-8")
            doc["path"] = f"{sub.name}/{name}.md"
    else:
        corpus = folder / "corpus.jsonl"
        with corpus.open("w", encoding="utf-8") as out:
            for doc in docs:
                record = {k: doc[k] for k in ("_id", "title", "text")}
                out.write(json.dumps(record, ensure_ascii=rnd.random() < 0.5) + "\n")
    query_file = folder / "queries.jsonl"
    query_file.write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
    return corpus, query_file, docs


def write_oracle(
    folder: Path, corpus: Path, docs: list[dict], seed: int, topic_count: int = 6
) -> Path:
    """Graded relevance from the topics, under the ids workbench reads the corpus with."""
    rnd = random.Random(seed + 1)
    ids = [d.doc_id for d in read_corpus_any(corpus)]
    if corpus.is_dir():  # each passage takes its file's topic; ids percent-encode the path
        from urllib.parse import quote

        by_path = {quote(d["path"], safe="/[]"): d["topic"] for d in docs}
        topic_of = {doc_id: by_path[doc_id.rsplit("#", 1)[0]] for doc_id in ids}
    else:
        topic_of = {d["_id"]: d["topic"] for d in docs}
    lines = []
    for t in range(topic_count):
        for doc_id, topic in topic_of.items():
            if topic == t:
                lines.append(f"q{t} 0 {doc_id} {rnd.choice((1, 2, 3))}")
            elif rnd.random() < 0.05:
                lines.append(f"q{t} 0 {doc_id} 0")
    oracle = folder / "oracle.qrels"
    oracle.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return oracle


def workbench(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [sys.executable, "-m", "workbench", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    output = result.stdout + result.stderr
    assert "Traceback" not in output, output[-3000:]
    assert "\x1b" not in output, f"a raw escape reached the terminal: {output[-3000:]!r}"
    return result


def digests(paths: list[Path]) -> dict[str, str]:
    files = [p for path in paths for p in ([path] if path.is_file() else path.rglob("*"))]
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in files if p.is_file()}


@pytest.mark.parametrize(
    "seed,as_text_folder,policy",
    [(11, False, "static"), (12, True, "static"), (13, True, "adaptive"), (14, False, "adaptive")],
)
def test_main_loop_on_an_unseen_corpus(
    tmp_path: Path, seed: int, as_text_folder: bool, policy: str
) -> None:
    """`policy` static: pooled with --depth and --sample; adaptive: pool's default."""
    corpus, queries, docs = generate(tmp_path, seed, as_text_folder)
    oracle = write_oracle(tmp_path, corpus, docs, seed)
    inputs = [corpus, queries, oracle]
    before = digests(inputs)

    static = ["--depth", "15", "--sample", "8"] if policy == "static" else []
    pooled = workbench(tmp_path, "pool", "--corpus", str(corpus), "--queries", str(queries),
                       "--systems", "bm25", "--db", "s.db", "--cache-dir", "cache", "--json",
                       *static)  # fmt: skip
    assert pooled.returncode == 0, pooled.stderr
    summary = json.loads(pooled.stdout)
    assert summary["aliases"] >= 1  # re-ingested copies; the boilerplate differs by title
    run = summary["runs"]["bm25"]
    boilerplate = {d.doc_id for d in read_corpus_any(corpus) if d.text.strip() in (BOILERPLATE,
                   f"# {d.title}\n\n{BOILERPLATE}")}  # fmt: skip
    with Store(tmp_path / "s.db") as store:
        folded = store.aliases()
        assert (store.get_meta("policy") or "static") == policy
    assert not [a for a, c in folded.items() if a in boilerplate and c in boilerplate]

    assert workbench(tmp_path, "simulate", "--db", "s.db", "--oracle", str(oracle)).returncode == 0
    coverage = workbench(tmp_path, "coverage", "--db", "s.db", "--json")
    assert coverage.returncode == 0, coverage.stderr
    assert set(json.loads(coverage.stdout)["queries"]) >= {"q0", "q-none"}
    for fmt in ("table", "markdown"):
        assert workbench(tmp_path, "coverage", "--db", "s.db", "--format", fmt).returncode == 0
    exported = workbench(tmp_path, "export", "--db", "s.db", "--golden", "g.yaml",
                         "--qrels", "g.qrels")  # fmt: skip
    assert exported.returncode == 0, exported.stderr

    results = {}
    for source in ("s.db", "g.yaml", "g.qrels"):
        scored = workbench(tmp_path, "eval", "--qrels", source, "--run", run, "-k", "5,10",
                           "--json")  # fmt: skip
        assert scored.returncode in (0, 1), scored.stderr
        report = json.loads(scored.stdout)
        codes = sorted({(p["code"], p["qid"] or "") for p in report["problems"]
                        if p["level"] == "error"})  # fmt: skip
        results[source] = (scored.returncode, codes, next(iter(report["runs"].values())))
    assert results["s.db"][:2] == results["g.yaml"][:2] == results["g.qrels"][:2]
    store_scores, golden_scores = results["s.db"][2], results["g.yaml"][2]
    assert store_scores["mean"] == golden_scores["mean"]
    for table in ("table", "markdown"):
        shown = workbench(tmp_path, "eval", "--qrels", "g.yaml", "--run", run, "--format", table)
        assert shown.returncode == results["g.yaml"][0]
    strict = workbench(tmp_path, "eval", "--qrels", "s.db", "--run", run, "-k", "10", "--strict")
    assert strict.returncode in (0, 1)
    agree = workbench(tmp_path, "agree", "--db", "s.db")
    assert agree.returncode in (0, 2), agree.stderr  # one annotator: nothing to compare
    assert digests(inputs) == before


def test_judging_to_a_study_target_on_an_unseen_corpus(tmp_path: Path) -> None:
    """The stopping rule end to end on a corpus the suite did not make: a target stored at
    pool, `simulate --target` judging to it, `coverage` saying it is reached, and `eval` giving
    each run's study interval that width or less."""
    corpus, queries, docs = generate(tmp_path, 15, True)
    oracle = write_oracle(tmp_path, corpus, docs, 15)
    pooled = workbench(tmp_path, "pool", "--corpus", str(corpus), "--queries", str(queries),
                       "--systems", "bm25", "--db", "s.db", "--cache-dir", "cache", "--json",
                       "--target", "R@10:0.3")  # fmt: skip
    assert pooled.returncode == 0, pooled.stderr
    run = json.loads(pooled.stdout)["runs"]["bm25"]
    walked = workbench(tmp_path, "simulate", "--db", "s.db", "--oracle", str(oracle),
                       "--target", "R@10:0.3", "--no-stop")  # fmt: skip
    assert walked.returncode == 0, walked.stderr
    said = walked.stdout + walked.stderr
    coverage = workbench(tmp_path, "coverage", "--db", "s.db", "--json")
    assert coverage.returncode == 0, coverage.stderr
    study = json.loads(coverage.stdout)["study"]
    assert study["target"] == "R@10:0.3"
    if "reached" in said.split("target width 0.3:")[1].split("\n")[0]:
        assert study["reached"] and study["to_target"] == 0, (said, study)
        scored = workbench(tmp_path, "eval", "--qrels", "s.db", "--run", run, "-k", "10",
                           "--json")  # fmt: skip
        interval = next(iter(json.loads(scored.stdout)["runs"].values()))["study"]["R@10"]
        assert interval["high"] - interval["low"] <= 0.3 + 0.05  # eval's draws, run file's top 10
    else:  # the frames ran out first: said so, never called reached
        assert not study["reached"] and "out of reach" in said or "no estimate" in said


def test_a_12_query_study_judged_in_the_apps_order_reaches_its_first_figure(tmp_path: Path) -> None:
    """Every query measured first: `coverage` says how many judgments the first study figure
    needs, `simulate` (the app's order) judging that many gives every query an estimate and
    each pooled run its study interval, and one fewer leaves a query without one."""
    corpus, queries, docs = generate(tmp_path, 16, False, topic_count=11)  # and q-none: 12
    oracle = write_oracle(tmp_path, corpus, docs, 16, topic_count=11)
    pooled = workbench(tmp_path, "pool", "--corpus", str(corpus), "--queries", str(queries),
                       "--systems", "bm25", "--db", "s.db", "--cache-dir", "cache",
                       "--json")  # fmt: skip
    assert pooled.returncode == 0, pooled.stderr
    coverage = workbench(tmp_path, "coverage", "--db", "s.db", "--json")
    study = json.loads(coverage.stdout)["study"]
    assert len(study["unmeasured"]) == 12 and study["to_first_figure"] > 0
    first = study["to_first_figure"]
    for budget, measured in ((first - 1, False), (first, True)):
        db = f"s{budget}.db"
        shutil.copy(tmp_path / "s.db", tmp_path / db)
        walked = workbench(tmp_path, "simulate", "--db", db, "--oracle", str(oracle),
                           "--budget", str(budget))  # fmt: skip
        assert walked.returncode == 0, walked.stderr
        after = json.loads(workbench(tmp_path, "coverage", "--db", db, "--json").stdout)
        assert (not after["study"]["unmeasured"]) is measured, (budget, after["study"])
        interval = after["study"]["runs"]["bm25"]
        assert (interval["low"] is not None) is measured
    run = json.loads(pooled.stdout)["runs"]["bm25"]
    scored = workbench(tmp_path, "eval", "--qrels", f"s{first}.db", "--run", run, "-k", "10",
                       "--json")  # fmt: skip
    interval = next(iter(json.loads(scored.stdout)["runs"].values()))["study"]["R@10"]
    assert interval["low"] <= interval["estimate"] <= interval["high"]
