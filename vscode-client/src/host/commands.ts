/** The palette commands (category "CodeBurn"); each forwards to a `codeburn.server.*` command. */

import { readFile } from "node:fs/promises";

import * as vscode from "vscode";

import { PROTOCOL } from "../protocol";
import { formatRange, inferCsvRange, parseRangeInput } from "../view/csvRange";
import { importMessage, removeMessage, syncMessage } from "../view/messages";
import { type PythonChoice, pythonChoices } from "../view/python";
import type { ImportSummary, RemoveSummary, StatusPayload } from "../view/types";
import { BreakdownPanel } from "./breakdown";
import { type Controller, ServerUnavailableError } from "./controller";

/** Env variable the real-editor test sets to skip the file dialog; ignored when unset. */
export const TEST_IMPORT_PATH_ENV = "CODEBURN_TEST_IMPORT_PATH";

async function reportFailure(controller: Controller, what: string, error: unknown) {
  const message = error instanceof Error ? error.message : String(error);
  controller.log.error(`${what}: ${message}`);
  if (error instanceof ServerUnavailableError) {
    const actions =
      error.reason === "python-missing"
        ? ["Pick Python…", "Show Logs"]
        : ["Show Logs", "Restart Server"];
    const choice = await vscode.window.showErrorMessage(`CodeBurn: ${message}`, ...actions);
    const command = {
      "Pick Python…": "codeburn.selectPython",
      "Show Logs": "codeburn.showLogs",
      "Restart Server": "codeburn.restartServer",
    }[choice ?? ""];
    if (command) {
      await vscode.commands.executeCommand(command);
    }
    return;
  }
  void vscode.window.showErrorMessage(`CodeBurn: ${what} failed: ${message}`);
}

async function pickCsv(env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const hook = env[TEST_IMPORT_PATH_ENV];
  if (hook) {
    return hook;
  }
  const picked = await vscode.window.showOpenDialog({
    canSelectFiles: true,
    canSelectFolders: false,
    canSelectMany: false,
    filters: { "Cursor usage export (CSV)": ["csv"] },
    openLabel: "Import",
    title: "Import Cursor usage export",
  });
  return picked?.[0]?.fsPath;
}

/** Asks for the range; `undefined` when cancelled, `{}` to let the server infer it. */
async function askRange(file: string): Promise<{ from?: string; to?: string } | undefined> {
  let prefill = "";
  try {
    const inferred = inferCsvRange(await readFile(file, "utf8"));
    prefill = inferred ? formatRange(inferred) : "";
  } catch {
    // The server reads the file too and reports what is wrong with it.
  }
  const answer = await vscode.window.showInputBox({
    title: "CodeBurn: range this export covers",
    prompt:
      "The days the export covers completely, FROM to TO (dates, ISO times or epoch ms). " +
      "Keep the dates of its first and last rows, or clear the box to let CodeBurn infer them.",
    value: prefill,
    ignoreFocusOut: true,
    validateInput: (value) => {
      const parsed = parseRangeInput(value);
      return "error" in parsed ? parsed.error : undefined;
    },
  });
  if (answer === undefined) {
    return undefined;
  }
  const parsed = parseRangeInput(answer);
  if ("error" in parsed || answer.trim() === prefill) {
    return {};
  }
  return parsed;
}

async function importCsv(controller: Controller, env: NodeJS.ProcessEnv): Promise<void> {
  const file = await pickCsv(env);
  if (!file) {
    return;
  }
  const range = await askRange(file);
  if (range === undefined) {
    return;
  }
  try {
    const run = (options: { user?: string }) =>
      controller.execute<ImportSummary | ChooseUser>(
        PROTOCOL.importCursorCsv,
        [{ path: file, ...range, ...options }],
        true,
      );
    let summary = await run({});
    if ("chooseUser" in summary) {
      // A team export: import one person's rows, never the sum of several people.
      const user = await pickUser(summary.chooseUser);
      if (user === undefined) {
        return;
      }
      summary = await run({ user });
      if ("chooseUser" in summary) {
        void vscode.window.showErrorMessage("CodeBurn: that person has no rows in this export.");
        return;
      }
    }
    // The summary holds no e-mail: a chosen user is never logged.
    controller.log.info(`Imported ${file}: ${JSON.stringify(summary)}`);
    void vscode.window.showInformationMessage(importMessage(summary));
  } catch (error) {
    await reportFailure(controller, "Import", error);
  }
}

/** The server's answer for a team export whose signed-in user it cannot tell. */
interface ChooseUser {
  changed: false;
  chooseUser: string[];
}

