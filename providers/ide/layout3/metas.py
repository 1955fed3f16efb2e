"""What a Cursor 3.x database says about each conversation besides its messages: project,
model, times, parent and title (`conversation_metas`, from the composers `headers` read)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final, NamedTuple

from codeburn.providers.ide.layout3.headers import Composer
from codeburn.providers.ide.paths import workspace_storage_dir
from codeburn.providers.ide.workspaces import folder_of, path_project, project_name
from codeburn.providers.pricing import canonical_model

_NO_FOLDER: Final = re.compile(r"^(empty-window|\d{13})$")
_WORKSPACE_ID: Final = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9._-]*$")  # a folder name, never a path


class ConversationMeta(NamedTuple):
    """What the database says about one conversation, besides its messages."""

    project: str | None
    model: str | None  # composerData.modelConfig.modelName (`default` → cursor-auto)
    created_ms: int | None
    updated_ms: int | None
    parent_id: str | None  # subagent → parent composer
    title: str | None = None  # the composer's name


def _workspace_project(db_path: Path, workspace_id: str, memo: dict[str, str | None]) -> str | None:
    if workspace_id not in memo:
        folder = None
        if _WORKSPACE_ID.match(workspace_id) and not _NO_FOLDER.match(workspace_id):
            folder = folder_of(workspace_storage_dir(db_path) / workspace_id / "workspace.json")
        memo[workspace_id] = project_name(folder) if folder else None
    return memo[workspace_id]


# what `conversation_metas` made: (the composers, each one's own project, their metas)
MetasMade = tuple[dict[str, Composer], dict[str, str | None], dict[str, ConversationMeta]]


def conversation_metas(
    composers: dict[str, Composer],
    db_path: Path,
    workspace_projects: dict[str, str],
    before: MetasMade | None = None,
) -> MetasMade:
    """Project (issue 8 §4: header/composerData path → workspaceId's workspace.json →
    trackedGitRepos → workspace databases; subagents take their parent's), model and times.
    `before`: what a pass made with the same workspace storage and project map: a composer
    that is the same object as then (and its parent) keeps its meta (so a refresh does not
    make every meta again)."""
    was, own_was, made = before if before is not None else ({}, {}, {})
    memo: dict[str, str | None] = {}
    own: dict[str, str | None] = {}
    for cid, comp in composers.items():
        if was.get(cid) is comp:
            own[cid] = own_was[cid]
            continue
        project = comp.folder
        if project is None and comp.workspace_id:
            project = _workspace_project(db_path, comp.workspace_id, memo)
        if project is None and comp.tracked_repo:
            project = path_project(comp.tracked_repo)
        own[cid] = project or workspace_projects.get(cid)
    metas: dict[str, ConversationMeta] = {}
    for cid, comp in composers.items():
        parent = comp.parent_id
        kept = made.get(cid)
        if (
            kept is not None
            and was.get(cid) is comp
            and (parent is None or parent == cid or was.get(parent) is composers.get(parent))
        ):
            metas[cid] = kept
            continue
        project = own[cid]
        if parent is not None and parent != cid:
            project = own.get(parent) or workspace_projects.get(parent) or project
        model = canonical_model(comp.model) if comp.model else None
        metas[cid] = ConversationMeta(
            project, model, comp.created_ms, comp.updated_ms, parent, comp.title
        )
    return composers, own, metas
