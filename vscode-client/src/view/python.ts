/**
 * Finds a Python ≥ 3.11 to run the language server and builds its launch description (the bundled
 * libraries first on `sys.path`). No `vscode` here: unit-tested with real interpreters.
 */

import { execFile } from "node:child_process";
import * as os from "node:os";
import * as path from "node:path";

import { PROTOCOL } from "../protocol";

export const MIN_PYTHON: readonly [number, number] = [3, 11];

export interface Interpreter {
  command: string;
  version: string;
}

export class PythonNotFoundError extends Error {}

const PROBE = "import sys; print('%d.%d.%d' % sys.version_info[:3])";

function probe(command: string, env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, ["-c", PROBE], { env, timeout: 15_000 }, (error, stdout, stderr) => {
      if (error) {
        const detail = (stderr || error.message).trim().split("\n").pop() ?? "";
        reject(new Error(detail));
      } else {
        resolve(stdout.trim());
      }
    });
  });
}

function isRecentEnough(version: string): boolean {
  const [major, minor] = version.split(".").map(Number);
  return major > MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor >= MIN_PYTHON[1]);
}

/** `~` and `${env:NAME}` in a configured path, the way people write them in settings. */
export function expandPath(value: string, env: NodeJS.ProcessEnv = process.env): string {
  let result = value.trim().replace(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, name: string) => {
    return env[name] ?? "";
  });
  if (result === "~" || result.startsWith("~/")) {
    result = path.join(os.homedir(), result.slice(1));
  }
  return result;
}

/**
 * The configured interpreter, else `python3`, then `python` from PATH; the first that runs and is
 * Python ≥ 3.11 wins. Throws PythonNotFoundError with a message a person can act on.
 */
export async function findInterpreter(
  configured: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Interpreter> {
  const wanted = `Python ${MIN_PYTHON.join(".")} or newer`;
  if (configured.trim() !== "") {
    const command = expandPath(configured, env);
    let version: string;
    try {
      version = await probe(command, env);
    } catch (error) {
      throw new PythonNotFoundError(
        `codeburn.python.interpreter is "${command}", which could not be run ` +
          `(${(error as Error).message}). Point it at ${wanted}, or clear it to use python3 from PATH.`,
      );
    }
    if (!isRecentEnough(version)) {
      throw new PythonNotFoundError(
        `codeburn.python.interpreter is "${command}", which is Python ${version}; ` +
          `CodeBurn needs ${wanted}.`,
      );
    }
    return { command, version };
  }
  const tooOld: string[] = [];
  for (const command of ["python3", "python"]) {
    let version: string;
    try {
      version = await probe(command, env);
    } catch {
      continue;
    }
    if (isRecentEnough(version)) {
      return { command, version };
    }
    tooOld.push(`${command} is Python ${version}`);
  }
  const found = tooOld.length > 0 ? `${tooOld.join(", ")}` : "neither python3 nor python is on PATH";
  throw new PythonNotFoundError(
    `CodeBurn needs ${wanted} to run its language server, and ${found}. ` +
      `Install it, or set codeburn.python.interpreter to its path.`,
  );
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
    args: ["-P", "-m", PROTOCOL.serverModule],
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
