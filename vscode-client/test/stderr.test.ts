import assert from "node:assert/strict";
import { test } from "node:test";

import { isServerLogLine, StderrTail } from "../src/view/stderr";

test("the server's own log lines are recognised", () => {
  assert.ok(isServerLogLine("2026-11-30 12:48:16,608 INFO codeburn.server.lsp: reading Cursor data"));
  assert.ok(!isServerLogLine("Traceback (most recent call last):"));
});

test("the last problem is the exception line, not frames or info logs", () => {
  const tail = new StderrTail();
  for (const line of [
    "2026-11-30 12:48:16,608 INFO codeburn.server.lsp: starting",
    "Traceback (most recent call last):",
    '  File "/x/codeburn/server/lsp.py", line 3, in <module>',
    "    import nothing",
    "ModuleNotFoundError: No module named 'nothing'",
    "2026-11-30 12:48:16,700 INFO codeburn.server.lsp: bye",
    "",
  ]) {
    tail.push(line);
  }
  assert.equal(tail.lastProblem(), "ModuleNotFoundError: No module named 'nothing'");
  const python = new StderrTail(2);
  python.push("old");
  python.push("/usr/bin/python3: No module named codeburn.server.__main__");
  python.push("2026-11-30 12:48:16,700 DEBUG x: y");
  assert.equal(python.lastProblem(), "/usr/bin/python3: No module named codeburn.server.__main__");
  assert.equal(new StderrTail().lastProblem(), undefined);
});
