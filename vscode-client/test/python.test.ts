import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";

import { expandPath, findInterpreter, PythonNotFoundError, serverLaunch } from "../src/view/python";

function fakePython(dir: string, name: string, version: string): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  writeFileSync(file, `#!/bin/sh\necho ${version}\n`);
  chmodSync(file, 0o755);
  return file;
}

test("python3 from PATH is found and is at least 3.11", async () => {
  const found = await findInterpreter("", process.env);
  const [major, minor] = found.version.split(".").map(Number);
  assert.ok(major === 3 && minor >= 11, found.version);
});

test("a configured interpreter that is too old, or cannot run, is refused with the fix", async () => {
  const dir = mkdtempSync(join(tmpdir(), "cb-py-"));
  const old = fakePython(dir, "python-old", "3.9.2");
  await assert.rejects(findInterpreter(old, process.env), (error: Error) => {
    assert.ok(error instanceof PythonNotFoundError);
    assert.match(error.message, /is Python 3\.9\.2; CodeBurn needs Python 3\.11 or newer/);
    return true;
  });
  await assert.rejects(findInterpreter(join(dir, "missing"), process.env), /could not be run/);
  const good = fakePython(dir, "python-new", "3.13.1");
  assert.deepEqual(await findInterpreter(good, process.env), { command: good, version: "3.13.1" });
});

test("PATH holding only old Pythons, or none, gives a clear message", async () => {
  const dir = mkdtempSync(join(tmpdir(), "cb-path-"));
  fakePython(dir, "python3", "3.8.10");
  fakePython(dir, "python", "3.10.4");
  await assert.rejects(findInterpreter("", { PATH: dir }), (error: Error) => {
    assert.match(error.message, /python3 is Python 3\.8\.10, python is Python 3\.10\.4/);
    assert.match(error.message, /codeburn\.python\.interpreter/);
    return true;
  });
  const empty = mkdtempSync(join(tmpdir(), "cb-empty-"));
  await assert.rejects(findInterpreter("", { PATH: empty }), /neither python3 nor python is on PATH/);
});

test("~ and ${env:NAME} in the setting", () => {
  assert.equal(expandPath("${env:PYROOT}/bin/python", { PYROOT: "/opt/py" }), "/opt/py/bin/python");
  assert.ok(!expandPath("~/py").startsWith("~"));
});

test("the bundled libraries win over the user's PYTHONPATH and the workspace", () => {
  const root = mkdtempSync(join(tmpdir(), "cb-launch-"));
  for (const [where, word] of [["bundled", "bundled"], ["other", "other"]]) {
    const pkg = join(root, where, "codeburn", "server");
    mkdirSync(pkg, { recursive: true });
    writeFileSync(join(pkg, "__init__.py"), "");
    writeFileSync(join(pkg, "__main__.py"), `print("${word}")\n`);
  }
  const launch = serverLaunch(
    { command: "python3", version: "3.11.0" },
    join(root, "bundled"),
    { ...process.env, PYTHONPATH: join(root, "other") },
  );
  assert.deepEqual(launch.args, ["-P", "-m", "codeburn.server"]);
  // Run from the folder holding the other copy: neither the cwd nor PYTHONPATH may shadow ours.
  const out = execFileSync(launch.command, launch.args, { env: launch.env, cwd: join(root, "other") });
  assert.equal(out.toString().trim(), "bundled");
});
