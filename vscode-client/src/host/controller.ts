/**
 * The extension's state machine: starts the language server, keeps the latest status, drives the
 * status bar item and the settings hand-off to the server. (Budget crossings are announced by the
 * server with window/showMessage, once per crossing per period across all editor windows.)
 */

import * as vscode from "vscode";

import { PROTOCOL } from "../protocol";
import type { ConnectionFactory, ServerConnection } from "../view/connection";
import { describeTried, type Interpreter, PythonNotFoundError, serverLaunch, type Tried } from "../view/python";
import { readSettings, type Settings } from "../view/settings";
import {
  backgroundColorId,
  type ClientState,
  computeView,
  PYTHON_DOWNLOAD_URL,
  TOOLTIP_COMMANDS,
} from "../view/statusView";
import type { StatusPayload } from "../view/types";

export interface ControllerDeps {
  connectionFactory: ConnectionFactory;
  findInterpreter: (configured: string, env: NodeJS.ProcessEnv) => Promise<Interpreter>;
  /** Every interpreter discovery can find (setting ignored), probed: the "Pick Python…" list. */
  listPythons: () => Promise<Tried[]>;
  /** Folder holding the bundled `codeburn` package and its libraries. */
  bundledLibs: string;
  env: NodeJS.ProcessEnv;
  now: () => Date;
}

/** A command needs the server, and it is not there; the message says why. */
export class ServerUnavailableError extends Error {
  constructor(
    message: string,
    readonly reason: "python-missing" | "server-down",
  ) {
    super(message);
  }
}

export class Controller implements vscode.Disposable {
  readonly item: vscode.StatusBarItem;
  private state: ClientState = { kind: "starting" };
  private connection: ServerConnection | undefined;
  private starting: Promise<void> | undefined;
  private busy = 0;
  /** The connection is up (set by the client's state changes). */
  private running = false;
  private pendingSyncSetting: boolean | undefined;
  /** The interpreter the server runs with (undefined until one is found). */
  private interpreter: Interpreter | undefined;
  /** "Pick Python…" was offered since the server last ran: offered once, not on every retry. */
  private pythonOffered = false;
  private lastPythonRetry = 0;
  private readonly statusListeners = new Set<(status: StatusPayload) => void>();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly ticker: ReturnType<typeof setInterval>;

  constructor(
    readonly log: vscode.LogOutputChannel,
    private readonly deps: ControllerDeps,
  ) {
    this.item = vscode.window.createStatusBarItem(
      "codeburn.spend",
      vscode.StatusBarAlignment.Right,
      100,
    );
    this.item.name = "CodeBurn";
    this.disposables.push(
      this.item,
      vscode.workspace.onDidChangeConfiguration((e) => this.onConfigurationChanged(e)),
      // A Python installed meanwhile is found when the user comes back to the window.
      vscode.window.onDidChangeWindowState((state) => {
        if (state.focused) {
          this.retryPython();
        }
      }),
    );
    // Keeps "Synced … min ago" honest between notifications.
    this.ticker = setInterval(() => this.render(), 60_000);
    this.ticker.unref?.();
    this.render();
    this.item.show();
  }

  get clientState(): ClientState {
    return this.state;
  }

  get lastStatus(): StatusPayload | undefined {
    return this.state.kind === "status" ? this.state.status : undefined;
  }

  settings(): Settings {
    const config = vscode.workspace.getConfiguration(PROTOCOL.settingsSection);
    return readSettings((key) => config.get(key));
  }

  /** Called for every status the server sends (and the result of Refresh). */
  onStatus(listener: (status: StatusPayload) => void): vscode.Disposable {
    this.statusListeners.add(listener);
    return { dispose: () => this.statusListeners.delete(listener) };
  }

