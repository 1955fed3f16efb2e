/**
 * Finds a Python ≥ 3.11 to run the language server and builds its launch description (the bundled
 * libraries first on `sys.path`). No `vscode` here: the Python extension's interpreter comes in as
 * a function, and tests use a fake PATH, a fake home and shim interpreters.
 *
 * Order (docs/editor.md): the setting `codeburn.python.interpreter` (when set, it alone decides); the
 * Python extension's active interpreter; `python3.14`…`python3.11`, `python3`, `python` on PATH;
 * `py -3` on Windows; the usual install places. The first that runs and is ≥ 3.11 wins.
 */

import { execFile } from "node:child_process";
import { accessSync, constants, readdirSync, realpathSync, statSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

import { PROTOCOL } from "../protocol";

export const MIN_PYTHON: readonly [number, number] = [3, 11];
const WANTED = `Python ${MIN_PYTHON.join(".")} or newer`;

/** Names looked up on PATH and in each install place, newest first. */
export const PYTHON_NAMES: readonly string[] = [
  "python3.14",
  "python3.13",
  "python3.12",
  "python3.11",
  "python3",
  "python",
];

/** Something that may be a Python: a command (absolute path or `py`) and its leading arguments. */
export interface Candidate {
  command: string;
  args: string[];
  /** Where it was found: "setting", "Python extension", "PATH", "py launcher", "Homebrew", … */
  source: string;
}

export type ProbeResult =
  | { kind: "ok"; version: string; executable: string }
  /** It started but exited non-zero, timed out, or printed no version. */
  | { kind: "failed"; exitCode: number | null; detail: string }
  /** It could not be started at all (no such file, not executable). */
  | { kind: "missing"; detail: string };

export interface Tried {
  candidate: Candidate;
  result: ProbeResult;
}

/** The interpreter the server runs with. */
export interface Interpreter {
  command: string;
  /** Arguments before `-P -m codeburn.server` (none unless it is a launcher such as `py -3`). */
  args?: string[];
  version: string;
  source?: string;
}

export class PythonNotFoundError extends Error {
  constructor(
    message: string,
    /** Every candidate looked at, in order, with what it did. */
    readonly tried: Tried[] = [],
  ) {
    super(message);
  }
}

export type Probe = (candidate: Candidate, env: NodeJS.ProcessEnv) => Promise<ProbeResult>;

export interface DiscoveryOptions {
  /** The raw `codeburn.python.interpreter` setting ("" = look for one). */
  configured: string;
  env: NodeJS.ProcessEnv;
  platform?: NodeJS.Platform;
  home?: string;
  /** The Python extension's active interpreter, when it is installed. */
  pythonExtension?: () => Promise<string | undefined>;
  /** The usual install places (default: installPlaces() for this platform). */
  places?: Place[];
  probe?: Probe;
  /** macOS: the developer-tools stubs, and where the real tools live (tests replace them). */
  macStubs?: MacStubs;
}

/**
 * On macOS `/usr/bin/python3` is a stub until the command line developer tools are installed, and
 * running it opens their installer: it is reported as failing without being run.
 */
export interface MacStubs {
  stubs: string[];
  toolchains: string[];
}

const MAC_STUBS: MacStubs = {
  stubs: ["/usr/bin/python3", "/usr/bin/python"],
  toolchains: [
    "/Library/Developer/CommandLineTools/usr/bin/python3",
    "/Applications/Xcode.app/Contents/Developer/usr/bin/python3",
  ],
};

function isMacStub(command: string, stubs: MacStubs): boolean {
  let real = command;
  try {
    real = realpathSync(command);
  } catch {
    return false;
  }
  return (
    (stubs.stubs.includes(command) || stubs.stubs.includes(real)) &&
    !stubs.toolchains.some((file) => isExecutableFile(file, "darwin"))
  );
}

/** A folder where Python installers put interpreters, and what to call it in messages. */
export interface Place {
  dir: string;
  source: string;
}

const PROBE_CODE = "import sys; print('%d.%d.%d' % sys.version_info[:3]); print(sys.executable)";
const PROBE_TIMEOUT_MS = 10_000;

function lastLine(text: string): string {
  return text.trim().split(/\r?\n/).pop()?.trim() ?? "";
}

/** Runs `<command> <args> -c PROBE_CODE`: the version and `sys.executable`, or why not. */
export const probePython: Probe = (candidate, env) =>
  new Promise((resolve) => {
    execFile(
      candidate.command,
      [...candidate.args, "-c", PROBE_CODE],
      { env, timeout: PROBE_TIMEOUT_MS, windowsHide: true },
      (error, stdout, stderr) => {
        const [version = "", executable = ""] = String(stdout).trim().split(/\r?\n/);
        if (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (typeof code === "string") {
            resolve({ kind: "missing", detail: code });
          } else if (error.killed) {
            resolve({ kind: "failed", exitCode: null, detail: `no answer within ${PROBE_TIMEOUT_MS / 1000} s` });
          } else {
            const exitCode = typeof code === "number" ? code : null;
            resolve({ kind: "failed", exitCode, detail: lastLine(String(stderr)) || lastLine(String(stdout)) });
          }
        } else if (!/^\d+\.\d+\.\d+$/.test(version.trim())) {
          resolve({ kind: "failed", exitCode: 0, detail: `printed "${lastLine(String(stdout)).slice(0, 80)}", not a version` });
        } else {
          resolve({ kind: "ok", version: version.trim(), executable: executable.trim() });
        }
      },
    );
  });

export function isRecentEnough(version: string): boolean {
  const [major, minor] = version.split(".").map(Number);
  return major > MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor >= MIN_PYTHON[1]);
}

