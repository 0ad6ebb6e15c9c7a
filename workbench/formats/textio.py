"""Reading text files for the format readers, and the rules every reader shares: what an id may
hold, what an integer is, what valid text is. Every failure is an InputError naming the file."""

from __future__ import annotations

import json
import os
import re
import stat
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from workbench.core.display import CONTROL_CLASS
from workbench.core.errors import InputError, ProblemCollector, quoted
from workbench.core.limits import MAX_ID_CHARS, length_problem


def read_text(path: str | os.PathLike[str]) -> str:
    """The file's text as UTF-8 (a leading BOM tolerated); undecodable bytes name their line.
    Only a regular file is read: a folder, a pipe or a device is a problem, never a wait."""
    target = Path(path)
    data = _read_regular_file(target)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(
            [f"{target}:{line}: not UTF-8 text (byte 0x{data[exc.start]:02x})"]
        ) from None


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The file's bytes, with `read_text`'s checks; an empty file as b''. Read, not mapped: a
    mapped file that another process truncates kills the reader with SIGBUS (no message),
    which a command must never do; reading costs about 0.2 s on a 70 MB run."""
    return _read_regular_file(Path(path))


def _read_regular_file(target: Path) -> bytes:
    with open_regular(target) as file:
        try:
            return file.read()
        except OSError as exc:
            raise InputError([f"{target}: cannot read ({exc.strerror or exc})"]) from None
        except MemoryError:  # a file larger than memory
            raise InputError([f"{target}: cannot read (MemoryError)"]) from None


def line_blocks(
    file: IO[bytes], path: str | os.PathLike[str], size: int
) -> Iterator[tuple[bytearray, int]]:
    """`file` read as blocks of whole lines of about `size` bytes: each (buffer, end), the lines
    in buffer[:end], each ending in '\\n' (one is added to a last line without it). The buffer
    is reused: a consumer copies what it keeps of a block before taking the next, so that a
    block is read while the last is still in the CPU cache and no memory the size of the
    file is touched. A read error is an InputError naming `path`."""
    buffer = bytearray(size)
    kept = 0  # bytes of an unfinished line at the start of the buffer
    while True:
        if kept == len(buffer):  # a line longer than the buffer
            buffer = buffer + bytes(len(buffer))
        try:
            count = file.readinto(memoryview(buffer)[kept:])
        except OSError as exc:
            raise InputError([f"{path}: cannot read ({exc.strerror or exc})"]) from None
        if not count:
            break
        filled = kept + count
        end = buffer.rfind(b"\n", 0, filled) + 1
        if end:
            yield buffer, end
            buffer[: filled - end] = buffer[end:filled]
        kept = filled - end if end else filled
    if kept:
        if kept == len(buffer):
            buffer = buffer + b"\n"
        buffer[kept] = ord("\n")
        yield buffer, kept + 1


def open_regular(path: str | os.PathLike[str]) -> IO[bytes]:
    """`path` open for reading, when it is a regular file (a link is followed): the one rule
    for every input a command reads, the judgments store included. Looked at before it is
    opened, since opening a pipe waits for a writer (forever) and opening a device may act
    (rewind a tape); then opened without waiting and checked again on the descriptor, should
    the path have become a pipe since the look."""
    target = Path(path)
    try:
        _refuse_special(target, os.stat(target).st_mode)
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            _refuse_special(target, os.fstat(fd).st_mode)
            if hasattr(os, "set_blocking"):
                os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
    except (FileNotFoundError, NotADirectoryError):
        raise InputError([f"{target}: no such file"]) from None
    except IsADirectoryError:
        raise InputError([f"{target}: is a folder, expected a file"]) from None
    except OSError as exc:  # a loop of links, a name too long, no permission
        raise InputError([f"{target}: cannot read ({exc.strerror or exc})"]) from None
    except ValueError as exc:  # a NUL in the path
        raise InputError([f"{target}: cannot read ({type(exc).__name__})"]) from None
    return open(fd, "rb")  # noqa: SIM115 - returned to the caller's `with`


def _refuse_special(target: Path, mode: int) -> None:
    if stat.S_ISDIR(mode):
        raise InputError([f"{target}: is a folder, expected a file"])
    if not stat.S_ISREG(mode):
        raise InputError([f"{target}: not a regular file (a pipe or a device is not read)"])


# -- ids, integers, text ------------------------------------------------------------------------

_CONTROL = re.compile(f"[{CONTROL_CLASS}\ufeff]")
"""What `display.visible` replaces, and U+FEFF: a byte-order mark, invisible, that a reader
strips when it starts a file."""
_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL_IN_TOKEN = re.compile(
    "[\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f\u202a-\u202e\u2066-\u2069\ufeff]"
)
"""`_CONTROL` less whitespace (which `str.split` removes) and surrogates (UTF-8 has none)."""
_PRINTABLE_ASCII_OR_SPACE = bytes(range(0x20, 0x7F)) + b"\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f"
PLAIN_INT = re.compile(r"-?[0-9]+")
"""An integer as the formats write one: ASCII digits, an optional leading '-' (no '+', '_',
spaces or other scripts' digits, all of which Python's int() would take)."""
INT64 = range(-(2**63), 2**63)
"""Integers the store (SQLite) can hold."""


def has_whitespace(value: str) -> bool:
    """True when `value` would not survive as one whitespace-separated column."""
    return len(value.split()) != 1 or value.strip() != value


def has_surrogate(value: str) -> bool:
    """True when `value` holds a lone surrogate (it cannot be written as UTF-8)."""
    return _SURROGATE.search(value) is not None


def id_problem(value: str) -> str | None:
    """Why `value` cannot be an id, or None. An id is one TREC column that reads back as
    itself: non-empty, without whitespace or control characters, valid Unicode, at most
    `limits.MAX_ID_CHARS` long."""
    too_long = length_problem(value, MAX_ID_CHARS)
    if too_long:
        return too_long
    if not value or has_whitespace(value):
        return "must be non-empty without spaces"
    if _CONTROL.search(value):
        if has_surrogate(value):
            return "is not valid Unicode (lone surrogate)"
        if "\ufeff" in value:
            return "has a byte-order mark (U+FEFF)"
        return "has a control character"
    if not value.isascii() and not unicodedata.is_normalized("NFC", value):
        return "is not in Unicode NFC (ids are read in NFC, so it would not read back)"
    return None


def query_id_problem(value: str) -> str | None:
    """`id_problem`, and a query id must not start with '#': in a TREC file its lines would be
    read as comments (the one rule for every query id read or written)."""
    problem = id_problem(value)
    if problem is None and value.startswith("#"):
        problem = "starts with '#': a TREC file would read its lines as comments"
    return problem


def nfc(text: str) -> str:
    """`text` in Unicode NFC, so ids spelled with composed or decomposed characters (`é`,
    `e` + U+0301) are one id: ids are normalised so at read time (docs/formats.md)."""
    if text.isascii() or unicodedata.is_normalized("NFC", text):
        return text
    return unicodedata.normalize("NFC", text)


def trec_text(text: str) -> str:
    """A TREC file's text as its readers split it: a file of CR-only line ends (no '\n' at all,
    as old Mac tools write) given '\n' ones, and, since it holds ids and numbers only, in NFC."""
    if "\r" in text and "\n" not in text:
        text = text.replace("\r", "\n")
    return nfc(text)


def encode_id(text: str) -> str:
    """`text` made an id (see `id_problem`) that reads back unchanged and never equals another
    text's: `%`, `#`, whitespace and control characters percent-encoded as UTF-8 `%XX` (a file
    name's undecodable byte, which os.fsdecode gives as a lone surrogate, as itself)."""
    if text.isascii() and text.isprintable() and not _ENCODED.search(text):
        return text  # the common case
    return "".join(
        "".join(f"%{byte:02X}" for byte in _utf8(char))
        if char in "%#" or char.isspace() or _CONTROL.match(char)
        else char
        for char in text
    )


