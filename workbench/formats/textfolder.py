"""A folder of .txt/.md files as a corpus of passages, each file cut by one deterministic rule
(`workbench.formats.passages`: paragraphs merged to 80-250 words by default).

The `paragraphs` rule (`workbench.formats.paragraphs`) is the rule before merging.
Title: the file's first `# ` heading, else the file name. Under the default rule (`blocks`) a
passage is an exact span of its file and records it (`Doc.span`: the file's path relative to
the folder and the character offsets), with the headings it sits under (`Doc.headings`).

Id: `relative/posix/path.md#N`, N 1-based in file order (`#1` alone under the `file` rule),
where the path has `%`, `#`, whitespace and control characters (and any byte of a file name
that is not UTF-8) percent-encoded as UTF-8 `%XX`: `My Notes [draft].md` gives
`My%20Notes%20[draft].md#1`, `a#b.md` gives `a%23b.md#1`. Everything else, brackets and
non-ASCII letters included, stays as written. So an id is one TREC column, reads back from
golden.yaml and qrels unchanged, and two files never share one."""

from __future__ import annotations

import os
import re
from pathlib import Path

from workbench.core.errors import InputError
from workbench.core.model import Doc, SourceSpan
from workbench.formats.passages import DEFAULT_RULE, PassageRule
from workbench.formats.textio import encode_id, read_text

SUFFIXES = (".txt", ".md")
_PROBLEM_LIMIT = 50
_TITLE = re.compile(r" {0,3}# +(.*?)[ \t#]*$")


def read_text_folder(
    path: str | os.PathLike[str], passages: PassageRule = DEFAULT_RULE
) -> list[Doc]:
    """The passages of every .txt/.md file under `path` (hidden files and folders skipped),
    sorted by path, each file cut by the rule `passages`."""
    root = Path(path)
    if not root.is_dir():
        raise InputError([f"{root}: not a folder"])
    files = _files_under(root)
    docs: list[Doc] = []
    problems: list[str] = []
    for file in files:
        try:
            text = read_text(file)
        except InputError as exc:
            problems.extend(exc.problems)
            continue
        relative = file.relative_to(root).as_posix()
        base = path_id(relative)
        title = file_title(text) or _file_name(file.name)
        markdown = file.suffix.lower() == ".md"
        if passages.kind == "blocks":
            source = _source(relative)
            docs.extend(
                Doc(f"{base}#{n}", text[p.start : p.end], title,
                    SourceSpan(source, p.start, p.end, p.fence), p.headings)
                for n, p in enumerate(passages.pieces(text, markdown), 1)
            )  # fmt: skip
            continue
        docs.extend(
            Doc(doc_id=f"{base}#{n}", text=passage, title=title)
            for n, passage in enumerate(passages.chunk(text), 1)
        )
    if len(problems) > _PROBLEM_LIMIT:
        more = len(problems) - _PROBLEM_LIMIT
        problems[_PROBLEM_LIMIT:] = [f"{root}: ... and {more} more problems"]
    if problems:
        raise InputError(problems)
    if not docs:
        raise InputError([f"{root}: no passages (no non-empty .txt or .md files)"])
    return docs


def folder_texts(path: str | os.PathLike[str]) -> tuple[dict[str, str], dict[str, str]]:
    """Each .txt/.md file under `path` by its source (as a passage's span names it): its text,
    and its title (as its passages carry it). What chunks of other cuts are read against."""
    root = Path(path)
    if not root.is_dir():
        raise InputError([f"{root}: not a folder"])
    texts: dict[str, str] = {}
    titles: dict[str, str] = {}
    problems: list[str] = []
    for file in _files_under(root):
        try:
            text = read_text(file)
        except InputError as exc:
            problems.extend(exc.problems)
            continue
        source = _source(file.relative_to(root).as_posix())
        texts[source] = text
        titles[source] = file_title(text) or _file_name(file.name)
    if problems:
        raise InputError(problems[:_PROBLEM_LIMIT])
    return texts, titles


def _files_under(root: Path) -> list[Path]:
    """The .txt/.md regular files under `root` (a pipe or a device named x.md is passed over;
    hidden files and folders too), sorted by path. Walked with a list, not recursion (Path.rglob
    recursed, so a folder 1,100 levels deep was a RecursionError); a folder too deep for the
    system to name (ENAMETOOLONG) or one that cannot be read is one line naming the corpus."""
    found: list[Path] = []
    folders = [root]
    try:
        while folders:
            with os.scandir(folders.pop()) as entries:
                for entry in entries:
                    if entry.name.startswith("."):
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(Path(entry.path))
                    elif Path(entry.name).suffix.lower() in SUFFIXES and entry.is_file():
                        found.append(Path(entry.path))
    except OSError as exc:
        raise InputError([f"{root}: cannot read the folder ({exc.strerror or exc})"]) from None
    return sorted(found, key=lambda p: p.relative_to(root).as_posix())


def path_id(relative: str) -> str:
    """The id stem of a file at `relative` (a POSIX path as os.fsdecode gives it): `%`, `#`,
    whitespace and control characters percent-encoded (the module docstring states the rule)."""
    return encode_id(relative)


def _source(relative: str) -> str:
    """A file's path relative to the corpus folder, as a passage's span records it: as written
    where it is UTF-8, else its id stem (percent-encoded), which any store can hold."""
    try:
        relative.encode("utf-8")
    except UnicodeEncodeError:
        return path_id(relative)
    return relative


def _file_name(name: str) -> str:
    """A file name as text: bytes that are not UTF-8 (os.fsdecode's surrogates) become U+FFFD."""
    return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def file_title(text: str) -> str:
    """The first level-1 Markdown heading's text, or '' when there is none."""
    for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        match = _TITLE.fullmatch(line)
        if match and match.group(1).strip():
            return match.group(1).strip()
    return ""