async function pickUser(users: string[]): Promise<string | undefined> {
  return vscode.window.showQuickPick(users, {
    title: "CodeBurn: whose usage is this?",
    placeHolder: "This team export is not only the signed-in user's usage; pick yours",
    ignoreFocusOut: true,
  });
}

async function syncNow(controller: Controller): Promise<void> {
  try {
    const summary = await controller.execute<ImportSummary>(PROTOCOL.syncCursor, [], true);
    void vscode.window.showInformationMessage(syncMessage(summary));
  } catch (error) {
    await reportFailure(controller, "Sync from cursor.com", error);
  }
}

async function removeImport(controller: Controller): Promise<void> {
  const choice = await vscode.window.showWarningMessage(
    "Remove the Cursor usage CodeBurn imported from CSV exports and cursor.com?",
    {
      modal: true,
      detail:
        "Local estimates come back for the days it covered. Cursor's own files are not touched.",
    },
    "Remove",
  );
  if (choice !== "Remove") {
    return;
  }
  try {
    const summary = await controller.execute<RemoveSummary>(
      PROTOCOL.removeCursorImport,
      [],
      true,
    );
    void vscode.window.showInformationMessage(removeMessage(summary));
  } catch (error) {
    await reportFailure(controller, "Removing the import", error);
  }
}

async function refresh(controller: Controller): Promise<void> {
  try {
    const status = await controller.execute<StatusPayload>(PROTOCOL.refresh, [], true);
    controller.applyStatus(status);
  } catch (error) {
    await reportFailure(controller, "Refresh", error);
  }
}

async function showBreakdown(controller: Controller): Promise<void> {
  const problem = controller.unavailable();
  if (problem !== undefined) {
    await reportFailure(controller, "Breakdown", problem);
    return;
  }
  await BreakdownPanel.show(controller);
}

/**
 * "Pick Python…": every interpreter found, with versions, plus "Browse…"; the choice is written
 * to codeburn.python.interpreter (user settings), which restarts the server with it.
 */
async function selectPython(controller: Controller): Promise<void> {
  const choices = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Window, title: "CodeBurn: looking for Python" },
    () => controller.listPythons(),
  ).then(pythonChoices);
  const browse = { label: "$(folder-opened) Browse…", description: "a Python executable on disk" };
  const usable = choices.some((c) => c.usable);
  const picked = await vscode.window.showQuickPick<PythonChoice | typeof browse>([...choices, browse], {
    title: "CodeBurn: Python for the language server (3.11 or newer)",
    placeHolder: usable
      ? "Pick the Python that runs CodeBurn's language server"
      : "No Python 3.11 or newer was found: Browse… for one, or install one first",
    matchOnDescription: true,
    ignoreFocusOut: true,
  });
  if (picked === undefined) {
    return;
  }
  let command: string | undefined;
  if ("command" in picked) {
    command = picked.command;
  } else {
    const file = await vscode.window.showOpenDialog({
      canSelectFiles: true,
      canSelectFolders: false,
      canSelectMany: false,
      openLabel: "Use this Python",
      title: "CodeBurn: Python 3.11 or newer",
    });
    command = file?.[0]?.fsPath;
  }
  if (command === undefined) {
    return;
  }
  controller.log.info(`codeburn.python.interpreter set to ${command}.`);
  await vscode.workspace
    .getConfiguration(PROTOCOL.settingsSection)
    .update("python.interpreter", command, vscode.ConfigurationTarget.Global);
}

export function registerCommands(
  context: vscode.ExtensionContext,
  controller: Controller,
  env: NodeJS.ProcessEnv,
): void {
  const commands: Record<string, () => Promise<unknown>> = {
    "codeburn.importCursorCsv": () => importCsv(controller, env),
    "codeburn.syncCursor": () => syncNow(controller),
    "codeburn.removeCursorImport": () => removeImport(controller),
    "codeburn.refresh": () => refresh(controller),
    "codeburn.showBreakdown": () => showBreakdown(controller),
    "codeburn.showLogs": async () => controller.log.show(),
    "codeburn.restartServer": () => controller.restart(),
    "codeburn.selectPython": () => selectPython(controller),
    // A tooltip link may name one of CodeBurn's settings to open at; anything else opens them all.
    "codeburn.openSettings": async (setting?: unknown) =>
      vscode.commands.executeCommand(
        "workbench.action.openSettings",
        typeof setting === "string" && /^codeburn\.[\w.]+$/.test(setting) ? setting : `@ext:${context.extension.id}`,
      ),
  };
  for (const [id, run] of Object.entries(commands)) {
    context.subscriptions.push(vscode.commands.registerCommand(id, run));
  }
}
