"""Builds the real-editor test's fixture: a small Cursor profile, a usage export, and the figures
`codeburn status` reports for them before and after importing the export.

    python3 scripts/make_fixture.py OUT_DIR   (after `npm run package`, which fills bundled/libs)

Writes OUT_DIR/fixture.json = {"db", "oneDayDb", "csv", "before": <status>, "after": <status>,
"oneDay": <status>, "conversations30": <n>, "claudeConfigDir", "codexHome", "threeTools":
<status>, "sharedProject": <name>} ("oneDayDb": a second profile with usage on today only, for the
breakdown's one-day chart, and "oneDay" its status; "conversations30": how many conversations the
last 30 days' report lists after the import, for the breakdown's Top conversations table;
"claudeConfigDir" and "codexHome": Claude Code and Codex histories from the project's sample
writer, in two of the profile's folders, and "threeTools" the status after the import with them
counted; "sharedProject": the project row of the last 30 days that all three tools share). The
profile comes from the project's sample generators; the figures from the project's CLI, each run
with a private cache and config folder, sync off, and Claude Code's and Codex's roots in OUT_DIR
(empty ones for the Cursor-only figures), so nothing outside OUT_DIR is read or written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

CLIENT = Path(__file__).resolve().parent.parent
LIBS = CLIENT / "bundled" / "libs"
sys.path.insert(0, str(LIBS))

from codeburn.providers.localtime import iso_utc, local_midnight_ms, today  # noqa: E402
from codeburn.providers.samples.agent_logs_writer import (  # noqa: E402
    AgentLogsSpec,
    write_agent_logs,
)
from codeburn.providers.samples.generator import (  # noqa: E402
    SampleSpec,
    generate_sample_profile,
    write_sample_export,
)
from codeburn.providers.samples.profile_writer import ProfileWriter  # noqa: E402

CLI = "import sys; from codeburn.server.cli.main import main; sys.exit(main())"


def cli(args: list[str], scratch: Path, tools: Path | None = None) -> str:
    """`codeburn ARGS` with the folders under `scratch`; Claude Code's and Codex's roots under
    `tools` (None: empty folders, never the developer's own ~/.claude and ~/.codex)."""
    roots = tools if tools is not None else scratch / "no-tools"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(LIBS), os.environ.get("PYTHONPATH", "")]),
        "CODEBURN_CACHE_DIR": str(scratch / "cache"),
        "CODEBURN_CONFIG_DIR": str(scratch / "config"),
        "CODEBURN_CURSOR_SYNC": "0",
        "CLAUDE_CONFIG_DIR": str(roots / "claude"),
        "CODEX_HOME": str(roots / "codex"),
    }
    env.pop("CODEBURN_CURSOR_DB", None)
    done = subprocess.run(
        [sys.executable, "-P", "-c", CLI, *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.exit(f"make_fixture: codeburn {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


def status(db: Path, scratch: Path, tools: Path | None = None) -> dict[str, Any]:
    out = cli(["status", "--format", "json", "--cursor-db", str(db), "--no-sync"], scratch, tools)
    result: dict[str, Any] = json.loads(out)
    return result


def report_30days(db: Path, scratch: Path, tools: Path | None = None) -> dict[str, Any]:
    args = ["report", "--period", "30days", "--format", "json", "--cursor-db", str(db), "--no-sync"]
    result: dict[str, Any] = json.loads(cli(args, scratch, tools))
    return result


def one_day_profile(root: Path, now_ms: int) -> Path:
    """A profile whose only usage is today (the breakdown's one-day case on any date)."""
    floor = local_midnight_ms(today()) + 1000
    with ProfileWriter(root) as p:
        for n in range(3):
            at = max(now_ms - (40 - 5 * n) * 60_000, floor)
            p.bubble(f"d{n}", "u", role="user", text="fix this " * 40, created_at=iso_utc(at))
            reply = "done " * 600
            p.bubble(
                f"d{n}",
                "a",
                role="assistant",
                text=reply,
                created_at=iso_utc(at + 1000),
                model="gpt-5",
            )
    return p.db_path


def three_tools(out: Path, db: Path, now_ms: int) -> dict[str, Any]:
    """Claude Code and Codex histories beside the profile (the sample writer's, in the profile's
    web-app and api-server folders, over the last 4 days), and the figures with all three tools
    counted, read into a cache of their own with no import: the editor reads them the same way
    (a fresh cache folder: days sealed without these logs keep their figures, docs/other-tools.md),
    and the Cursor-only figures above never see these logs."""
    tools = out / "tools"
    write_agent_logs(tools / "claude", tools / "codex", AgentLogsSpec(now_ms=now_ms, days=4))
    scratch = out / "expected-three-tools"
    counted = status(db, scratch, tools)
    ids = {"cursor", "claude-code", "codex"}
    found = {p["id"] for p in counted["month"].get("providers", [])}
    report = report_30days(db, scratch, tools)
    shared = [
        p["name"] for p in report["projects"] if ids <= {t["id"] for t in p.get("providers", [])}
    ]
    if counted["state"] != "ok" or not shared:
        sys.exit(f"make_fixture: no project of the last 30 days has all three tools ({found})")
    return {
        "claudeConfigDir": str(tools / "claude"),
        "codexHome": str(tools / "codex"),
        "threeTools": counted,
        "sharedProject": shared[0],
    }


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: make_fixture.py OUT_DIR")
    out = Path(sys.argv[1]).resolve()
    out.mkdir(parents=True, exist_ok=True)
    now_ms = time.time_ns() // 1_000_000
    spec = SampleSpec(
        seed=11, conversations=14, bubbles=(4, 12), days=6, workspaces=2, now_ms=now_ms
    )
    info = generate_sample_profile(out / "cursor", spec)
    # An export of the last two local days (up to a minute ago): importing it replaces the
    # local estimates of those days, so the figures move.
    midnight = datetime.now().astimezone().replace(hour=0, minute=0, second=0, microsecond=0)
    first_ms = int((midnight - timedelta(days=1)).timestamp() * 1000)
    csv = out / "usage-export.csv"
    rows = write_sample_export(csv, first_ms, now_ms - 60_000)
    scratch = out / "expected"
    before = status(info.db_path, scratch)
    cli(["import", "cursor", str(csv), "--format", "json"], scratch)
    after = status(info.db_path, scratch)
    if before["state"] != "ok" or after["state"] != "ok":
        sys.exit(f"make_fixture: unexpected states {before['state']} / {after['state']}")
    if (before["today"], before["month"]) == (after["today"], after["month"]):
        sys.exit("make_fixture: importing the export did not change the figures")
    conversations30 = len(report_30days(info.db_path, scratch)["conversations"])
    one_day = one_day_profile(out / "one-day" / "Cursor", now_ms)
    one_day_status = status(one_day, out / "expected-one-day")
    if one_day_status["state"] != "ok" or one_day_status["today"]["calls"] == 0:
        sys.exit(f"make_fixture: the one-day profile reads as {one_day_status}")
    fixture = {
        "db": str(info.db_path),
        "oneDayDb": str(one_day),
        "oneDay": one_day_status,
        "csv": str(csv),
        "rows": rows,
        "before": before,
        "after": after,
        "conversations30": conversations30,
        **three_tools(out, info.db_path, now_ms),
    }
    (out / "fixture.json").write_text(json.dumps(fixture, indent=2))
    print(
        json.dumps(
            {k: fixture[k] for k in ("db", "csv", "rows", "conversations30", "sharedProject")}
        )
    )


if __name__ == "__main__":
    main()
