"""Project names people read (issue 17 item 5, docs/local-data.md): folder names told apart by their
parents, "(no project)" for no workspace; the slug stays the JSON's `project`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from codeburn.cache.daily_cache import daily_path
from codeburn.providers.ide import workspaces
from codeburn.providers.localtime import iso_utc, now_ms
from codeburn.providers.samples.profile_writer import ProfileWriter
from codeburn.server.cli.main import main
from codeburn.server.service.projects import NO_PROJECT, ProjectNames, folder_names, slug_name
from tests.real_cursor import copy_sample, report
from tests.usage_fixtures import at, days_ago, isolated_env

# Reads the clock; the tests marked `clock` run again at each moment of tests/clock.py.
pytestmark = pytest.mark.any_moment


# Under a folder of their own: the process-wide slug → folder memo is shared by the suite.
WORK_API = "/srv/names-test/work/api"
OSS_API = "/srv/names-test/oss/api"
WEB_APP = "/srv/names-test/web-app"  # its slug is also the one of /srv/names/test/web/app


def test_folder_names_take_as_much_parent_path_as_tells_them_apart() -> None:
    remote = "vscode-remote://ssh-remote+box/home/me/web-app"
    names = folder_names(
        ["/home/me/work/api", "/home/me/oss/api", "/home/me/web-app", "/a/x/svc", "/x/svc", remote]
    )
    assert names == {
        "/home/me/work/api": "work/api",
        "/home/me/oss/api": "oss/api",
        "/home/me/web-app": "web-app",
        "/a/x/svc": "/a/x/svc",  # one is the other's tail: both in full
        "/x/svc": "/x/svc",
        remote: "web-app (ssh-remote+box)",
    }
    assert folder_names(["C:\\Users\\me\\app", "/"]) == {"C:\\Users\\me\\app": "app", "/": "/"}
    # A top-level folder is named like any other, unless another folder ends with it.
    assert folder_names(["/root", "/home/me/app"]) == {"/root": "root", "/home/me/app": "app"}
    assert folder_names(["/app", "/home/me/app"]) == {"/app": "/app", "/home/me/app": "me/app"}


@pytest.mark.parametrize(
    ("slug", "name"),
    [
        ("-home-liam", "liam"),  # a home folder: its own name
        ("-root", "root"),
        ("-home-dev-web-app", "web-app"),  # without the home prefix
        ("-Users-ann-code-api", "code-api"),
        ("-C-Users-ann-app", "app"),
        ("-root-srv", "srv"),
        ("-srv-app", "srv-app"),  # no home: the slug without its leading `-`
        ("-rooted-x", "rooted-x"),
    ],
)
def test_a_folder_known_only_by_its_slug_is_named_from_it(slug: str, name: str) -> None:
    assert slug_name(slug) == name
    assert ProjectNames({}).fields(slug) == {"project": slug, "name": name, "path": None}


def test_unknown_folder_is_named_from_its_slug_and_no_workspace_shows_no_project() -> None:
    names = ProjectNames({"-home-me-app": "/home/me/app"})
    assert names.fields("-home-me-app") == {
        "project": "-home-me-app",
        "name": "app",
        "path": "/home/me/app",
    }
    assert names.fields("-gone-app") == {"project": "-gone-app", "name": "gone-app", "path": None}
    assert names.fields("cursor") == {"project": "cursor", "name": NO_PROJECT, "path": None}
    assert names.name("Cursor (imported)") == "Cursor (imported)"


def _answer(tmp_path: Path, conv: str, day_offset: int, model: str = "gpt-5") -> None:
    day = days_ago(day_offset)
    # 10:00 that day, or half an hour ago today: a status counts today up to the clock
    asked = at(day, 10) if day_offset else now_ms() - 30 * 60_000
    with ProfileWriter(tmp_path / "Cursor") as p:
        p.bubble(conv, f"{conv}-1", role="user", text="q" * 40, created_at=iso_utc(asked))
        p.bubble(
            conv,
            f"{conv}-2",
            role="assistant",
            text="r" * 200,
            created_at=iso_utc(asked + 60_000),
            model=model,
        )


@pytest.fixture
def four_projects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two folders named `api`, one whose name holds `-`, one conversation without a workspace."""
    isolated_env(tmp_path, monkeypatch)
    for conv in ("c-work", "c-oss", "c-web", "c-none"):
        _answer(tmp_path, conv, 3)
    with ProfileWriter(tmp_path / "Cursor") as p:
        p.workspace("w-work", folder=f"file://{WORK_API}", composers=["c-work"])
        p.workspace("w-oss", folder=f"file://{OSS_API}", composers=["c-oss"])
        p.workspace("w-web", folder=f"file://{WEB_APP}", composers=["c-web"])
    return p.db_path


def _report(capsys: pytest.CaptureFixture[str], db: Path, *extra: str) -> dict:
    args = ["report", "--format", "json", "--cursor-db", str(db), "--from", days_ago(3).isoformat()]
    assert main([*args, *extra]) == 0
    return json.loads(capsys.readouterr().out)