  /** Starts the server unless it is already starting or running. */
  start(): Promise<void> {
    this.starting ??= this.launch().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  async restart(): Promise<void> {
    await this.starting?.catch(() => undefined);
    await this.stopConnection();
    this.log.info("Restarting the language server.");
    await this.start();
  }

  /** Runs a server command, waiting for a start in progress; `busy` spins the status icon. */
  async execute<T>(command: string, args: unknown[], busy = false): Promise<T> {
    await this.starting;
    const problem = this.unavailable();
    if (problem !== undefined) {
      throw problem;
    }
    if (this.connection === undefined) {
      throw new ServerUnavailableError("CodeBurn's language server is not running.", "server-down");
    }
    if (busy) {
      this.busy++;
      this.render();
    }
    try {
      return await this.connection.execute<T>(command, args);
    } finally {
      if (busy) {
        this.busy--;
        this.render();
      }
    }
  }

  /** Takes a status object (from a notification or from Refresh). */
  applyStatus(status: StatusPayload): void {
    this.state = { kind: "status", status };
    this.render();
    for (const listener of this.statusListeners) {
      listener(status);
    }
  }

  render(): void {
    const view = computeView({
      state: this.state,
      show: this.settings().show,
      period: this.settings().period,
      busy: this.busy > 0,
      now: this.deps.now(),
      syncSetting: this.settings().syncEnabled,
      locale: vscode.env.language,
    });
    this.item.text = view.text;
    const tooltip = new vscode.MarkdownString(view.tooltip, true);
    tooltip.isTrusted = { enabledCommands: [...TOOLTIP_COMMANDS] };
    tooltip.supportHtml = true;
    this.item.tooltip = tooltip;
    const colour = backgroundColorId(view.background);
    this.item.backgroundColor = colour === undefined ? undefined : new vscode.ThemeColor(colour);
    this.item.command = {
      breakdown: "codeburn.showBreakdown",
      logs: "codeburn.showLogs",
      python: "codeburn.selectPython",
    }[view.click];
    this.item.accessibilityInformation = { label: view.text.replace(/\$\([^)]*\)\s*/g, "") };
  }

  dispose(): void {
    clearInterval(this.ticker);
    for (const d of this.disposables) {
      d.dispose();
    }
    void this.stopConnection();
  }

  /** Stops the server (deactivate waits for this). */
  async stop(): Promise<void> {
    clearInterval(this.ticker);
    await this.stopConnection();
  }

  /** Why commands cannot reach the server right now, or `undefined` when they can (or soon). */
  unavailable(): ServerUnavailableError | undefined {
    if (this.state.kind === "python-missing") {
      return new ServerUnavailableError(this.state.message, "python-missing");
    }
    if (this.state.kind === "server-down") {
      return new ServerUnavailableError(this.state.message, "server-down");
    }
    return undefined;
  }

  private setState(state: ClientState): void {
    this.state = state;
    this.render();
  }

  private async launch(): Promise<void> {
    const previous = this.state;
    if (previous.kind !== "status") {
      this.setState({ kind: "starting" });
    }
    let interpreter: Interpreter;
    try {
      interpreter = await this.deps.findInterpreter(this.settings().interpreter, this.deps.env);
    } catch (error) {
      const message = error instanceof PythonNotFoundError ? error.message : String(error);
      this.log.error(message);
      for (const tried of error instanceof PythonNotFoundError ? error.tried : []) {
        this.log.info(`Python candidate: ${describeTried(tried)}`);
      }
      this.interpreter = undefined;
      this.setState({ kind: "python-missing", message });
      void this.offerPython(message);
      return;
    }
    this.interpreter = interpreter;
    const how = [interpreter.command, ...(interpreter.args ?? [])].join(" ");
    const from = interpreter.source ? `, from ${interpreter.source}` : "";
    this.log.info(`Starting the language server with ${how} (Python ${interpreter.version}${from}).`);
    const launch = serverLaunch(interpreter, this.deps.bundledLibs, this.deps.env);
    const connection = this.deps.connectionFactory(launch, () => this.serverSettings(), {
      onStatus: (status) => this.applyStatus(status),
      onRunning: () => this.onRunning(),
      onRestarting: () => {
        this.running = false;
        if (this.state.kind !== "status") {
          this.setState({ kind: "starting" });
        }
      },
      onStopped: (message) => {
        this.running = false;
        this.setState({ kind: "server-down", message });
        void this.offerRecovery(message);
      },
    });
    this.connection = connection;
    try {
      await connection.start();
    } catch (error) {
      const message =
        `CodeBurn's language server did not start: ${(error as Error).message ?? String(error)}`;
      this.log.error(message);
      this.connection = undefined;
      await connection.stop().catch(() => undefined);
      this.setState({ kind: "server-down", message });
    }
  }

  /** Every interpreter found, for "Pick Python…". */
  listPythons(): Promise<Tried[]> {
    return this.deps.listPythons();
  }

  /** The Python extension's interpreter changed: matters when it is (or could be) ours. */
  pythonEnvironmentChanged(): void {
    if (this.settings().interpreter !== "") {
      return;
    }
    if (this.state.kind === "python-missing" || this.interpreter?.source === "Python extension") {
      this.log.info("The Python extension's interpreter changed; looking for Python again.");
      void this.restart();
    }
  }

