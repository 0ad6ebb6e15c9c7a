"""A folder of documents through `pool`, `eval --corpus` and `export`, as a user meets it: double-
spaced articles and Markdown notes cut into passages of --passage-words, the rule kept by the
store, so that re-pooling and scoring read the same passages."""

from __future__ import annotations

import json
import random
import sqlite3
import textwrap
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.formats import read_run, read_text_folder
from workbench.formats.passages import PARAGRAPHS, PassageRule
from workbench.store import Store

TOPICS = {
    "armyworm": "armyworm larvae maize whorl frass scouting neem",
    "mastitis": "mastitis udder milk teat hygiene somatic cells",
    "aflatoxin": "aflatoxin mould grain drying storage moisture",
}
FILLER = "the farmers said that in the season a field of the village was".split()


def sentence(rnd: random.Random, topic: str) -> str:
    words = [rnd.choice(FILLER + TOPICS[topic].split()) for _ in range(rnd.randint(6, 24))]
    return " ".join(words).capitalize() + "."


def make_folder(folder: Path, seed: int = 3) -> Path:
    """Nine double-spaced .txt articles (wrapped at 60 columns, a blank line after each line,
    one in capitals as old archives are) and six Markdown notes with headings."""
    rnd = random.Random(seed)
    for i in range(9):
        topic = list(TOPICS)[i % 3]
        paragraphs = [" ".join(sentence(rnd, topic) for _ in range(rnd.randint(3, 8)))
                      for _ in range(rnd.randint(4, 9))]  # fmt: skip
        lines = [line for p in paragraphs for line in textwrap.wrap(p, 60)]
        text = "\n\n".join(lines) + "\n"
        (folder / "archive").mkdir(parents=True, exist_ok=True)
        (folder / "archive" / f"article-{i}.txt").write_text(
            text.upper() if i == 4 else text, encoding="utf-8"
        )
    for i in range(6):
        topic = list(TOPICS)[i % 3]
        parts = [f"# Notes on {topic} {i}"]
        for n in range(rnd.randint(3, 6)):
            parts.append(f"## Part {n}")
            parts.extend(" ".join(sentence(rnd, topic) for _ in range(rnd.randint(2, 5)))
                         for _ in range(rnd.randint(1, 3)))  # fmt: skip
        (folder / "notes").mkdir(parents=True, exist_ok=True)
        (folder / "notes" / f"{topic}-{i}.md").write_text("\n\n".join(parts) + "\n")
    return folder


@pytest.fixture
def corpus(tmp_path: Path) -> tuple[Path, Path]:
    folder = make_folder(tmp_path / "docs")
    queries = tmp_path / "queries.jsonl"
    queries.write_text("".join(json.dumps({"_id": f"q_{t}", "text": f"{t} {w.split()[1]}"}) + "\n"
                               for t, w in TOPICS.items()))  # fmt: skip
    return folder, queries


