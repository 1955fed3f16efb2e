/**
 * Interpreter discovery with a fake PATH, a fake home and shim interpreters: small scripts that
 * answer the version probe with a chosen version and otherwise exec the real Python.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";

import {
  describeTried,
  discover,
  expandPath,
  findInterpreter,
  installPlaces,
  PythonNotFoundError,
  pythonChoices,
  serverLaunch,
} from "../src/view/python";

const REAL_PYTHON = execFileSync(process.env.CODEBURN_PYTHON ?? "python3", ["-c", "import sys; print(sys.executable)"], {
  encoding: "utf8",
}).trim();

function tmp(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A shim: answers `-c <probe>` with `version` (and its own path), else runs the real Python. */
function shim(dir: string, name: string, version: string): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  writeFileSync(
    file,
    `#!/bin/sh\nif [ "$1" = "-c" ]; then echo ${version}; echo "$0"; exit 0; fi\nexec "${REAL_PYTHON}" "$@"\n`,
  );
  chmodSync(file, 0o755);
  return file;
}

/** An interpreter that cannot run: the macOS developer-tools stub, say. */
function failing(dir: string, name: string, code: number, message: string): string {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, name);
  writeFileSync(file, `#!/bin/sh\necho "${message}" >&2\nexit ${code}\n`);
  chmodSync(file, 0o755);
  return file;
}

/** A package tree whose `codeburn.server` prints `word`, to see which code a launch runs. */
function fakeServerPackage(root: string, word: string): string {
  const pkg = join(root, "codeburn", "server");
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(pkg, "__init__.py"), "");
  writeFileSync(join(pkg, "__main__.py"), `import sys\nprint("${word}", "%d.%d" % sys.version_info[:2])\n`);
  return root;
}

const quiet = { places: [], pythonExtension: async () => undefined };

test("python3 from the real PATH is found and is at least 3.11", async () => {
  const found = await findInterpreter({ configured: "", env: process.env, places: [] });
  const [major, minor] = found.version.split(".").map(Number);
  assert.ok(major === 3 && minor >= 11, found.version);
});

test("a PATH with only a 3.9 python3 plus a 3.12 in a Homebrew-like folder starts the server with 3.12", async () => {
  const root = tmp("cb-brew-");
  shim(join(root, "usr-bin"), "python3", "3.9.6");
  const brew = shim(join(root, "opt-homebrew-bin"), "python3.12", "3.12.4");
  const found = await findInterpreter({
    configured: "",
    env: { PATH: join(root, "usr-bin") },
    places: [{ dir: join(root, "opt-homebrew-bin"), source: "Homebrew" }],
  });
  assert.deepEqual(found, { command: brew, args: [], version: "3.12.4", source: "Homebrew" });
  // And that launch really runs the bundled server package through the shim.
  const launch = serverLaunch(found, fakeServerPackage(join(root, "bundled"), "bundled"), { PATH: "/usr/bin:/bin" });
  assert.equal(execFileSync(launch.command, launch.args, { env: launch.env, encoding: "utf8" }).split(" ")[0], "bundled");
});

test("PATH order: python3.14 … python3.11 before python3 and python, newest first", async () => {
  const dir = tmp("cb-order-");
  shim(dir, "python3", "3.9.6");
  shim(dir, "python", "3.13.0");
  const p311 = shim(dir, "python3.11", "3.11.9");
  const p313 = shim(dir, "python3.13", "3.13.1");
  let found = await findInterpreter({ configured: "", env: { PATH: dir }, ...quiet });
  assert.equal(found.command, p313);
  const { tried } = await discover({ configured: "", env: { PATH: dir }, ...quiet });
  assert.equal(tried.length, 1, "stops at the first that qualifies");
  // Only older ones ahead of it: python3.11 wins over python3 (3.9) and python (later in order).
  const other = tmp("cb-order2-");
  shim(other, "python3", "3.9.6");
  const only311 = shim(other, "python3.11", "3.11.2");
  found = await findInterpreter({ configured: "", env: { PATH: other }, ...quiet });
  assert.equal(found.command, only311);
  assert.notEqual(p311, only311);
});

test("the Python extension's interpreter comes first; one that fails lets the search go on", async () => {
  const root = tmp("cb-ext-");
  const onPath = shim(join(root, "bin"), "python3", "3.12.0");
  const fromExtension = shim(join(root, "venv", "bin"), "python", "3.13.2");
  const env = { PATH: join(root, "bin") };
  const found = await findInterpreter({ configured: "", env, places: [], pythonExtension: async () => fromExtension });
  assert.deepEqual(found, { command: fromExtension, args: [], version: "3.13.2", source: "Python extension" });
  const broken = failing(join(root, "venv2", "bin"), "python", 2, "No module named encodings");
  const fallback = await discover({ configured: "", env, places: [], pythonExtension: async () => broken });
  assert.equal(fallback.chosen?.command, onPath);
  assert.equal(fallback.tried[0].candidate.source, "Python extension");
  assert.equal(fallback.tried[0].result.kind, "failed");
});