def _rows(report: dict) -> dict[str, tuple[str, str | None]]:
    return {p["project"]: (p["name"], p["path"]) for p in report["projects"]}


EXPECTED = {
    "-srv-names-test-work-api": ("work/api", WORK_API),
    "-srv-names-test-oss-api": ("oss/api", OSS_API),
    "-srv-names-test-web-app": ("web-app", WEB_APP),
    "cursor": (NO_PROJECT, None),
}


@pytest.mark.clock
def test_report_json_keeps_the_slug_and_adds_name_and_path(
    four_projects: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _rows(_report(capsys, four_projects)) == EXPECTED


@pytest.mark.clock
def test_text_report_shows_names(four_projects: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["report", "--cursor-db", str(four_projects), "--from", days_ago(3).isoformat()]
    assert main(args) == 0
    out = capsys.readouterr().out
    for name in ("work/api", "oss/api", "web-app", NO_PROJECT):
        assert f" {name} " in out or f"\n{name} " in out
    assert "-srv-names-test" not in out
    assert "cursor " not in out.split("Project")[1]


@pytest.mark.clock
def test_sealed_days_keep_their_folders_without_any_read(
    four_projects: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A report of sealed days only reads no source: the folders come from the daily cache,
    also once the workspaces are gone (a fresh process: nothing named in memory)."""
    first = _report(capsys, four_projects)
    shutil.rmtree(four_projects.parent.parent / "workspaceStorage")
    monkeypatch.setattr(workspaces, "_NAMED", {})
    sealed_only = _report(capsys, four_projects, "--to", days_ago(1).isoformat())
    assert _rows(sealed_only) == _rows(first) == EXPECTED


@pytest.mark.clock
def test_sealed_day_without_a_known_folder_is_named_from_its_slug(
    four_projects: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    """A daily file written before folders were kept: a name read from the slug, `path: null`."""
    _report(capsys, four_projects)
    file = daily_path(tmp_path / "cache")
    raw = json.loads(file.read_text())
    assert raw["paths"]
    del raw["paths"]
    file.write_text(json.dumps(raw))
    monkeypatch.setattr(workspaces, "_NAMED", {})
    rows = _rows(_report(capsys, four_projects, "--to", days_ago(1).isoformat()))
    assert rows == {
        "-srv-names-test-work-api": ("srv-names-test-work-api", None),
        "-srv-names-test-oss-api": ("srv-names-test-oss-api", None),
        "-srv-names-test-web-app": ("srv-names-test-web-app", None),
        "cursor": (NO_PROJECT, None),
    }


@pytest.mark.clock
def test_todays_figures_from_the_results_cache_keep_their_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unchanged database is answered from the results cache (no read): its folders too."""
    isolated_env(tmp_path, monkeypatch)
    _answer(tmp_path, "c-today", 0)
    with ProfileWriter(tmp_path / "Cursor") as p:
        p.workspace("w-today", folder=f"file://{WEB_APP}", composers=["c-today"])
    args = ["report", "--format", "json", "--cursor-db", str(p.db_path), "--period", "today"]
    assert main(args) == 0
    first = json.loads(capsys.readouterr().out)
    monkeypatch.setattr(workspaces, "_NAMED", {})
    monkeypatch.setattr(workspaces, "read_project_map", lambda root: pytest.fail("read again"))
    assert main(args) == 0
    again = json.loads(capsys.readouterr().out)
    assert _rows(again) == _rows(first) == {"-srv-names-test-web-app": ("web-app", WEB_APP)}


@pytest.mark.clock
def test_status_names_this_months_top_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    isolated_env(tmp_path, monkeypatch)
    _answer(tmp_path, "c-top", 0, model="claude-4.6-sonnet")
    _answer(tmp_path, "c-other", 0)
    with ProfileWriter(tmp_path / "Cursor") as p:
        p.workspace("w-top", folder=f"file://{WEB_APP}", composers=["c-top"])
    assert main(["status", "--format", "json", "--cursor-db", str(p.db_path)]) == 0
    top = json.loads(capsys.readouterr().out)["topProject"]
    assert {k: top[k] for k in ("project", "name", "path")} == {
        "project": "-srv-names-test-web-app",
        "name": "web-app",
        "path": WEB_APP,
    }
    assert top["cost"] > 0


def test_real_transcripts_and_cli_stores_show_folder_names(tmp_path: Path) -> None:
    """Real files (tests/data/real-cursor): legacy transcripts under `projects/home-liam/`,
    whose folder no reader knows, and Cursor Agent CLI stores whose system prompt names
    `/root` (the md5 of `/root` names their `chats/` folder)."""
    home = copy_sample("t01", tmp_path / "t") / "home" / ".cursor"
    out, _ = report("t01", tmp_path / "t", home=home)
    assert [(p["project"], p["name"], p["path"]) for p in out["projects"]] == [
        ("-home-liam", "liam", None)
    ]
    home = copy_sample("c01", tmp_path / "c") / "home" / ".cursor"
    out, _ = report("c01", tmp_path / "c", home=home)
    assert [(p["project"], p["name"], p["path"]) for p in out["projects"]] == [
        ("-root", "root", "/root")
    ]
