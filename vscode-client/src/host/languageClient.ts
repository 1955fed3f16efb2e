/** ServerConnection backed by vscode-languageclient over stdio. */

import * as readline from "node:readline";
import type { Readable } from "node:stream";

import type { LogOutputChannel } from "vscode";
import {
  CloseAction,
  ErrorAction,
  type ErrorHandler,
  ExecuteCommandRequest,
  LanguageClient,
  type LanguageClientOptions,
  RevealOutputChannelOn,
  type ServerOptions,
  State,
} from "vscode-languageclient/node";

import { PROTOCOL } from "../protocol";
import type { ConnectionEvents, ConnectionFactory, ServerConnection } from "../view/connection";
import type { ServerLaunch } from "../view/python";
import { isServerLogLine, StderrTail } from "../view/stderr";
import type { StatusPayload } from "../view/types";

const MAX_RESTARTS = 4;
const RESTART_WINDOW_MS = 3 * 60_000;

/**
 * Restarts a server that crashed after it was running, a few times, then stops and lets the
 * status item say so. A server that never came up is not restarted: start() reports why.
 */
class RestartPolicy implements ErrorHandler {
  private crashes: number[] = [];
  ranOnce = false;
  /** onStopped was sent: the status item already says the server is down. */
  gaveUp = false;

  constructor(
    private readonly log: LogOutputChannel,
    private readonly events: ConnectionEvents,
    private readonly stderr: StderrTail,
  ) {}

  error(error: Error) {
    this.log.error(`Connection to the language server: ${error.message}`);
    return { action: ErrorAction.Continue, handled: true };
  }

  closed() {
    if (!this.ranOnce) {
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    const now = Date.now();
    this.crashes = [...this.crashes.filter((t) => now - t < RESTART_WINDOW_MS), now];
    if (this.crashes.length <= MAX_RESTARTS) {
      this.log.warn(`The language server exited; restarting (${this.crashes.length}).`);
      this.events.onRestarting();
      return { action: CloseAction.Restart, handled: true };
    }
    const cause = this.stderr.lastProblem();
    const message =
      `CodeBurn's language server stopped ${this.crashes.length} times in 3 minutes and was ` +
      `not restarted${cause ? ` (last error: ${cause})` : ""}. Fix the cause, then run ` +
      "CodeBurn: Restart Server.";
    this.giveUp(message);
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  giveUp(message: string): void {
    if (!this.gaveUp) {
      this.gaveUp = true;
      this.log.error(message);
      this.events.onStopped(message);
    }
  }
}

/**
 * vscode-languageclient without its own pop-ups. It shows toasts from `error()` (forced for
 * "couldn't create connection to server", a restart that failed, an unhandled close; otherwise
 * unless revealOutputChannelOn is Never) and from a failed `didChangeConfiguration`; all of them
 * go through these four methods, which here only log. Failures reach the user through the
 * status item (the error handler and start()), its tooltip and the log. The server's own
 * `window/showMessage` (commands the user ran, budget crossings) is untouched.
 */
class QuietLanguageClient extends LanguageClient {
  override error(message: string, data?: unknown, _showNotification?: boolean | "force"): void {
    super.error(message, data, false);
  }
  override warn(message: string, data?: unknown, _showNotification?: boolean): void {
    super.warn(message, data, false);
  }
  override info(message: string, data?: unknown, _showNotification?: boolean): void {
    super.info(message, data, false);
  }
  override debug(message: string, data?: unknown, _showNotification?: boolean): void {
    super.debug(message, data, false);
  }
}

/** Server stderr into the log: its own log lines (also sent as logMessage) at debug level. */
function stderrHandler(tail: StderrTail) {
  return (input: Readable, channel: LogOutputChannel) => {
    readline
      .createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 })
      .on("line", (line: string) => {
        tail.push(line);
        if (isServerLogLine(line)) {
          channel.debug(line);
        } else if (line.trim() !== "") {
          channel.error(line);
        }
      });
  };
}

class LanguageClientConnection implements ServerConnection {
  private readonly client: LanguageClient;
  private readonly stderr = new StderrTail();
  private readonly policy: RestartPolicy;

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
    this.policy = new RestartPolicy(log, events, this.stderr);
    const clientOptions: LanguageClientOptions = {
      documentSelector: [],
      outputChannel: log,
      initializationOptions: settings,
      initializationFailedHandler: () => false,
      // No `synchronize`: the server registers for workspace/didChangeConfiguration itself and
      // pulls the section with workspace/configuration (docs/lsp.md).
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      errorHandler: this.policy,
      stdioOptions: {
        stdout: (input, channel) => {
          readline.createInterface({ input, terminal: false }).on("line", (l) => channel.info(l));
        },
        stderr: stderrHandler(this.stderr),
      },
    };
    // The client id is also the section it reads `<id>.trace.server` from.
    this.client = new QuietLanguageClient(PROTOCOL.settingsSection, "CodeBurn", serverOptions, clientOptions);
    // Registered before start() so that the first status is not lost.
    this.client.onNotification(PROTOCOL.statusMethod, (status: StatusPayload) => {
      events.onStatus(status);
    });
    this.client.onDidChangeState((change) => {
      if (change.newState === State.Running) {
        this.policy.ranOnce = true;
        events.onRunning();
      } else if (change.newState === State.StartFailed && this.policy.ranOnce) {
        // An automatic restart that could not even start the process (its toast is gone).
        const cause = this.stderr.lastProblem();
        this.policy.giveUp(
          `CodeBurn's language server exited and could not be restarted${cause ? ` (${cause})` : ""}. ` +
            "Fix the cause, then run CodeBurn: Restart Server.",
        );
      }
    });
  }

  async start(): Promise<void> {
    try {
      await this.client.start();
    } catch (error) {
      // Give the process a moment to flush its last words (a traceback) before reporting.
      await new Promise((resolve) => setTimeout(resolve, 300));
      const cause = this.stderr.lastProblem() ?? (error as Error).message ?? String(error);
      throw new Error(cause);
    }
  }

  async stop(): Promise<void> {
    if (this.client.state === State.Running) {
      await this.client.stop(2000);
    } else if (this.client.state === State.Starting) {
      await this.client.dispose(2000).catch(() => undefined);
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
