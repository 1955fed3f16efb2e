/** Activation with replaceable parts: the extension passes the language client, tests a fake. */

import * as vscode from "vscode";

import type { ConnectionFactory } from "../view/connection";
import { findInterpreter } from "../view/python";
import { registerCommands } from "./commands";
import { Controller, type ControllerDeps } from "./controller";

export interface ActivationDeps extends Partial<Omit<ControllerDeps, "connectionFactory">> {
  log: vscode.LogOutputChannel;
  connectionFactory: ConnectionFactory;
}

export function activateWith(context: vscode.ExtensionContext, deps: ActivationDeps): Controller {
  const env = deps.env ?? process.env;
  const controller = new Controller(deps.log, {
    connectionFactory: deps.connectionFactory,
    findInterpreter: deps.findInterpreter ?? findInterpreter,
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
