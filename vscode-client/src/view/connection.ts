/** The extension's view of the language server: a small interface the controller depends on. */

import type { ServerLaunch } from "./python";
import type { StatusPayload } from "./types";

export interface ConnectionEvents {
  /** A `codeburn/status` notification arrived. */
  onStatus(status: StatusPayload): void;
  /** The server is up (first start or after an automatic restart). */
  onRunning(): void;
  /** The server is (re)starting after a crash. */
  onRestarting(): void;
  /** The server stopped for good (crashed too often); the message says so. */
  onStopped(message: string): void;
}

export interface ServerConnection {
  /** Starts the server; rejects with a readable error when it cannot. */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** `workspace/executeCommand`; rejects with the server's error message. */
  execute<T>(command: string, args: unknown[]): Promise<T>;
}

export type ConnectionFactory = (
  launch: ServerLaunch,
  settings: () => unknown,
  events: ConnectionEvents,
) => ServerConnection;
