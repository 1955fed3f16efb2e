/**
 * The Python extension's active interpreter (ms-python.python's public API), when it is
 * installed: one of the places interpreter discovery looks (docs/editor.md).
 */

import * as vscode from "vscode";

const PYTHON_EXTENSION_ID = "ms-python.python";
const ACTIVATE_TIMEOUT_MS = 10_000;

/** The parts of ms-python.python's exports used here (newer `environments`, older `settings`). */
interface PythonApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string } | undefined;
    resolveEnvironment?(
      environment: { path: string },
    ): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
    onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
  };
  settings?: {
    getExecutionDetails?(resource?: vscode.Uri): { execCommand?: string[] } | undefined;
  };
}

async function api(activate = true): Promise<PythonApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION_ID);
  if (extension === undefined) {
    return undefined;
  }
  if (extension.isActive || !activate) {
    return extension.isActive ? extension.exports : undefined;
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ACTIVATE_TIMEOUT_MS);
  });
  try {
    return await Promise.race([Promise.resolve(extension.activate()), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The executable of the Python extension's active environment, or undefined. Never throws. */
export async function pythonExtensionInterpreter(): Promise<string | undefined> {
  try {
    const python = await api();
    const environments = python?.environments;
    if (environments !== undefined) {
      const active = environments.getActiveEnvironmentPath();
      if (active === undefined) {
        return undefined;
      }
      const resolved = await environments.resolveEnvironment?.(active);
      return resolved?.executable?.uri?.fsPath ?? active.path;
    }
    return python?.settings?.getExecutionDetails?.()?.execCommand?.[0];
  } catch {
    return undefined;
  }
}

/**
 * Calls `listener` when the Python extension's active interpreter changes, if that extension is
 * active (discovery activates it when it looks there; this never does).
 */
export async function onPythonExtensionChange(listener: () => void): Promise<vscode.Disposable | undefined> {
  try {
    const event = (await api(false))?.environments?.onDidChangeActiveEnvironmentPath;
    return event?.(() => listener());
  } catch {
    return undefined;
  }
}