/** Newest first, by numeric version. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pb[i] ?? 0) - (pa[i] ?? 0);
    if (d !== 0) {
      return d;
    }
  }
  return 0;
}

/** `~` and `${env:NAME}` in a configured path, the way people write them in settings. */
export function expandPath(value: string, env: NodeJS.ProcessEnv = process.env, home = os.homedir()): string {
  let result = value.trim().replace(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => {
    return env[name] ?? "";
  });
  if (result === "~" || result.startsWith("~/") || result.startsWith("~\\")) {
    result = path.join(home, result.slice(1));
  }
  return result;
}

function isExecutableFile(file: string, platform: NodeJS.Platform): boolean {
  try {
    if (!statSync(file).isFile()) {
      return false;
    }
    if (platform !== "win32") {
      accessSync(file, constants.X_OK);
    }
    return true;
  } catch {
    return false;
  }
}

function executableNames(name: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string[] {
  if (platform !== "win32") {
    return [name];
  }
  const exts = (env.PATHEXT ?? ".COM;.EXE;.BAT;.CMD").split(";").filter(Boolean);
  return [name, ...exts.map((ext) => name + ext.toLowerCase())];
}

/** The first `name` on PATH, like `which`. */
export function findOnPath(name: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform): string | undefined {
  const delimiter = platform === "win32" ? ";" : ":";
  const pathValue = env.PATH ?? env.Path ?? "";
  for (const dir of pathValue.split(delimiter)) {
    if (dir === "") {
      continue;
    }
    for (const file of executableNames(name, env, platform)) {
      const full = path.join(dir, file);
      if (isExecutableFile(full, platform)) {
        return full;
      }
    }
  }
  return undefined;
}

/** Sub-folders of `dir` whose names match, highest version first (the groups are its parts). */
function versionedDirs(dir: string, pattern: RegExp): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .map((name) => ({ name, match: pattern.exec(name) }))
    .filter((e): e is { name: string; match: RegExpExecArray } => e.match !== null)
    .map((e) => ({ name: e.name, version: e.match.slice(1).filter(Boolean).join(".") }))
    .sort((a, b) => compareVersions(a.version, b.version))
    .map((e) => path.join(dir, e.name));
}

/**
 * The usual install places for this platform, in the order they are tried: Homebrew,
 * /usr/local/bin, pyenv shims, uv-managed Pythons, python.org builds (framework on macOS,
 * per-user installs on Windows).
 */