test("a candidate that fails to run is reported with its path and exit code, not as absent", async () => {
  const dir = tmp("cb-stub-");
  const stub = failing(dir, "python3", 1, "xcode-select: note: no developer tools were found");
  const old = shim(dir, "python", "3.10.4");
  await assert.rejects(findInterpreter({ configured: "", env: { PATH: dir }, ...quiet }), (error: Error) => {
    assert.ok(error instanceof PythonNotFoundError);
    assert.match(
      error.message,
      new RegExp(`${stub} \\(PATH\\) failed with exit code 1 \\(xcode-select: note: no developer tools were found\\)`),
    );
    assert.ok(error.message.includes(`${old} (PATH) is Python 3.10.4`), error.message);
    assert.match(error.message, /CodeBurn: Select Python Interpreter/);
    assert.equal(error.tried.length, 2);
    return true;
  });
  const empty = tmp("cb-empty-");
  await assert.rejects(
    findInterpreter({ configured: "", env: { PATH: empty }, ...quiet }),
    /there is no python3 or python on PATH or in the usual install places/,
  );
});

test("a program that prints no version is a failure with what it printed", async () => {
  const dir = tmp("cb-garbage-");
  const file = join(dir, "python3");
  writeFileSync(file, "#!/bin/sh\necho 'Python was not found; run without arguments to install'\n");
  chmodSync(file, 0o755);
  const { tried } = await discover({ configured: "", env: { PATH: dir }, ...quiet });
  assert.equal(tried[0].result.kind, "failed");
  assert.match(JSON.stringify(tried[0].result), /printed \\"Python was not found/);
});

test("the setting alone decides when it is set: too old, missing, or good", async () => {
  const dir = tmp("cb-py-");
  shim(join(dir, "path"), "python3", "3.12.1"); // a good one on PATH is not used instead
  const env = { PATH: join(dir, "path") };
  const old = shim(dir, "python-old", "3.9.2");
  await assert.rejects(findInterpreter({ configured: old, env, ...quiet }), (error: Error) => {
    assert.ok(error instanceof PythonNotFoundError);
    assert.match(error.message, /is Python 3\.9\.2; CodeBurn needs Python 3\.11 or newer/);
    return true;
  });
  await assert.rejects(
    findInterpreter({ configured: join(dir, "missing"), env, ...quiet }),
    /which could not be started \(ENOENT\)/,
  );
  const broken = failing(dir, "python-broken", 3, "Fatal Python error: init_fs_encoding");
  await assert.rejects(findInterpreter({ configured: broken, env, ...quiet }), /failed with exit code 3 \(Fatal Python error/);
  const good = shim(dir, "python-new", "3.13.1");
  assert.deepEqual(await findInterpreter({ configured: good, env, ...quiet }), {
    command: good,
    args: [],
    version: "3.13.1",
    source: "setting",
  });
});

test("the same interpreter reached twice (a symlink on PATH) is probed once", async () => {
  const root = tmp("cb-dup-");
  const real = shim(join(root, "a"), "python3", "3.9.1");
  mkdirSync(join(root, "b"));
  symlinkSync(real, join(root, "b", "python3.12"));
  const { tried } = await discover({ configured: "", env: { PATH: `${join(root, "b")}:${join(root, "a")}` }, ...quiet });
  assert.equal(tried.length, 1);
});

test("Windows: py -3 after PATH, run afterwards as the interpreter it started", async () => {
  const dir = tmp("cb-win-");
  const py = join(dir, "py.exe");
  writeFileSync(py, `#!/bin/sh\nif [ "$1" = "-3" ] && [ "$2" = "-c" ]; then echo 3.12.7; echo "${REAL_PYTHON}"; exit 0; fi\nexit 9\n`);
  chmodSync(py, 0o755);
  failing(dir, "python.exe", 9, ""); // the Microsoft Store alias (9009 there; POSIX keeps 8 bits)
  const { chosen, tried } = await discover({
    configured: "",
    env: { PATH: dir, PATHEXT: ".EXE" },
    platform: "win32",
    ...quiet,
  });
  assert.deepEqual(tried.map((t) => [t.candidate.source, t.result.kind]), [["PATH", "failed"], ["py launcher", "ok"]]);
  assert.deepEqual(chosen, { command: REAL_PYTHON, args: [], version: "3.12.7", source: "py launcher" });
  assert.match(JSON.stringify(tried[0].result), /"exitCode":9,/);
});

test("macOS: the developer-tools stub is reported as failing without being run", async () => {
  const root = tmp("cb-mac-");
  const marker = join(root, "ran");
  const stub = join(root, "usr-bin", "python3");
  mkdirSync(dirname(stub), { recursive: true });
  writeFileSync(stub, `#!/bin/sh\necho ran > "${marker}"\nexit 1\n`);
  chmodSync(stub, 0o755);
  const brew = shim(join(root, "brew"), "python3.12", "3.12.4");
  const toolchain = join(root, "CommandLineTools", "python3");
  const options = {
    configured: "",
    env: { PATH: join(root, "usr-bin") },
    platform: "darwin" as const,
    places: [{ dir: join(root, "brew"), source: "Homebrew" }],
    pythonExtension: async () => undefined,
    macStubs: { stubs: [stub], toolchains: [toolchain] },
  };
  const { chosen, tried } = await discover(options);
  assert.equal(chosen?.command, brew);
  assert.match(describeTried(tried[0]), /python3 \(PATH\) failed \(the macOS stub of the command line developer tools/);
  assert.ok(!existsSync(marker), "the stub was run");
  // With the developer tools installed, /usr/bin/python3 is a real Python and is run.
  shim(dirname(toolchain), "python3", "3.9.6");
  await discover(options);
  assert.ok(existsSync(marker));
});

test("the usual install places: Homebrew, /usr/local/bin, pyenv, uv newest first", () => {
  const home = tmp("cb-home-");
  const uv = join(home, ".local", "share", "uv", "python");
  for (const name of ["cpython-3.11.9-macos-aarch64-none", "cpython-3.13.1-macos-aarch64-none", "cpython-3.12.4-macos-aarch64-none", ".lock"]) {
    mkdirSync(join(uv, name), { recursive: true });
  }
  const places = installPlaces("darwin", {}, home);
  assert.deepEqual(places.slice(0, 6), [
    { dir: "/opt/homebrew/bin", source: "Homebrew" },
    { dir: "/usr/local/bin", source: "/usr/local/bin" },
    { dir: join(home, ".pyenv", "shims"), source: "pyenv" },
    { dir: join(uv, "cpython-3.13.1-macos-aarch64-none", "bin"), source: "uv" },
    { dir: join(uv, "cpython-3.12.4-macos-aarch64-none", "bin"), source: "uv" },
    { dir: join(uv, "cpython-3.11.9-macos-aarch64-none", "bin"), source: "uv" },
  ]);
  const custom = installPlaces("linux", { PYENV_ROOT: "/opt/pyenv", UV_PYTHON_INSTALL_DIR: join(home, "none") }, home);
  assert.ok(custom.some((p) => p.dir === "/opt/pyenv/shims"));
  assert.ok(custom.some((p) => p.dir === "/home/linuxbrew/.linuxbrew/bin"));
  assert.ok(!custom.some((p) => p.source === "uv"));
});

test("Pick Python… rows: every interpreter that ran, with versions, usable ones first", async () => {
  const dir = tmp("cb-pick-");
  shim(dir, "python3", "3.9.6");
  shim(dir, "python", "3.10.2");
  const brew = shim(join(dir, "brew"), "python3.12", "3.12.4");
  const brew13 = shim(join(dir, "brew"), "python3.13", "3.13.0");
  failing(join(dir, "brew"), "python3.11", 1, "broken");
  const { tried } = await discover(
    { configured: "", env: { PATH: dir }, places: [{ dir: join(dir, "brew"), source: "Homebrew" }], pythonExtension: async () => undefined },
    true,
  );
  assert.equal(tried.length, 5);
  const rows = pythonChoices(tried);
  assert.deepEqual(
    rows.map((r) => [r.label, r.command, r.usable]),
    [
      ["Python 3.13.0", brew13, true],
      ["Python 3.12.4", brew, true],
      ["Python 3.10.2", join(dir, "python"), false],
      ["Python 3.9.6", join(dir, "python3"), false],
    ],
  );
  assert.match(rows[3].detail ?? "", /too old, CodeBurn needs 3\.11\+/);
});

test("~ and ${env:NAME} in the setting", () => {
  assert.equal(expandPath("${env:PYROOT}/bin/python", { PYROOT: "/opt/py" }), "/opt/py/bin/python");
  assert.equal(expandPath("~/py", {}, "/home/me"), "/home/me/py");
});

test("the bundled libraries win over the user's PYTHONPATH and the workspace", () => {
  const root = tmp("cb-launch-");
  fakeServerPackage(join(root, "bundled"), "bundled");
  fakeServerPackage(join(root, "other"), "other");
  const launch = serverLaunch(
    { command: REAL_PYTHON, version: "3.11.0" },
    join(root, "bundled"),
    { ...process.env, PYTHONPATH: join(root, "other") },
  );
  assert.deepEqual(launch.args, ["-P", "-m", "codeburn.server"]);
  // Run from the folder holding the other copy: neither the cwd nor PYTHONPATH may shadow ours.
  const out = execFileSync(launch.command, launch.args, { env: launch.env, cwd: join(root, "other") });
  assert.equal(out.toString().trim().split(" ")[0], "bundled");
});
