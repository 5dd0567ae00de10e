"""Config: defaults, every key documented, clear errors naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from habitus.config import Config, config_keys, load_config
from habitus.errors import ConfigError


def test_defaults_when_missing(tmp_path: Path) -> None:
    cfg = load_config(tmp_path / "none.toml")
    assert cfg == Config()
    assert (cfg.window_days, cfg.max_sessions, cfg.min_occurrences, cfg.max_block_chars, cfg.max_entry_chars) == (14, 20, 2, 25000, 2000)
    assert cfg.auto_approve == "explicit" and cfg.write_global_claude_md is True


def test_every_key_is_documented() -> None:
    keys = config_keys()
    assert [k for k, _, _ in keys] == list(Config.__dataclass_fields__)
    assert all(doc for _, _, doc in keys)
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    for key, _, _ in keys:
        assert f"`{key}`" in readme, f"README does not document {key}"


def test_values_are_read(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    path.write_text('window_days = 7\nexclude_projects = ["~/work/secret*"]\nauto_approve = "none"\nwrite_global_claude_md = false\n')
    cfg = load_config(path)
    assert (cfg.window_days, cfg.exclude_projects, cfg.auto_approve, cfg.write_global_claude_md) == (7, ["~/work/secret*"], "none", False)


@pytest.mark.parametrize(
    "text, needle",
    [
        ("windw_days = 3\n", "windw_days"),
        ('window_days = "3"\n', "window_days"),
        ("window_days = 0\n", "window_days"),
        ('auto_approve = "sometimes"\n', "auto_approve"),
        ("write_global_claude_md = 1\n", "write_global_claude_md"),
        ('exclude_projects = "x"\n', "exclude_projects"),
        ('agents = ["claude", "cursor"]\n', "cursor"),
        ("max_block_chars = true\n", "max_block_chars"),
        ("[section]\nx = 1\n", "section"),
        ("window_days = \n", "cannot read config"),
    ],
)
def test_bad_config_names_the_key(tmp_path: Path, text: str, needle: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(path)
    assert needle in str(err.value)
    assert path.read_text() == text  # never rewritten


@pytest.mark.parametrize("value", ["", ".", "ledger", "./x"])
def test_memory_dir_must_be_absolute(tmp_path: Path, value: str) -> None:
    path = tmp_path / "c.toml"
    path.write_text(f'memory_dir = "{value}"\n')
    with pytest.raises(ConfigError, match="memory_dir"):
        load_config(path)