export function installPlaces(platform: NodeJS.Platform, env: NodeJS.ProcessEnv, home: string): Place[] {
  const join = platform === "win32" ? path.win32.join : path.posix.join;
  const places: Place[] = [];
  const uvRoot =
    env.UV_PYTHON_INSTALL_DIR ??
    (platform === "win32"
      ? join(env.APPDATA ?? join(home, "AppData", "Roaming"), "uv", "python")
      : join(env.XDG_DATA_HOME ?? join(home, ".local", "share"), "uv", "python"));
  const uv = versionedDirs(uvRoot, /^cpython-(\d+)\.(\d+)(?:\.(\d+))?/);
  if (platform === "win32") {
    const local = env.LOCALAPPDATA ?? join(home, "AppData", "Local");
    for (const dir of versionedDirs(join(local, "Programs", "Python"), /^Python(3)(\d+)$/)) {
      places.push({ dir, source: "python.org" });
    }
    places.push(...uv.map((dir) => ({ dir, source: "uv" })));
    places.push({ dir: join(env.PYENV ?? join(home, ".pyenv", "pyenv-win"), "shims"), source: "pyenv" });
    return places;
  }
  places.push({ dir: "/opt/homebrew/bin", source: "Homebrew" });
  if (platform === "linux") {
    places.push({ dir: "/home/linuxbrew/.linuxbrew/bin", source: "Homebrew" });
  }
  places.push({ dir: "/usr/local/bin", source: "/usr/local/bin" });
  places.push({ dir: join(env.PYENV_ROOT ?? join(home, ".pyenv"), "shims"), source: "pyenv" });
  places.push(...uv.map((dir) => ({ dir: join(dir, "bin"), source: "uv" })));
  if (platform === "darwin") {
    const framework = "/Library/Frameworks/Python.framework/Versions";
    for (const dir of versionedDirs(framework, /^(\d+)\.(\d+)$/)) {
      places.push({ dir: join(dir, "bin"), source: "python.org" });
    }
  }
  return places;
}

/** Candidates after the setting, in order, without duplicates (same file reached twice). */
async function* candidates(options: DiscoveryOptions): AsyncGenerator<Candidate> {
  const platform = options.platform ?? process.platform;
  const home = options.home ?? os.homedir();
  const seen = new Set<string>();
  const fresh = (file: string): boolean => {
    let key = file;
    try {
      key = realpathSync(file);
    } catch {
      // not there: probing it says so
    }
    if (seen.has(key)) {
      return false;
    }
    seen.add(key);
    return true;
  };
  const fromExtension = await options.pythonExtension?.().catch(() => undefined);
  if (fromExtension && fresh(fromExtension)) {
    yield { command: fromExtension, args: [], source: "Python extension" };
  }
  for (const name of PYTHON_NAMES) {
    const file = findOnPath(name, options.env, platform);
    if (file !== undefined && fresh(file)) {
      yield { command: file, args: [], source: "PATH" };
    }
  }
  if (platform === "win32") {
    const py = findOnPath("py", options.env, platform);
    if (py !== undefined) {
      yield { command: py, args: ["-3"], source: "py launcher" };
    }
  }
  for (const place of options.places ?? installPlaces(platform, options.env, home)) {
    for (const name of PYTHON_NAMES) {
      for (const file of executableNames(name, options.env, platform)) {
        const full = path.join(place.dir, file);
        if (isExecutableFile(full, platform) && fresh(full)) {
          yield { command: full, args: [], source: place.source };
        }
      }
    }
  }
}

function toInterpreter(candidate: Candidate, result: { version: string; executable: string }): Interpreter {
  // Run what the probe ran as: `sys.executable` would skip a shim's or a launcher's choice of
  // version at launch time, so it only replaces a launcher (`py -3`), whose arguments it drops.
  if (candidate.args.length > 0 && result.executable !== "") {
    return { command: result.executable, args: [], version: result.version, source: candidate.source };
  }
  return { command: candidate.command, args: [...candidate.args], version: result.version, source: candidate.source };
}

/** What a probe found, as the end of a sentence: "is Python 3.9.6", "failed with exit code 1: …". */
export function outcome(result: ProbeResult): string {
  switch (result.kind) {
    case "ok":
      return `is Python ${result.version}`;
    case "failed": {
      const how = result.exitCode === null ? "failed" : `failed with exit code ${result.exitCode}`;
      return `${how}${result.detail ? ` (${result.detail})` : ""}`;
    }
    case "missing":
      return `could not be started (${result.detail})`;
  }
}

/** One line per candidate for messages and the log. */
export function describeTried(tried: Tried): string {
  const { candidate, result } = tried;
  return `${[candidate.command, ...candidate.args].join(" ")} (${candidate.source}) ${outcome(result)}`;
}

/**
 * Every candidate in order, probed, until one qualifies (or all of them with `all`). The
 * setting, when set, is the only candidate.
 */
