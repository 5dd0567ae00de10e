"""The managed block in ``CLAUDE.md`` (the execution layer), like cog: explicit begin/end
markers, regenerate only between them, byte-identical output on re-run.

Bytes outside the markers are preserved exactly (BOM, CRLF, any encoding of the rest). A file
whose markers are broken (one missing, two BEGINs, END before BEGIN) is refused with
:class:`MarkerError`, never rewritten. Budgets are in characters, not bytes (seed 000
"Character budget"): the block is at most ``max_block_chars``, one entry ``max_entry_chars``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from habitus.errors import MarkerError

BEGIN = "<!-- BEGIN habitus (auto-managed · do not edit this block by hand) -->"
END = "<!-- END habitus -->"
_BEGIN_B = b"<!-- BEGIN habitus ("
_END_B = b"<!-- END habitus -->"

POINTER = {
    "en": "- Habit ledger lives in `{ledger}` (index: INDEX.md). This block holds decision rules only — "
    "read the ledger for the Why, the evidence and the cases.",
    "zh": "- 习惯账本位于 `{ledger}`（索引：INDEX.md）。本区块只保存决策规则——原因、证据和案例请查阅账本。",
}


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of the block: the rule and the ledger file it points to."""

    belief_id: str
    text: str
    slug: str


@dataclass
class BuiltBlock:
    """A rendered block: ``text`` from BEGIN to END (``\\n`` newlines, no trailing newline),
    which entries made it in, which were cut for the budget, and which were shortened."""

    text: str
    included: list[str] = field(default_factory=list)
    omitted: list[str] = field(default_factory=list)
    shortened: list[str] = field(default_factory=list)

    @property
    def chars(self) -> int:
        """Size of the block in characters (not bytes)."""
        return len(self.text)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def build_block(
    entries: Sequence[Entry],
    *,
    ledger_display: str,
    max_block_chars: int,
    max_entry_chars: int,
    language: str = "en",
) -> BuiltBlock:
    """Render ``entries`` (most important first) as a block within the budgets.

    The first line inside the markers points to the ledger (seed 000 step 6). An entry over
    ``max_entry_chars`` is shortened at a word boundary (its full text stays in the ledger,
    which the ``→slug`` pointer names); entries that would push the block over
    ``max_block_chars`` are left out and listed in ``omitted``.
    """
    pointer = POINTER.get(language, POINTER["en"]).format(ledger=ledger_display)
    lines = [BEGIN, pointer]
    size = sum(len(x) + 1 for x in lines) + len(END)
    built = BuiltBlock(text="")
    for entry in entries:
        suffix = f" →{entry.slug}"
        body = _one_line(entry.text)
        line = f"- {body}{suffix}"
        if len(line) > max_entry_chars:
            room = max_entry_chars - len(suffix) - len("- …")
            cut = body[:room]
            if " " in cut[room // 2 :]:
                cut = cut[: cut.rfind(" ")]
            line = f"- {cut.rstrip()}…{suffix}"
            built.shortened.append(entry.belief_id)
        if size + len(line) + 1 > max_block_chars:
            built.omitted.append(entry.belief_id)
            continue
        lines.append(line)
        size += len(line) + 1
        built.included.append(entry.belief_id)
    lines.append(END)
    built.text = "\n".join(lines)
    return built


@dataclass(frozen=True, slots=True)
class Region:
    """Where the block sits in a file: byte offsets ``[start, end)`` from the B of BEGIN to
    the end of the END marker."""

    start: int
    end: int


def find_region(
    data: bytes, *, name: str = "file", begin: bytes = _BEGIN_B, end: bytes = _END_B
) -> Region | None:
    """Locate the block in ``data``; ``None`` when the file has no markers. ``begin`` is the
    BEGIN marker's prefix, ``end`` the whole END marker (bytes).

    Raises :class:`MarkerError` when the markers are broken: a BEGIN without END or the
    reverse, more than one of either, or END before BEGIN.
    """
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MarkerError(f"{name}: not UTF-8 text (byte {exc.start}); habitus will not edit it") from exc
    begins = _find_all(data, begin)
    ends = _find_all(data, end)
    if not begins and not ends:
        return None
    if len(begins) != 1 or len(ends) != 1:
        raise MarkerError(
            f"{name}: habitus markers are broken ({len(begins)} BEGIN, {len(ends)} END; "
            "expected one of each). Fix or remove them by hand; habitus will not touch this file."
        )
    if ends[0] < begins[0]:
        raise MarkerError(f"{name}: the END habitus marker comes before BEGIN; refusing to edit this file.")
    return Region(begins[0], ends[0] + len(end))


def _find_all(data: bytes, needle: bytes) -> list[int]:
    found = []
    at = data.find(needle)
    while at >= 0:
        found.append(at)
        at = data.find(needle, at + 1)
    return found


def entry_count(block: str | None) -> int:
    """Entries in a rendered block: its bullet lines after the pointer line."""
    return max(0, sum(1 for line in (block or "").splitlines() if line.startswith("- ")) - 1)


def current_block(data: bytes, *, name: str = "file") -> str | None:
    """The text of the existing block (``\\n`` newlines), or ``None`` when there is none."""
    region = find_region(data, name=name)
    if region is None:
        return None
    return data[region.start : region.end].decode("utf-8", "replace").replace("\r\n", "\n")


def splice(data: bytes, block_text: str, *, name: str = "file") -> bytes:
    """Return ``data`` with the block replaced by ``block_text`` (or appended at the end when
    there is none), in the file's newline style. Only the block's bytes change."""
    newline = b"\r\n" if b"\r\n" in data else b"\n"
    block = block_text.replace("\n", newline.decode()).encode("utf-8")
    region = find_region(data, name=name)
    if region is not None:
        return data[: region.start] + block + data[region.end :]
    if not data:
        return block + newline
    separator = newline if data.endswith(b"\n") else newline + newline
    return data + separator + block + newline


@dataclass
class BlockWrite:
    """Outcome of :func:`write_block`: sizes in characters, whether the file changed, and
    the backup made before changing it."""

    path: Path
    before_chars: int
    after_chars: int
    written: bool
    backup: Path | None


def write_block(path: Path, block_text: str, *, backup_dir: Path, create: bool = True) -> BlockWrite:
    """Put ``block_text`` into ``path`` between the markers, atomically, with a backup.

    A missing file is created only when ``create``. Raises :class:`MarkerError` for broken
    markers and ``OSError`` when the file cannot be read or written.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = b""
        if not create:
            return BlockWrite(path, 0, 0, False, None)
    before = current_block(data, name=str(path))
    new = splice(data, block_text, name=str(path))
    from habitus.render.files import write_if_changed  # here: reading markers needs none of it

    written, saved = write_if_changed(path, new, backup_dir=backup_dir)
    return BlockWrite(path, len(before) if before else 0, len(block_text), written, saved)
