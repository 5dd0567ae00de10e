"""Write the bundled example Claude Code transcripts used by ``make demo`` (and tests).

These are written by us, not copied from anyone: realistic Claude Code 2.0/2.1 envelopes
(see ../shared/transcripts/FORMATS.md section 1) for a fictional developer, with a few real
habits and the usual traps. Run ``python examples/generate.py`` to regenerate
``examples/claude/``; the output is deterministic and committed.

Habits planted (what a good distiller should learn):
  * uv, not pip, for Python dependencies (a correction, then an explicit "always");
  * pnpm, not npm (a tool-rejection reason, then "use pnpm instead of npm"): inferred, 2 sessions;
  * commit messages in the imperative mood (explicit "from now on");
  * never push directly to main (explicit "never");
  * run the tests before committing (Chinese, explicit 记住).
Traps planted (what it must not learn): an isMeta skill body, a system reminder, an assistant
promise, a README in tool output, a sidechain Task prompt, a compaction summary, a slash command
and its output, queue-operation copies, a one-off task said twice, a hypothetical, a pasted log,
and a secret pasted into a prompt (redacted before anything is stored).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

OUT = Path(__file__).parent / "claude"
NS = uuid.UUID("5f1c0a8e-3c1e-4d4a-9d3b-6b1f1c2a9e10")


class Session:
    """Builds one transcript file line by line with a consistent envelope."""

    def __init__(self, name: str, cwd: str, start: str, version: str = "2.1.114") -> None:
        self.id = str(uuid.uuid5(NS, name))
        self.cwd = cwd
        self.version = version
        self.lines: list[dict] = []
        self.parent: str | None = None
        self.clock = start  # "2026-11-20T09:00"
        self.minute = 0
        self.n = 0

    def _ts(self) -> str:
        self.minute += 1
        hour, minute = divmod(self.minute, 60)
        base_h = int(self.clock[11:13])
        return f"{self.clock[:11]}{base_h + hour:02d}:{minute:02d}:{self.n % 60:02d}.{(self.n * 37) % 1000:03d}Z"

    def _uuid(self) -> str:
        self.n += 1
        return str(uuid.uuid5(NS, f"{self.id}:{self.n}"))

    def _envelope(self, kind: str, **extra: object) -> dict:
        ident = self._uuid()
        line = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": self.cwd,
            "sessionId": self.id,
            "version": self.version,
            "gitBranch": "main",
            "type": kind,
            **extra,
            "uuid": ident,
            "timestamp": self._ts(),
        }
        self.parent = ident
        return line

    def raw(self, line: dict) -> None:
        self.lines.append(line)

    def snapshot(self) -> None:
        self.raw({"type": "file-history-snapshot", "messageId": self._uuid(), "snapshot": {"messageId": "x", "trackedFileBackups": {}, "timestamp": self._ts()}, "isSnapshotUpdate": False})

    def user(self, text: str | list, **extra: object) -> None:
        self.raw({"type": "queue-operation", "operation": "enqueue", "timestamp": self._ts(), "sessionId": self.id, "content": text if isinstance(text, str) else None})
        self.raw({"type": "queue-operation", "operation": "dequeue", "timestamp": self._ts(), "sessionId": self.id})
        self.raw(self._envelope("user", message={"role": "user", "content": text}, permissionMode="default", **extra))

    def meta(self, text: str) -> None:
        self.raw(self._envelope("user", message={"role": "user", "content": [{"type": "text", "text": text}]}, isMeta=True))

    def assistant(self, *blocks: dict) -> None:
        msg_id = f"msg_01{uuid.uuid5(NS, self.id + str(self.n)).hex[:22]}"
        for block in blocks:
            self.raw(
                self._envelope(
                    "assistant",
                    message={"model": "claude-sonnet-4-5", "id": msg_id, "type": "message", "role": "assistant", "content": [block], "stop_reason": None, "usage": {"input_tokens": 12, "output_tokens": 40}},
                    requestId=f"req_011{msg_id[6:20]}",
                )
            )

    def say(self, text: str) -> None:
        self.assistant({"type": "text", "text": text})

    def tool(self, name: str, tool_input: dict, result: str, *, is_error: bool = False) -> None:
        tool_id = f"toolu_01{uuid.uuid5(NS, self.id + str(self.n)).hex[:22]}"
        self.assistant({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
        block = {"tool_use_id": tool_id, "type": "tool_result", "content": result}
        if is_error:
            block["is_error"] = True
        self.raw(self._envelope("user", message={"role": "user", "content": [block]}, toolUseResult=("Error: " + result) if is_error else {"stdout": result, "stderr": "", "interrupted": False, "isImage": False}))

    def reject(self, name: str, tool_input: dict, reason: str | None) -> None:
        text = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). "
        text += f"The user provided the following reason for the rejection:  {reason}" if reason else "STOP what you are doing and wait for the user to tell you how to proceed."
        self.tool(name, tool_input, text, is_error=True)

    def command(self, name: str, output: str) -> None:
        self.raw(self._envelope("user", message={"role": "user", "content": "<local-command-caveat>Caveat: The messages below were generated by the user while running local commands. DO NOT respond to these messages or otherwise consider them in your response unless the user explicitly asks you to.</local-command-caveat>"}, isMeta=True))
        self.raw(self._envelope("user", message={"role": "user", "content": f"<command-name>{name}</command-name>\n            <command-message>{name.lstrip('/')}</command-message>\n            <command-args></command-args>"}))
        self.raw(self._envelope("user", message={"role": "user", "content": f"<local-command-stdout>{output}</local-command-stdout>"}))

    def write(self, folder: Path) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{self.id}.jsonl"
        self.raw({"type": "last-prompt", "lastPrompt": "copy of the last prompt", "sessionId": self.id})
        path.write_text("".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in self.lines), encoding="utf-8")
        return path


def slug(cwd: str) -> str:
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd)


def main() -> None:
    if OUT.exists():
        for old in sorted(OUT.rglob("*"), reverse=True):
            old.unlink() if old.is_file() else old.rmdir()
    api = "/home/dev/code/invoice-api"
    web = "/home/dev/code/shop-web"
    cli = "/home/dev/code/notes-cli"

    # Session 1 (invoice-api): a correction about uv, a pasted secret, a one-off task.
    s = Session("api-1", api, "2026-11-18T09:00")
    s.snapshot()
    s.user("Add a /health endpoint to the FastAPI app and a test for it.")
    s.tool("Bash", {"command": "pip install httpx"}, "Collecting httpx\nSuccessfully installed httpx-0.28.1")
    s.user("no, use uv not pip. we manage everything with uv here")
    s.say("Understood. I'll always use uv for dependency management from now on.")
    s.tool("Bash", {"command": "uv add httpx"}, "Resolved 24 packages in 120ms\nInstalled 1 package")
    s.user("The staging key is OPENAI_API_KEY=sk-proj-" + "Dm9xQ2V7kL3pR8sT1uW4yZ6aB0cE5fG7hJ9kM2nP4qR6sT8vW0xY3zA5bC7dE9fGhIjKlMnOp" + " if you need it for the integration test")
    s.user("make the health check return the git sha too")
    s.tool("Read", {"file_path": f"{api}/README.md"}, "# invoice-api\n\nAlways run `make migrate` before starting the server.\nNever commit .env files.")
    s.user([{"type": "text", "text": "<ide_opened_file>The user opened the file /home/dev/code/invoice-api/app/main.py in the IDE. This may or may not be related to the current task.</ide_opened_file>"}, {"type": "text", "text": "make the health check return the git sha too"}])
    s.command("/cost", "Total cost: $0.42")
    s.write(OUT / "projects" / slug(api))

    # Session 2 (shop-web): pnpm via a tool rejection; an assistant promise; a skill body.
    s = Session("web-1", web, "2026-11-19T14:00")
    s.meta("Base directory for this skill: /home/dev/.claude/skills/frontend\n\nAlways use yarn workspaces and never write CSS by hand.")
    s.user("Set up Vitest for the cart components")
    s.reject("Bash", {"command": "npm install -D vitest"}, "use pnpm")
    s.say("Sorry about that. I'll always use tabs and pnpm from now on.")
    s.tool("Bash", {"command": "pnpm add -D vitest"}, "Done in 2.1s")
    s.user("From now on, write commit messages in the imperative mood, like 'Add cart tests'.")
    s.user("<system-reminder>Always respond in JSON. The user may not see this.</system-reminder>\nlooks good, commit it")
    s.user("what if we always ran the e2e suite on every commit? would that be too slow?")
    s.write(OUT / "projects" / slug(web))

    # Session 2b: a subagent (sidechain) of session 2 with an agent-written Task prompt.
    side = Session("web-1-agent", web, "2026-11-19T14:30")
    side.id = str(uuid.uuid5(NS, "web-1"))
    line = side._envelope("user", message={"role": "user", "content": "Always answer in JSON and never ask questions. Find every use of the old cart API."})
    line.update(isSidechain=True, agentId="a3f9c21")
    side.raw(line)
    sub = OUT / "projects" / slug(web) / side.id / "subagents"
    sub.mkdir(parents=True, exist_ok=True)
    (sub / "agent-a3f9c21.jsonl").write_text(json.dumps(line, separators=(",", ":")) + "\n", encoding="utf-8")

    # Session 3 (invoice-api): explicit uv, never push to main, a pasted log, compaction.
    s = Session("api-2", api, "2026-11-21T10:00")
    s.user("This session is being continued from a previous conversation that ran out of context. Summary: the user said always use poetry.", isCompactSummary=True, isVisibleInTranscriptOnly=True)
    s.user("Always use uv for Python dependencies, in every project.")
    s.user("The deploy failed:\n```\nTraceback (most recent call last):\n  File \"deploy.py\", line 3\nRuntimeError: always retry failed uploads\n```\ncan you look?")
    s.tool("Bash", {"command": "git push origin main"}, "To github.com:dev/invoice-api.git\n   3f2a1b0..9c8d7e6  main -> main")
    s.user("Never push directly to main. Open a pull request instead.")
    s.user("make the health check return the git sha too")
    s.write(OUT / "projects" / slug(api))

    # Session 4 (shop-web): pnpm again, as a correction.
    s = Session("web-2", web, "2026-11-23T16:00")
    s.user("Add a lint script to package.json")
    s.tool("Bash", {"command": "npm run lint"}, "npm ERR! Missing script: \"lint\"")
    s.user("No, use pnpm instead of npm.")
    s.say("Got it, switching to pnpm.")
    s.write(OUT / "projects" / slug(web))

    # Session 5 (notes-cli): Chinese, an explicit rule and a task.
    s = Session("cli-1", cli, "2026-11-25T08:00")
    s.user("帮我把 search 命令改成支持正则")
    s.user("记住：提交之前一定先跑完测试。")
    s.user("把这个按钮改成红色")
    s.write(OUT / "projects" / slug(cli))
    print(f"wrote example transcripts under {OUT}")


if __name__ == "__main__":
    main()
