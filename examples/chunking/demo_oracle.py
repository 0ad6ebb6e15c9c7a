"""The demo corpus's truth (golden/demo.qrels, judged a paragraph a passage) carried to the
passages a default pool cuts (blocks of 80-250 words): a passage takes the highest grade of the
paragraphs it holds. Only for the worked example of docs/chunks.md, where `simulate --oracle`
then judges the pool in place of people.

    python examples/chunking/demo_oracle.py corpora/demo/docs golden/demo.qrels > oracle.qrels
"""

from __future__ import annotations

import sys

from workbench.core.model import normalize_passage
from workbench.formats import read_qrels, read_text_folder
from workbench.formats.passages import DEFAULT_RULE, PARAGRAPHS


def main() -> None:
    folder, truth = sys.argv[1], sys.argv[2]
    qrels = read_qrels(truth)
    paragraphs = {d.doc_id: normalize_passage(d.text) for d in read_text_folder(folder, PARAGRAPHS)}
    passages = read_text_folder(folder, DEFAULT_RULE)
    for qid, grades in sorted(qrels.items()):
        for passage in passages:
            held = normalize_passage(passage.text)
            found = [g for d, g in grades.items() if d in paragraphs and paragraphs[d] in held]
            print(f"{qid} 0 {passage.doc_id} {max(found, default=0)}")


if __name__ == "__main__":
    main()
