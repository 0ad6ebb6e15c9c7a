"""How a folder of .txt/.md files is cut into passages, checked against the files: how many
passages are exact spans of their file, how many cut a fenced code block (a passage holding an
odd number of fence lines: a fence opens in one passage and closes in another), and their
median length. The same measure for every rule, so rules compare (not a timed test).

Exact: under `blocks`, the file's text at the passage's recorded offsets is its text; under
the rules that record no offsets, its text occurs somewhere in the file as written.

Run: PYTHONPATH=. .venv/bin/python bench/passage_spans.py FOLDER [--passages "blocks 80:250"]
     (e.g. the docs/ folder of github.com/Textualize/textual, or this project's docs/)"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from pathlib import Path

from workbench.formats import read_text_folder
from workbench.formats.passages import parse_rule
from workbench.formats.textfolder import path_id

_FENCE_LINE = re.compile(r"^[ \t>]*(```|~~~)", re.MULTILINE)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--passages", default="blocks 80:250", help="a rule as a store records it")
    args = parser.parse_args()
    rule = parse_rule(args.passages)
    if rule is None:
        parser.error(f"--passages {args.passages!r}: not a rule")
    started = time.perf_counter()
    docs = read_text_folder(args.folder, rule)
    seconds = time.perf_counter() - started
    files = {}
    for path in args.folder.rglob("*"):
        if path.suffix.lower() in (".md", ".txt") and path.is_file():
            relative = path.relative_to(args.folder).as_posix()
            files[path_id(relative)] = path.read_bytes().decode("utf-8-sig")
    exact = splits = 0
    for doc in docs:
        text = files[doc.doc_id.rsplit("#", 1)[0]]
        if doc.span is not None:
            exact += text[doc.span.start : doc.span.end] == doc.text
        else:
            exact += doc.text in text
        splits += len(_FENCE_LINE.findall(doc.text)) % 2
    words = [len(doc.text.split()) for doc in docs]
    print(f"{args.folder}: rule {rule}, {len(files)} files -> {len(docs)} passages "
          f"(median {statistics.median(words):.0f} words) in {seconds:.1f} s")  # fmt: skip
    print(f"  exact spans of their file: {exact} of {len(docs)}")
    print(f"  passages cutting a fenced code block: {splits}")


if __name__ == "__main__":
    main()