export async function discover(
  options: DiscoveryOptions,
  all = false,
): Promise<{ chosen: Interpreter | undefined; tried: Tried[] }> {
  const probe = options.probe ?? probePython;
  const tried: Tried[] = [];
  let chosen: Interpreter | undefined;
  const platform = options.platform ?? process.platform;
  const consider = async (candidate: Candidate): Promise<boolean> => {
    const result: ProbeResult =
      platform === "darwin" && isMacStub(candidate.command, options.macStubs ?? MAC_STUBS)
        ? { kind: "failed", exitCode: null, detail: "the macOS stub of the command line developer tools, not installed; not run, since running it opens their installer" }
        : await probe(candidate, options.env);
    tried.push({ candidate, result });
    if (chosen === undefined && result.kind === "ok" && isRecentEnough(result.version)) {
      chosen = toInterpreter(candidate, result);
    }
    return chosen !== undefined && !all;
  };
  if (options.configured.trim() !== "") {
    const command = expandPath(options.configured, options.env, options.home);
    await consider({ command, args: [], source: "setting" });
    return { chosen, tried };
  }
  for await (const candidate of candidates(options)) {
    if (await consider(candidate)) {
      break;
    }
  }
  return { chosen, tried };
}

/** The interpreter to use, or PythonNotFoundError with what was tried and how to fix it. */
export async function findInterpreter(options: DiscoveryOptions): Promise<Interpreter> {
  const { chosen, tried } = await discover(options);
  if (chosen !== undefined) {
    return chosen;
  }
  throw new PythonNotFoundError(notFoundMessage(options.configured, tried), tried);
}

function notFoundMessage(configured: string, tried: Tried[]): string {
  if (configured.trim() !== "") {
    const [only] = tried;
    const command = only.candidate.command;
    if (only.result.kind === "ok") {
      return (
        `codeburn.python.interpreter is "${command}", which is Python ${only.result.version}; ` +
        `CodeBurn needs ${WANTED}. Pick another (CodeBurn: Select Python Interpreter), or clear ` +
        "the setting to look for one."
      );
    }
    return (
      `codeburn.python.interpreter is "${command}", which ${outcome(only.result)}. Point it at ` +
      `${WANTED} (CodeBurn: Select Python Interpreter), or clear the setting to look for one.`
    );
  }
  const found =
    tried.length === 0
      ? "there is no python3 or python on PATH or in the usual install places"
      : `none of the ${tried.length === 1 ? "one" : tried.length} found qualifies: ` +
        tried.slice(0, 4).map(describeTried).join("; ") +
        (tried.length > 4 ? `; and ${tried.length - 4} more (see the log)` : "");
  return (
    `CodeBurn needs ${WANTED} to run its language server, and ${found}. Install one, or pick ` +
    "one with CodeBurn: Select Python Interpreter (it writes codeburn.python.interpreter)."
  );
}

/** Quick-pick rows: every interpreter that ran, usable ones first, newest first. */
export interface PythonChoice {
  label: string;
  description: string;
  detail?: string;
  command: string;
  usable: boolean;
}

export function pythonChoices(tried: Tried[]): PythonChoice[] {
  const rows: PythonChoice[] = [];
  const seen = new Set<string>();
  for (const { candidate, result } of tried) {
    if (result.kind !== "ok") {
      continue;
    }
    // A launcher's choice is written as the interpreter it started.
    const command = candidate.args.length > 0 && result.executable ? result.executable : candidate.command;
    if (seen.has(command)) {
      continue;
    }
    seen.add(command);
    const usable = isRecentEnough(result.version);
    rows.push({
      label: `Python ${result.version}`,
      description: command,
      detail: usable ? candidate.source : `${candidate.source} — too old, CodeBurn needs ${MIN_PYTHON.join(".")}+`,
      command,
      usable,
    });
  }
  return rows.sort((a, b) => Number(b.usable) - Number(a.usable) || compareVersions(a.label.slice(7), b.label.slice(7)));
}

export interface ServerLaunch {
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/**
 * How to start `python -m codeburn.server`: the extension's bundled libraries go first on
 * `sys.path` through PYTHONPATH, and `-P` keeps the working directory off it, so a folder named
 * like one of our packages in the user's workspace can never shadow the bundled code.
 */
export function serverLaunch(
  interpreter: Interpreter,
  bundledLibs: string,
  env: NodeJS.ProcessEnv = process.env,
): ServerLaunch {
  const existing = env.PYTHONPATH ? [env.PYTHONPATH] : [];
  return {
    command: interpreter.command,
    args: [...(interpreter.args ?? []), "-P", "-m", PROTOCOL.serverModule],
    cwd: bundledLibs,
    env: {
      ...env,
      PYTHONPATH: [bundledLibs, ...existing].join(path.delimiter),
      PYTHONUNBUFFERED: "1",
      PYTHONIOENCODING: "utf-8",
      PYTHONNOUSERSITE: "1",
    },
  };
}
