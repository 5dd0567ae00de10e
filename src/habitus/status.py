"""``habitus status``: where things are, what the store holds, the last run, the block's
size against its budget, and whether the daily LLM call cap was hit."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from habitus.config import Config, load_config
from habitus.errors import HabitusError
from habitus.paths import agent_home, claude_home, config_path, user_dir
from habitus.render.block import current_block
from habitus.store import Store, default_db_path


def status(config: Config | None = None) -> dict[str, Any]:
    """A JSON-ready summary: ``paths``, ``agents`` (home and whether it exists), ``beliefs``
    by status, ``files`` and ``turns`` tracked, ``last_run`` (time and counts of the last run
    that changed something), ``block`` (characters now / limit, or the marker problem), and
    ``llm`` (calls today / ``max_calls_per_day``, ``cap_hit``)."""
    config = config or load_config()
    db = default_db_path()
    out: dict[str, Any] = {
        "paths": {
            "habitus_home": str(user_dir()),
            "store": str(db),
            "config": str(config_path()),
            "config_exists": config_path().exists(),
            "ledger": str(config.ledger_dir()),
            "claude_md": str(claude_home() / "CLAUDE.md"),
        },
        "agents": {a: {"home": str(agent_home(a)), "exists": agent_home(a).is_dir()} for a in config.agents},
        "beliefs": {},
        "files": 0,
        "turns": 0,
        "last_run": None,
    }
    if db.exists():
        with Store.open(db) as store:
            out["beliefs"] = store.status_counts()
            out["files"] = store.count_files()
            out["turns"] = store.count_turns()
            last = store.last_event("run")
            if last:
                detail = last["detail"] or {}
                out["last_run"] = {
                    "at": last["at"],
                    "files_read": detail.get("files_read"),
                    "new_human_turns": detail.get("new_human_turns"),
                    "beliefs_new": detail.get("beliefs_new"),
                }
            today = datetime.now(UTC).strftime("%Y-%m-%dT00:00:00")
            calls = store.count_events("llm_call", today)
    else:
        calls = 0
    out["llm"] = {
        "extractor": config.extractor,
        "model": config.model or None,
        "calls_today": calls,
        "max_calls_per_day": config.max_calls_per_day,
        "cap_hit": config.extractor == "llm" and calls >= config.max_calls_per_day,
    }
    target = claude_home() / "CLAUDE.md"
    block: dict[str, Any] = {"path": str(target), "limit": config.max_block_chars, "chars": 0}
    if target.exists():
        try:
            text = current_block(target.read_bytes(), name=str(target))
            block["chars"] = len(text) if text else 0
            block["present"] = text is not None
        except HabitusError as exc:
            block["error"] = str(exc)
    out["block"] = block
    return out
