"""``make demo``: run habitus on the bundled example transcripts in a scratch HOME.

Nothing outside ``.demo/`` is read or written: HOME, CLAUDE_CONFIG_DIR, CODEX_HOME,
FACTORY_HOME, HABITUS_HOME and HABITUS_CONFIG all point into it. No network, no API key.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SCRATCH = REPO / ".demo"


def main() -> int:
    if SCRATCH.exists():
        shutil.rmtree(SCRATCH)
    home = SCRATCH / "home"
    claude = home / ".claude"
    shutil.copytree(REPO / "examples" / "claude", claude)
    hour_ago = time.time() - 3600
    for path in claude.rglob("*.jsonl"):
        os.utime(path, (hour_ago, hour_ago))
    (claude / "CLAUDE.md").write_text("# My own notes\n\nKeep answers short. (habitus never edits this line.)\n", encoding="utf-8")
    env = dict(os.environ)
    env.update(
        HOME=str(home),
        CLAUDE_CONFIG_DIR=str(claude),
        CODEX_HOME=str(home / ".codex"),
        FACTORY_HOME=str(home / ".factory"),
        HABITUS_HOME=str(SCRATCH / "habitus"),
        HABITUS_CONFIG=str(SCRATCH / "config.toml"),
    )

    def habitus(*args: str) -> None:
        print(f"\n$ habitus {' '.join(args)}", flush=True)
        subprocess.run([sys.executable, "-m", "habitus", *args], env=env, check=True)

    habitus("distill", "--verbose")
    habitus("candidates")
    print(f"\n$ cat {claude / 'CLAUDE.md'}")
    print((claude / "CLAUDE.md").read_text(encoding="utf-8"))
    habitus("distill")
    print("\n(the second run read nothing: every file was unchanged)")
    print(f"ledger: {SCRATCH / 'habitus' / 'ledger'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
