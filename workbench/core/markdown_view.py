"""A Markdown passage made ready to be shown rendered (pure: text in, text out). Lines that are
build-tool syntax rather than text (MkDocs snippet includes `--8<--`, content tabs `=== "Tab"`,
API blocks `::: module.Name` with their indented options) become one dimmed line each (a fenced
block of the info `TOOL_INFO`, which the renderer shows dim); a tab's indented body is dedented
so its code renders as code; an admonition (`!!! note "Title"`) becomes a quote under its title.
The text shown raw is never changed: this is only what the renderer is given."""

from __future__ import annotations

import re

TOOL_INFO = "workbench-tool-line"
"""The info string of a fenced block that stands for one build-tool line."""

_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_HTML = re.compile(r" {0,3}</?[A-Za-z][\w-]*(?:[\s/>]|$)")
"""A line that opens an HTML block (CommonMark's kinds 6 and 7, to the next blank line)."""
_INCLUDE = re.compile(r"\s*-{2,}8<-{2,}\s*(.*)")
_TAB = re.compile(r"( *)===!? +\"(.*)\"\s*$")
_API = re.compile(r"( *)::: +(\S+)\s*$")
_ADMONITION = re.compile(r"( *)(?:!!!|\?\?\?\+?) *([\w-]+)(?: +\"(.*)\")?\s*$")


def tool_kind(line: str) -> str | None:
    """Which build-tool line `line` is ('include', 'tab', 'api'), shown as one dim line; None
    when it is text."""
    for pattern, kind in ((_INCLUDE, "include"), (_TAB, "tab"), (_API, "api")):
        if pattern.fullmatch(line):
            return kind
    return None


def tool_line(text: str) -> str:
    """One build-tool line as the fenced block the renderer shows dim."""
    return f"~~~~ {TOOL_INFO}\n{text.strip()}\n~~~~"


def markdown_for_display(text: str, fence: str = "") -> str:
    """`text` (a passage of a Markdown file) as the renderer is given it; `fence`: the opening
    line of a fenced block the passage starts inside (`SourceSpan.fence`), reopened first."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if fence:
        lines.insert(0, fence)
    out: list[str] = []
    n = 0
    while n < len(lines):
        n = _one(lines, n, out)
    return _joined("\n".join(out))


_OPEN = f"~~~~ {TOOL_INFO}"
_BETWEEN = re.compile(rf"\n~~~~\n(?:[ \t]*\n)*{re.escape(_OPEN)}\n")


def _joined(text: str) -> str:
    """Build-tool lines that follow each other (blank lines between) as one dim block, so no
    blank line stands between them on screen."""
    return _BETWEEN.sub("\n", text)


def _one(lines: list[str], n: int, out: list[str]) -> int:
    """Render-ready lines for the construct at line `n` into `out`; the next line's index."""
    line = lines[n]
    fence = _FENCE.match(line)
    if fence:
        end = _fence_end(lines, n, fence.group(1))
        body = [x for x in lines[n + 1 : end] if x.strip()]
        if body and all(_INCLUDE.fullmatch(x) for x in body):  # a block of includes only
            out.extend(tool_line(x) for x in body)
        elif not body and line.strip().lstrip("`~").startswith("{"):  # a build tool's block
            out.append(tool_line(line))
        else:
            out.extend(lines[n : end + 1])
        return end + 1
    if _HTML.match(line) and (not out or not out[-1].strip()):  # shown as written, to a blank
        end = next((k for k in range(n, len(lines)) if not lines[k].strip()), len(lines))
        out.extend(lines[n:end])
        return end
    include = _INCLUDE.fullmatch(line)
    if include:
        out.append(tool_line(line))
        return n + 1
    for pattern, kind in ((_TAB, "tab"), (_API, "api"), (_ADMONITION, "admonition")):
        match = pattern.fullmatch(line)
        if match:
            indent = len(match.group(1))
            end = _indented_end(lines, n + 1, indent + 4)
            body = [x[indent + 4 :] if x.strip() else "" for x in lines[n + 1 : end]]
            while body and not body[0]:
                body.pop(0)
            if kind == "api":
                said = f" (and {sum(1 for x in body if x.strip())} option lines)" if body else ""
                out.append(tool_line(line + said))
            elif kind == "tab":
                out.append(tool_line(line))
                out.extend(markdown_for_display("\n".join(body)).split("\n"))
            else:
                title = match.group(3) if match.group(3) is not None else match.group(2).title()
                out.append(f"> **{_escape(title)}**" if title else ">")
                out.append(">")
                inner = markdown_for_display("\n".join(body)).split("\n")
                out.extend(f"> {x}" if x.strip() else ">" for x in inner)
            return end
    out.append(line)
    return n + 1


def _fence_end(lines: list[str], n: int, marker: str) -> int:
    """The index of the line closing the fence opened at `n` (the last line when none)."""
    closing = re.compile(rf" {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}\s*$")
    for k in range(n + 1, len(lines)):
        if closing.match(lines[k]):
            return k
    return len(lines) - 1


def _indented_end(lines: list[str], n: int, indent: int) -> int:
    """The index after the block of lines from `n` indented by at least `indent` (blank lines
    inside it included, trailing ones not)."""
    end = n
    for k in range(n, len(lines)):
        if not lines[k].strip():
            continue
        if len(lines[k]) - len(lines[k].lstrip(" ")) < indent:
            break
        end = k + 1
    return end


def _escape(text: str) -> str:
    """A title as literal Markdown text (no emphasis, link or code from it)."""
    return re.sub(r"([\\`*_\[\]<>!#|~])", r"\\\1", text)
