/** Activation with replaceable parts: the extension passes the language client, tests a fake. */

import * as vscode from "vscode";

import type { ConnectionFactory } from "../view/connection";
import { discover, findInterpreter } from "../view/python";
import { registerCommands } from "./commands";
import { Controller, type ControllerDeps } from "./controller";
import { onPythonExtensionChange, pythonExtensionInterpreter } from "./pythonExtension";

export interface ActivationDeps extends Partial<Omit<ControllerDeps, "connectionFactory">> {
  log: vscode.LogOutputChannel;
  connectionFactory: ConnectionFactory;
}

export function activateWith(context: vscode.ExtensionContext, deps: ActivationDeps): Controller {
  const env = deps.env ?? process.env;
  let watching = false;
  // The Python extension is asked only when the setting is empty; once it was asked (and is
  // active), a change of its interpreter makes the controller look again.
  const pythonExtension = async () => {
    const found = await pythonExtensionInterpreter();
    if (!watching) {
      watching = true;
      void onPythonExtensionChange(() => controller.pythonEnvironmentChanged()).then((d) => {
        if (d !== undefined) {
          context.subscriptions.push(d);
        }
      });
    }
    return found;
  };
  const controller: Controller = new Controller(deps.log, {
    connectionFactory: deps.connectionFactory,
    findInterpreter:
      deps.findInterpreter ?? ((configured, e) => findInterpreter({ configured, env: e, pythonExtension })),
    listPythons:
      deps.listPythons ?? (async () => (await discover({ configured: "", env, pythonExtension }, true)).tried),
    bundledLibs:
      deps.bundledLibs ?? vscode.Uri.joinPath(context.extensionUri, "bundled", "libs").fsPath,
    env,
    now: deps.now ?? (() => new Date()),
  });
  context.subscriptions.push(deps.log, controller);
  registerCommands(context, controller, env);
  void controller.start();
  return controller;
}