_ENCODED = re.compile(r"[%#\s]")


def _utf8(char: str) -> bytes:
    try:
        return char.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that stands for no byte
        return char.encode("utf-8", "surrogatepass")


def has_token_control(text: str) -> bool:
    """True when `text` holds a control character other than whitespace: one that would end up
    inside a whitespace-separated column. Fast on big files (bytes.translate for the ASCII)."""
    data = text.encode("utf-8", "surrogatepass")
    rest = data.translate(None, _PRINTABLE_ASCII_OR_SPACE)
    if not rest:
        return False
    # Deleting ASCII bytes leaves whole UTF-8 sequences: the control bytes and non-ASCII text.
    return _CONTROL_IN_TOKEN.search(rest.decode("utf-8", "surrogatepass")) is not None


def plain_int(text: str) -> int | None:
    """`text` as an integer when it is a PLAIN_INT within INT64, else None."""
    if len(text) > 20 or not PLAIN_INT.fullmatch(text):
        return None
    value = int(text)
    return value if value in INT64 else None


def int_problem(text: str) -> str:
    """Why `plain_int(text)` is None, for a message: '... is not an integer' or the like."""
    if PLAIN_INT.fullmatch(text):
        return "is out of range (a 64-bit integer)"
    try:
        int(text)
    except ValueError:
        return "is not an integer"
    return "is not a plain integer (ASCII digits, an optional leading '-')"


