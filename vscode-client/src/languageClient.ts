/** ServerConnection backed by vscode-languageclient over stdio. */

import type { LogOutputChannel } from "vscode";
import {
  CloseAction,
  ErrorAction,
  type ErrorHandler,
  ExecuteCommandRequest,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  State,
} from "vscode-languageclient/node";

import type { ConnectionEvents, ConnectionFactory, ServerConnection } from "./connection";
import type { ServerLaunch } from "./python";
import type { StatusPayload } from "./types";

const MAX_RESTARTS = 4;
const RESTART_WINDOW_MS = 3 * 60_000;

/** Restarts a crashed server a few times, then stops and lets the status item say so. */
class RestartPolicy implements ErrorHandler {
  private crashes: number[] = [];

  constructor(
    private readonly log: LogOutputChannel,
    private readonly events: ConnectionEvents,
  ) {}

  error(error: Error) {
    this.log.error(`Connection to the language server: ${error.message}`);
    return { action: ErrorAction.Continue, handled: true };
  }

  closed() {
    const now = Date.now();
    this.crashes = [...this.crashes.filter((t) => now - t < RESTART_WINDOW_MS), now];
    if (this.crashes.length <= MAX_RESTARTS) {
      this.log.warn(`The language server exited; restarting (${this.crashes.length}).`);
      this.events.onRestarting();
      return { action: CloseAction.Restart, handled: true };
    }
    const message =
      `CodeBurn's language server stopped ${this.crashes.length} times in 3 minutes and ` +
      "was not restarted. The logs say why; fix the cause and run CodeBurn: Restart Server.";
    this.log.error(message);
    this.events.onStopped(message);
    return { action: CloseAction.DoNotRestart, handled: true };
  }
}

class LanguageClientConnection implements ServerConnection {
  private readonly client: LanguageClient;

  constructor(
    launch: ServerLaunch,
    settings: () => unknown,
    events: ConnectionEvents,
    log: LogOutputChannel,
  ) {
    const serverOptions: ServerOptions = {
      command: launch.command,
      args: launch.args,
      options: { cwd: launch.cwd, env: launch.env },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [],
      outputChannel: log,
      initializationOptions: settings,
      synchronize: { configurationSection: "codeburn" },
      errorHandler: new RestartPolicy(log, events),
    };
    this.client = new LanguageClient("codeburn", "CodeBurn", serverOptions, clientOptions);
    // Registered before start() so that the first status is not lost.
    this.client.onNotification("codeburn/status", (status: StatusPayload) => {
      events.onStatus(status);
    });
    this.client.onDidChangeState((change) => {
      if (change.newState === State.Running) {
        events.onRunning();
      }
    });
  }

  async start(): Promise<void> {
    await this.client.start();
  }

  async stop(): Promise<void> {
    if (this.client.state !== State.Stopped) {
      await this.client.stop(2000);
    }
  }

  async execute<T>(command: string, args: unknown[]): Promise<T> {
    return (await this.client.sendRequest(ExecuteCommandRequest.type, {
      command,
      arguments: args,
    })) as T;
  }
}

/** A factory bound to the extension's log channel. */
export function languageClientFactory(log: LogOutputChannel): ConnectionFactory {
  return (launch: ServerLaunch, settings: () => unknown, events: ConnectionEvents) =>
    new LanguageClientConnection(launch, settings, events, log);
}