def pool(capsys: pytest.CaptureFixture[str], *args: str | Path) -> tuple[int, str, str]:
    code = main(["pool", "--systems", "bm25", *map(str, args)])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_double_spaced_and_markdown_folder_becomes_passages_of_80_to_250_words(
    tmp_path, corpus, capsys
) -> None:
    folder, queries = corpus
    code, out, err = pool(capsys, "--corpus", folder, "--queries", queries, "--db",
                          tmp_path / "s.db", "--cache-dir", tmp_path / "c", "--json")  # fmt: skip
    assert code == 0, err
    summary = json.loads(out)["corpus"]
    docs = read_text_folder(folder)
    sizes = sorted(len(d.text.split()) for d in docs)
    median = sizes[(len(sizes) - 1) // 2]
    assert summary == {"files": 15, "passages": len(docs), "median_words": median,
                       "shortest_words": sizes[0], "longest_words": sizes[-1],
                       "passage_rule": "blocks 80:250 rows 20"}  # fmt: skip
    assert 80 <= summary["median_words"] <= 250 and sizes[-1] <= 250
    assert "warning" not in err
    run = read_run(tmp_path / "s-runs" / "bm25.run")
    ids = {d.doc_id for d in docs}
    assert {d for ranked in run.scores.values() for d in ranked} <= ids
    with Store(tmp_path / "s.db") as store:
        [pooling] = store.poolings()
        assert pooling["params"]["passages"] == "blocks 80:250 rows 20"
        shown = store.docs([d.doc_id for d in docs])
        for doc in docs:  # each stored passage an exact span of its file, where it sits
            stored = shown[doc.doc_id]
            assert stored.span is not None and stored == doc
            text = (folder / stored.span.source).read_bytes().decode("utf-8-sig")
            assert text[stored.span.start : stored.span.end] == stored.text

    # The rule before merging: one passage a line of a double-spaced file, and a warning.
    code, out, err = pool(capsys, "--corpus", folder, "--queries", queries, "--db",
                          tmp_path / "p.db", "--cache-dir", tmp_path / "c", "--passages",
                          "paragraphs")  # fmt: skip
    assert code == 0, err
    lines = sum(len([x for x in f.read_text().split("\n") if x.strip()])
                for f in (folder / "archive").glob("*.txt"))  # fmt: skip
    assert f"Corpus: 15 files -> {lines + len(read_text_folder(folder / 'notes', PARAGRAPHS))}" \
        " passages, median " in out  # fmt: skip
    assert ": a paragraph a passage." in out
    assert "warning: the median passage is " in err and "--passages blocks" in err


def test_readable_line_and_the_file_rule(tmp_path, corpus, capsys) -> None:
    folder, queries = corpus
    code, out, err = pool(capsys, "--corpus", folder, "--queries", queries, "--db",
                          tmp_path / "f.db", "--cache-dir", tmp_path / "c", "--passages", "file")
    assert code == 0, err
    docs = read_text_folder(folder, PassageRule("file"))
    assert len(docs) == 15 and all(d.doc_id.endswith("#1") for d in docs)
    sizes = sorted(len(d.text.split()) for d in docs)
    line = (f"Corpus: 15 files -> 15 passages, median {sizes[7]} words (shortest {sizes[0]}, "
            f"longest {sizes[-1]:,}): a file a passage.")  # fmt: skip
    assert line in out.splitlines()


def test_repooling_cuts_as_the_store_did_and_refuses_another_rule(tmp_path, corpus, capsys):
    folder, queries = corpus
    common = ["--corpus", folder, "--queries", queries, "--db", tmp_path / "s.db",
              "--cache-dir", tmp_path / "c", "--policy", "static", "--json"]  # fmt: skip
    code, out, err = pool(capsys, *common, "--passage-words", "40:120", "--depth", "3")
    assert code == 0, err
    first = json.loads(out)
    assert first["corpus"]["passage_rule"] == "blocks 40:120 rows 20"
    assert first["corpus"]["longest_words"] <= 120
    code, out, err = pool(capsys, *common, "--depth", "3")  # no option: the store's rule
    assert code == 0, err
    again = json.loads(out)
    assert again["corpus"] == first["corpus"] and again["new_items"] == 0
    for other in (["--passage-words", "80:250"], ["--passages", "file"], ["--passages", "blocks"],
                  ["--passage-words", "40:120", "--passage-rows", "0"]):  # fmt: skip
        code, out, err = pool(capsys, *common, *other)
        assert code == 2, other
        assert f"error: --passages: {tmp_path / 's.db'} holds passages cut as blocks 40:120 " \
            "rows 20" in err  # fmt: skip
        assert "Traceback" not in err


def test_a_store_pooled_before_rows_keeps_its_rule(tmp_path, corpus, capsys) -> None:
    """`blocks 80:250` (the default before rows): pooled again without options, the store's
    passages are cut as they were; the new default is refused there."""
    folder, queries = corpus
    common = ["--corpus", folder, "--queries", queries, "--db", tmp_path / "old.db",
              "--cache-dir", tmp_path / "c", "--policy", "static", "--json"]  # fmt: skip
    code, out, err = pool(capsys, *common, "--passage-rows", "0")
    assert code == 0, err
    first = json.loads(out)
    assert first["corpus"]["passage_rule"] == "blocks 80:250"
    assert first["corpus"]["passages"] == len(read_text_folder(folder, PassageRule("blocks")))
    code, out, err = pool(capsys, *common)
    assert code == 0, err
    assert json.loads(out)["corpus"] == first["corpus"]
    code, out, err = pool(capsys, *common, "--passage-rows", "20")
    assert code == 2 and "holds passages cut as blocks 80:250, not blocks 80:250 rows 20" in err
    code, out, err = pool(capsys, *common, "--passages", "merged", "--passage-rows", "20")
    assert code == 2 and "--passage-rows: sizes blocks passages" in err
    for bad in ("4", "x", "-1", "20.5"):
        with pytest.raises(SystemExit) as info:
            main(["pool", *map(str, common), "--passage-rows", bad])
        assert info.value.code == 2
        assert "expected 0 (no limit) or a whole number of rows" in capsys.readouterr().err


def test_a_store_pooled_before_rules_were_recorded_is_cut_by_paragraph(tmp_path, corpus, capsys):
    folder, queries = corpus
    db = tmp_path / "old.db"
    common = ["--corpus", folder, "--queries", queries, "--db", db, "--cache-dir", tmp_path / "c",
              "--policy", "static", "--json"]  # fmt: skip
    code, out, err = pool(capsys, *common, "--passages", "paragraphs")
    assert code == 0, err
    with sqlite3.connect(db) as connection:  # as an earlier workbench left it: no rule recorded
        (params,) = connection.execute("SELECT params FROM poolings").fetchone()
        params = {k: v for k, v in json.loads(params).items() if k != "passages"}
        connection.execute("UPDATE poolings SET params = ?", (json.dumps(params),))
    code, out, err = pool(capsys, *common)
    assert code == 0, err
    summary = json.loads(out)
    assert summary["corpus"]["passage_rule"] == "paragraphs" and summary["new_items"] == 0


def test_eval_corpus_reads_the_passages_the_judgments_were_pooled_with(tmp_path, corpus, capsys):
    folder, queries = corpus
    db = tmp_path / "s.db"
    code, out, err = pool(capsys, "--corpus", folder, "--queries", queries, "--db", db,
                          "--cache-dir", tmp_path / "c", "--passage-words", "40:120")
    assert code == 0, err
    ids = [d.doc_id for d in read_text_folder(folder, PassageRule("blocks", 40, 120, 20))]
    oracle = tmp_path / "oracle.qrels"
    oracle.write_text("".join(f"q_{t} 0 {i} {int(t in i)}\n" for t in TOPICS for i in ids))
    assert main(["simulate", "--db", str(db), "--oracle", str(oracle)]) == 0
    golden, qrels = tmp_path / "g.yaml", tmp_path / "g.qrels"
    assert main(["export", "--db", str(db), "--golden", str(golden), "--qrels", str(qrels)]) == 0
    assert "  params:\n    passages: blocks 40:120 rows 20\n" in golden.read_text()
    capsys.readouterr()
    run = str(tmp_path / "s-runs" / "bm25.run")

    def evaluated(judgments: Path, *options: str) -> tuple[int, dict]:
        code = main(["eval", "--qrels", str(judgments), "--run", run, "--corpus", str(folder),
                     "--json", *options])  # fmt: skip
        out, err = capsys.readouterr()
        return code, (json.loads(out) if out else {"error": err})

    def cut_elsewhere(report: dict) -> list[str]:
        return [p["message"] for p in report["problems"] if "not passages of" in p["message"]]

    for judgments in (db, golden):  # the store and its golden.yaml say how they were cut
        code, report = evaluated(judgments)
        assert code == 0 and not cut_elsewhere(report), report
    code, report = evaluated(qrels)  # TREC qrels cannot: the default rule, ids that name others
    [message] = cut_elsewhere(report)
    assert "(cut as blocks 80:250 rows 20: --passages): was it pooled with other --passages" \
        in message  # fmt: skip
    code, report = evaluated(qrels, "--passage-words", "40:120")
    assert code == 0 and not cut_elsewhere(report)
    code, report = evaluated(golden, "--passages", "paragraphs")
    said = report["error"]
    assert code == 2 and "holds passages cut as blocks 40:120 rows 20, not paragraphs" in said


def test_passage_options_that_cannot_apply_exit_2(tmp_path, corpus, capsys) -> None:
    folder, queries = corpus
    jsonl = tmp_path / "corpus.jsonl"
    jsonl.write_text('{"_id": "d1", "text": "armyworm in maize"}\n')
    base = ["--queries", queries, "--db", tmp_path / "x.db", "--cache-dir", tmp_path / "c"]
    code, _, err = pool(capsys, "--corpus", jsonl, *base, "--passages", "file")
    assert code == 2 and f"--passages: {jsonl} is a JSONL corpus" in err
    code, _, err = pool(capsys, "--corpus", folder, *base, "--passages", "file",
                        "--passage-words", "40:120")  # fmt: skip
    assert code == 2 and "--passage-words: sizes blocks or merged passages" in err
    for bad in ("120", "120:40", "0:50", "a:b", "5:9"):
        with pytest.raises(SystemExit) as info:
            main(["pool", "--corpus", str(folder), *map(str, base), "--passage-words", bad])
        assert info.value.code == 2
        assert "expected MIN:MAX" in capsys.readouterr().err
    assert not (tmp_path / "x.db").exists()


def test_a_jsonl_records_title_counts_in_its_length(tmp_path, capsys) -> None:
    """Records that are a title alone (half of cacm's) are that title's words long, not 0."""
    corpus, queries = tmp_path / "corpus.jsonl", tmp_path / "queries.jsonl"
    records = [{"_id": f"d{i}", "title": "four words of title", "text": "" if i else
                "and twelve words of text to read " + "more " * 5} for i in range(5)]  # fmt: skip
    corpus.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    queries.write_text(json.dumps({"_id": "q1", "text": "title words"}) + "\n", encoding="utf-8")
    code, out, err = pool(capsys, "--corpus", corpus, "--queries", queries, "--db",
                          tmp_path / "j.db", "--cache-dir", tmp_path / "c")  # fmt: skip
    assert code == 0, err
    assert "1 file -> 5 passages, median 4 words (shortest 4, longest 16)" in out + err


def test_the_relevance_threshold_is_stored_with_the_study_and_said(tmp_path, corpus, capsys):
    """`pool --rel-threshold 2` stores it; coverage, eval and the app then count grade >= 2
    as relevant unless told otherwise, and say so (issue 43, item 6)."""
    from workbench.core.model import Judgment

    folder, queries = corpus
    db = tmp_path / "s.db"
    code, out, err = pool(capsys, "--corpus", folder, "--queries", queries, "--db", db,
                          "--cache-dir", tmp_path / "c", "--policy", "static", "--depth", "3",
                          "--rel-threshold", "2")  # fmt: skip
    assert code == 0, err
    assert "Counted as relevant: grade >= 2 (2 relevant, 3 highly relevant)" in out
    with Store(db) as store:
        assert store.get_meta("rel_threshold") == "2"
        first = store.pool()[0]
        store.add_judgment(Judgment("a", first.query_id, first.doc_id, 1))
    assert main(["coverage", "--db", str(db), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["rel_threshold"] == 2
    assert report["queries"][first.query_id]["relevant"] == 0  # a 1 is not relevant here
    assert main(["coverage", "--db", str(db), "--rel-threshold", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["queries"][first.query_id]["relevant"] == 1
    assert main(["coverage", "--db", str(db)]) == 0
    assert "Counted as relevant: grade >= 2" in " ".join(capsys.readouterr().out.split())
    run = str(tmp_path / "s-runs" / "bm25.run")
    assert main(["eval", "--qrels", str(db), "--run", run]) == 1  # no relevant at >= 2: said
    assert "relevant = grade >= 2" in capsys.readouterr().out
    code, out, err = pool(capsys, "--corpus", folder, "--queries", queries, "--db", db,
                          "--rel-threshold", "0")  # fmt: skip
    assert code == 2 and "--rel-threshold 0: must be >= 1" in err