  /** Looks for Python again (at most every 5 s) while none is found. */
  private retryPython(): void {
    const now = Date.now();
    if (this.state.kind !== "python-missing" || this.starting !== undefined || now - this.lastPythonRetry < 5000) {
      return;
    }
    this.lastPythonRetry = now;
    void this.start();
  }

  /** One notification while no Python qualifies: pick one, or learn how to install one. */
  private async offerPython(message: string): Promise<void> {
    if (this.pythonOffered) {
      return;
    }
    this.pythonOffered = true;
    // An error, so it stays until answered (warnings with buttons hide themselves).
    const choice = await vscode.window.showErrorMessage(message, "Pick Python…", "How to install");
    if (choice === "Pick Python…") {
      await vscode.commands.executeCommand("codeburn.selectPython");
    } else if (choice === "How to install") {
      await vscode.env.openExternal(vscode.Uri.parse(PYTHON_DOWNLOAD_URL));
    }
  }

  /** One notification when the server is down for good, with the two ways out. */
  private async offerRecovery(message: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(message, "Show Logs", "Restart Server");
    if (choice === "Show Logs") {
      this.log.show();
    } else if (choice === "Restart Server") {
      await this.restart();
    }
  }

  private onRunning(): void {
    this.running = true;
    this.pythonOffered = false;
    if (this.state.kind !== "status") {
      this.setState({ kind: "starting" });
    }
    if (this.pendingSyncSetting !== undefined) {
      const enabled = this.pendingSyncSetting;
      this.pendingSyncSetting = undefined;
      void this.sendSyncSetting(enabled);
    }
  }

  private async stopConnection(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    this.running = false;
    if (connection !== undefined) {
      await connection.stop().catch((error: unknown) => {
        this.log.warn(`Stopping the language server: ${String(error)}`);
      });
    }
  }

  /** What the server gets as initializationOptions (it also pulls the same section itself). */
  private serverSettings(): unknown {
    const config = vscode.workspace.getConfiguration(PROTOCOL.settingsSection);
    return {
      cursorSync: {
        enabled: config.get("cursorSync.enabled"),
        intervalMinutes: config.get("cursorSync.intervalMinutes"),
      },
      cursor: { databasePath: config.get("cursor.databasePath") },
      refreshIntervalSeconds: config.get("refreshIntervalSeconds"),
      statusBar: { show: config.get("statusBar.show"), period: config.get("statusBar.period") },
      budget: { daily: config.get("budget.daily"), monthly: config.get("budget.monthly") },
      alerts: {
        enabled: config.get("alerts.enabled"),
        includedPercent: config.get("alerts.includedPercent"),
      },
      python: { interpreter: config.get("python.interpreter") },
      providers: config.get("providers"),
    };
  }

  private onConfigurationChanged(event: vscode.ConfigurationChangeEvent): void {
    if (!event.affectsConfiguration(PROTOCOL.settingsSection)) {
      return;
    }
    if (event.affectsConfiguration("codeburn.cursorSync.enabled")) {
      void this.sendSyncSetting(this.settings().syncEnabled);
    }
    if (event.affectsConfiguration("codeburn.python.interpreter")) {
      void this.restart();
    }
    this.render();
  }

  /** Writes the user's change of the sync switch into config.json, through the server. */
  private async sendSyncSetting(enabled: boolean): Promise<void> {
    if (this.connection === undefined || !this.running) {
      this.pendingSyncSetting = enabled;
      this.log.info("The sync setting goes to the server once it runs.");
      return;
    }
    let result: { disabledByEnv?: boolean } | undefined;
    try {
      result = await this.connection.execute(PROTOCOL.setCursorSync, [{ enabled }]);
      this.log.info(`Automatic sync from cursor.com turned ${enabled ? "on" : "off"}.`);
    } catch (error) {
      this.log.error(`Could not change the sync setting: ${(error as Error).message}`);
      void vscode.window.showErrorMessage(
        `CodeBurn could not change the sync setting: ${(error as Error).message}`,
      );
      return;
    }
    const disabledByEnv = result?.disabledByEnv ?? this.lastStatus?.env?.cursorSyncDisabledByEnv;
    if (enabled && disabledByEnv) {
      void vscode.window.showWarningMessage(
        "CodeBurn: sync from cursor.com stays off while CODEBURN_CURSOR_SYNC=0 is set in the " +
          "editor's environment; the setting applies once it is removed.",
      );
    }
  }
}
