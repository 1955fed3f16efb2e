"""How a read runs: one object chosen by the entry point and handed down (docs/architecture.md).

The CLI makes a one-shot plan, the language server a long-lived one; every reader asks the plan
what it may do — keep state for the next refresh, split its work across processes, write a
cache file now, behind its answer or once the command's answer is out — and domain code holds
none of those decisions. Tests choose a plan (`Plan(forks=False)`) instead of patching globals.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from codeburn.providers.background_writes import write_behind
from codeburn.providers.runtime import can_fork, detached, later


@dataclass(frozen=True, slots=True)
class Plan:
    """`long_lived`: a language server — a read keeps what a refresh reuses, and its cache files
    are written behind its answers; else a one-shot command — nothing is kept past a read, and
    the files are written once its answer is out, before it returns. `forks`: whether a read may
    split its work across processes; None: where it can (`runtime.can_fork`), and then only work
    of at least `split_rows`, `walk_rows` or `split_bytes`. The rest choose how a read of Cursor's
    database pages its rows (tests choose them to page a small profile)."""

    long_lived: bool = True
    forks: bool | None = None
    # How much work is worth a second process, where the plan forks (below it, forking and
    # sending the result back cost more than they save): bubbles (their older part read
    # aside) and the other tools' records to save (their state written aside), agent rows
    # (their stream walked aside), new bytes of the other tools' logs.
    # Tests choose less to split a small machine.
    split_rows: int = 20_000
    walk_rows: int = 20_000
    split_bytes: int = 128 * 1024 * 1024
    # Rows of Cursor's database per read: each page is its own short read transaction. The
    # bubble scan stops at the first page that keeps no row and holds one before its floor,
    # so a page must span more rows than Cursor writes out of time order.
    page_rows: int = 2_000
    # The most older bubbles a split read's child reads (the caller reads on past them); None:
    # its share of what the read reaches, a tenth more and a page.
    older_rows: int | None = None
    # Whether a whole walk of the agent stream reads its rows by ROWID instead of by key range;
    # None: where agent rows are a minority of the table (`stream_rows.by_rowid`).
    agents_by_rowid: bool | None = None
    # Whether a full parse reads Cursor 3.x's blobs in one pass shared by the roots and the agent
    # stream; None: where roots exist and bubbles are sparse (`FullParse._one_blob_pass`).
    one_blob_pass: bool | None = None

    def may_fork(self) -> bool:
        return can_fork() if self.forks is None else self.forks

    def save(self, name: str, work: Callable[[], object]) -> None:
        """A cache file nothing later in this read needs: written once a command's answer is
        out, behind a long-lived server's answer (`name` in its log), else now."""
        if not (later(work) or write_behind(name, work)):
            work()

    def behind(self, name: str, work: Callable[[], object]) -> None:
        """Work no answer waits for: behind a long-lived server's answer (on the thread that
        writes its cache files, `name` in its log), else now."""
        if not write_behind(name, work):
            work()

    def after_answer(self, work: Callable[[], object]) -> bool:
        """`work` queued for when a command's answer is out (True); False: the caller does it
        now (a long-lived server, whose next read may need it at once)."""
        return later(work)

    def detach(self, work: Callable[[], object], *, at_end: bool = False) -> bool:
        """`work` in another process (`runtime.detached`) where this plan forks, forked now or
        (`at_end`) once a command's answer is out; False: the caller does it itself."""
        return detached(work, may_fork=self.may_fork(), at_end=at_end)


ONE_SHOT = Plan(long_lived=False)  # a CLI command
LONG_LIVED = Plan()  # the language server (and a library caller's default)
