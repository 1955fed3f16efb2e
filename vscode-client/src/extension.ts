/** Entry point: the controller with the real language client. */

import * as vscode from "vscode";

import { activateWith } from "./host/activation";
import type { Controller } from "./host/controller";
import { languageClientFactory } from "./host/languageClient";

let controller: Controller | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel("CodeBurn", { log: true });
  controller = activateWith(context, { log, connectionFactory: languageClientFactory(log) });
}

export async function deactivate(): Promise<void> {
  await controller?.stop();
  controller = undefined;
}