# -- JSON lines ---------------------------------------------------------------------------------

_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


class _DuplicateKey(Exception):
    def __init__(self, key: str):
        self.key = key


def _unique_keys(pairs: list[tuple[str, object]]) -> dict:
    record = dict(pairs)
    if len(record) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return record


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)


def json_objects(
    text: str, problems: ProblemCollector, fields: str = ""
) -> Iterator[tuple[int, dict]]:
    """(line number, object) for each non-blank line of JSONL `text`. A line that is not JSON,
    not a JSON object, repeats a key or holds a lone surrogate (`"\\ud800"`, which no file can
    store) is added to `problems` and skipped, so a reader reports every bad line at once;
    `fields` names what an object should carry, for that message."""
    wanted = f" with {fields}" if fields else ""
    for lineno, line in enumerate(_lines(text), 1):
        if not line.strip():
            continue
        try:
            record = _DECODER.decode(line)
        except json.JSONDecodeError as exc:
            problems.add(lineno, f"bad JSON ({exc.msg} at column {exc.colno})")
            continue
        except _DuplicateKey as exc:
            problems.add(lineno, f"duplicate key {quoted(exc.key)}")
            continue
        except RecursionError:
            problems.add(lineno, "bad JSON (nested too deeply)")
            continue
        except ValueError:  # an integer over Python's 4,300-digit conversion limit
            problems.add(lineno, "bad JSON (a number with too many digits)")
            continue
        if not isinstance(record, dict):
            problems.add(lineno, f"expected a JSON object{wanted}, found {type(record).__name__}")
            continue
        if "\\u" in line and _SURROGATE_ESCAPE.search(line):
            where = _surrogate_path(record)
            if where is not None:
                problems.add(lineno, f"{where}: not valid Unicode (lone surrogate)")
                continue
        yield lineno, record


def _lines(text: str) -> Iterator[str]:
    """`text.split("\n")`, one line at a time: a corpus's lines as one list would hold it a
    second time (a million passages: half a gigabyte more at the peak)."""
    start, end = 0, len(text)
    while start <= end:
        stop = text.find("\n", start)
        if stop < 0:
            stop = end
        yield text[start:stop]
        start = stop + 1


def _surrogate_path(record: dict) -> str | None:
    """The key path (`'text'`, `'metadata'.'narrative'`) of the first string in `record`, key
    or value, that holds a lone surrogate; None if none does. Iterative: JSON nests deep."""
    stack: list[tuple[str, object]] = [("", record)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, str):
            if has_surrogate(value):
                return where or "a value"
        elif isinstance(value, dict):
            for key, item in reversed(value.items()):
                path = f"{where}.{quoted(key)}" if where else quoted(key)
                if has_surrogate(key):
                    return f"key {path}"
                stack.append((path, item))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", item) for i, item in reversed(list(enumerate(value))))
    return None
