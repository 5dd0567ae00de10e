"""The managed CLAUDE.md block: bytes outside the markers are kept exactly; broken markers
are refused and the file is left untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from habitus.errors import MarkerError
from habitus.render.block import BEGIN, END, Entry, build_block, find_region, splice, write_block


def _block(body: str = "- Use uv.") -> str:
    return f"{BEGIN}\n{body}\n{END}"


@pytest.mark.parametrize(
    "before, after",
    [
        ("# My rules\n\nBe terse.\n", "\n## Mine again\n"),
        ("\ufeff# Règles\r\n\r\n用中文写注释。\r\n", "\r\n尾部 ✓\r\n"),
        ("no newline at end", ""),
        ("", "trailing user text without newline"),
    ],
)
def test_bytes_outside_markers_are_identical(tmp_path: Path, before: str, after: str) -> None:
    path = tmp_path / "CLAUDE.md"
    old_block = _block("- old entry").replace("\n", "\r\n" if "\r\n" in before else "\n")
    path.write_bytes(before.encode("utf-8") + old_block.encode() + after.encode("utf-8"))
    original = path.read_bytes()
    result = write_block(path, _block("- Reply in Chinese. →reply\n- 以后都用 uv。 →uv"), backup_dir=tmp_path / "bk")
    data = path.read_bytes()
    prefix, suffix = before.encode("utf-8"), after.encode("utf-8")
    assert data.startswith(prefix) and data.endswith(suffix)
    middle = data[len(prefix) : len(data) - len(suffix)].decode("utf-8")
    newline = "\r\n" if "\r\n" in before else "\n"
    assert middle == _block("- Reply in Chinese. →reply\n- 以后都用 uv。 →uv").replace("\n", newline)
    assert result.written and result.backup is not None and result.backup.read_bytes() == original
    # Re-running with the same block writes nothing and makes no new backup.
    again = write_block(path, _block("- Reply in Chinese. →reply\n- 以后都用 uv。 →uv"), backup_dir=tmp_path / "bk")
    assert not again.written and again.backup is None and path.read_bytes() == data
    assert len(list((tmp_path / "bk").iterdir())) == 1


def test_block_is_appended_when_absent(tmp_path: Path) -> None:
    path = tmp_path / "CLAUDE.md"
    path.write_bytes(b"\xef\xbb\xbf# Mine\r\nkeep\r\n")
    write_block(path, _block(), backup_dir=tmp_path / "bk")
    assert path.read_bytes() == b"\xef\xbb\xbf# Mine\r\nkeep\r\n\r\n" + _block().replace("\n", "\r\n").encode() + b"\r\n"


@pytest.mark.parametrize(
    "content",
    [
        f"a\n{BEGIN}\n- x\n",  # END missing
        f"a\n- x\n{END}\n",  # BEGIN missing
        f"{BEGIN}\n{BEGIN}\n- x\n{END}\n",  # two BEGINs
        f"{BEGIN}\n- x\n{END}\n{END}\n",  # two ENDs
        f"{END}\n- x\n{BEGIN}\n",  # reversed
    ],
)
def test_broken_markers_are_refused_and_file_untouched(tmp_path: Path, content: str) -> None:
    path = tmp_path / "CLAUDE.md"
    path.write_text(content, encoding="utf-8")
    before = path.read_bytes()
    with pytest.raises(MarkerError):
        write_block(path, _block(), backup_dir=tmp_path / "bk")
    assert path.read_bytes() == before
    assert not (tmp_path / "bk").exists()


def test_budget_counts_characters_not_bytes() -> None:
    entries = [Entry(f"id{i}", "用中文回复，并且保持简洁。" * 3, f"e{i}") for i in range(50)]
    built = build_block(entries, ledger_display="~/l", max_block_chars=1000, max_entry_chars=200)
    assert built.chars <= 1000 < len(built.text.encode("utf-8"))
    assert built.included and built.omitted
    assert len(built.included) + len(built.omitted) == 50
    assert built.text.splitlines()[1].startswith("- Habit ledger lives in `~/l`")


def test_long_entry_is_shortened_with_pointer() -> None:
    entry = Entry("x", "word " * 1000, "long-rule")
    built = build_block([entry], ledger_display="~/l", max_block_chars=25000, max_entry_chars=200)
    line = built.text.splitlines()[2]
    assert len(line) <= 200 and line.endswith("→long-rule") and "…" in line
    assert built.shortened == ["x"]


def test_splice_only_touches_region() -> None:
    data = b"head\n" + _block("- a").encode() + b"\ntail\n"
    region = find_region(data)
    assert region is not None and data[region.start : region.end].decode() == _block("- a")
    assert splice(data, _block("- b")) == b"head\n" + _block("- b").encode() + b"\ntail\n"


def test_symlinked_claude_md_is_written_through_the_link(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "CLAUDE.md"
    dotfiles.parent.mkdir()
    dotfiles.write_text("# mine\n", encoding="utf-8")
    link = tmp_path / "CLAUDE.md"
    link.symlink_to(dotfiles)
    write_block(link, _block(), backup_dir=tmp_path / "bk")
    assert link.is_symlink() and link.resolve() == dotfiles
    assert dotfiles.read_text(encoding="utf-8") == "# mine\n\n" + _block() + "\n"


def test_read_only_claude_md_is_left_alone(tmp_path: Path) -> None:
    from habitus.errors import HabitusError

    path = tmp_path / "CLAUDE.md"
    path.write_text("# mine\n", encoding="utf-8")
    path.chmod(0o444)
    with pytest.raises(HabitusError, match="read-only"):
        write_block(path, _block(), backup_dir=tmp_path / "bk")
    assert path.read_text(encoding="utf-8") == "# mine\n"


def test_non_utf8_claude_md_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "CLAUDE.md"
    path.write_bytes("# règles\n".encode("utf-16"))
    before = path.read_bytes()
    with pytest.raises(MarkerError, match="not UTF-8"):
        write_block(path, _block(), backup_dir=tmp_path / "bk")
    assert path.read_bytes() == before
