/**
 * A small stand-in for the `vscode` module: just the API the extension uses, recording what the
 * extension does (status bar, messages, webviews, commands) and letting tests script the user's
 * answers. esbuild resolves `vscode` to this file for the unit-test bundles.
 */

type Listener<T> = (value: T) => unknown;

export class Disposable {
  constructor(private readonly fn: () => void = () => undefined) {}
  dispose(): void {
    this.fn();
  }
}

class Emitter<T> {
  private listeners = new Set<Listener<T>>();
  event = (listener: Listener<T>): Disposable => {
    this.listeners.add(listener);
    return new Disposable(() => this.listeners.delete(listener));
  };
  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      listener(value);
    }
  }
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export enum ViewColumn {
  Active = -1,
  One = 1,
}

export enum ConfigurationTarget {
  Global = 1,
}

export enum ProgressLocation {
  Window = 10,
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class MarkdownString {
  isTrusted: boolean | { enabledCommands: string[] } | undefined;
  supportHtml = false;
  constructor(
    public value = "",
    public supportThemeIcons = false,
  ) {}
}

export class Uri {
  private constructor(readonly fsPath: string) {}
  static file(path: string): Uri {
    return new Uri(path);
  }
  static parse(value: string): Uri {
    return new Uri(value);
  }
  static joinPath(base: Uri, ...parts: string[]): Uri {
    return new Uri([base.fsPath, ...parts].join("/"));
  }
  toString(): string {
    return `file://${this.fsPath}`;
  }
}

export interface ShimStatusBarItem {
  id: string;
  alignment: StatusBarAlignment;
  priority: number;
  name?: string;
  text: string;
  tooltip?: MarkdownString | string;
  backgroundColor?: ThemeColor;
  command?: string;
  accessibilityInformation?: { label: string };
  visible: boolean;
  show(): void;
  hide(): void;
  dispose(): void;
}

export interface ShownMessage {
  level: "info" | "warning" | "error";
  message: string;
  items: string[];
  modal: boolean;
}

type Answer = string | undefined;
type QuickPickItem = string | { label: string; description?: string; detail?: string };

/** Test-side state and controls. */
export const shim = {
  statusItems: [] as ShimStatusBarItem[],
  messages: [] as ShownMessage[],
  logLines: [] as string[],
  logShown: 0,
  settings: new Map<string, unknown>(),
  executed: [] as Array<{ command: string; args: unknown[] }>,
  webviews: [] as ShimWebviewPanel[],
  /** Answer the next message with this button (queue, FIFO); default: dismissed. */
  messageAnswers: [] as Answer[],
  openDialogAnswer: undefined as string | undefined,
  inputBox: (options: { value?: string }): Answer => options.value,
  inputBoxCalls: [] as Array<{ value?: string; validateInput?: (v: string) => unknown }>,
  /** Answer of a quick pick, by label (default: dismissed). */
  quickPick: (_items: QuickPickItem[]): string | undefined => undefined,
  quickPickCalls: [] as Array<{ items: QuickPickItem[]; options: Record<string, unknown> }>,
  /** Installed extensions by id (for `extensions.getExtension`). */
  extensions: new Map<string, { isActive: boolean; exports: unknown; activate(): Promise<unknown> }>(),
  /** URLs given to `env.openExternal`. */
  opened: [] as string[],
  /** Settings written with `WorkspaceConfiguration.update`: [key, value, target]. */
  updates: [] as Array<[string, unknown, unknown]>,
  windowState: new Emitter<{ focused: boolean }>(),
  configEmitter: new Emitter<{ affectsConfiguration(section: string): boolean }>(),
  commands: new Map<string, (...args: unknown[]) => unknown>(),
  reset(): void {
    shim.statusItems = [];
    shim.messages = [];
    shim.logLines = [];
    shim.logShown = 0;
    shim.settings = new Map();
    shim.executed = [];
    shim.webviews = [];
    shim.messageAnswers = [];
    shim.openDialogAnswer = undefined;
    shim.inputBox = (options) => options.value;
    shim.inputBoxCalls = [];
    shim.quickPick = () => undefined;
    shim.quickPickCalls = [];
    shim.extensions = new Map();
    shim.opened = [];
    shim.updates = [];
    shim.windowState = new Emitter();
    shim.configEmitter = new Emitter();
    shim.commands = new Map();
  },
  /** Changes a `codeburn.*` setting the way the Settings UI would, firing the change event. */
  setSetting(key: string, value: unknown): void {
    shim.settings.set(key, value);
    shim.configEmitter.fire({
      affectsConfiguration: (section: string) => key === section || key.startsWith(`${section}.`),
    });
  },
};

function show(level: ShownMessage["level"]) {
  return (message: string, ...rest: unknown[]): Promise<Answer> => {
    let modal = false;
    if (rest.length > 0 && typeof rest[0] === "object" && rest[0] !== null) {
      modal = Boolean((rest.shift() as { modal?: boolean }).modal);
    }
    shim.messages.push({ level, message, items: rest as string[], modal });
    return Promise.resolve(shim.messageAnswers.shift());
  };
}

class ShimWebview {
  html = "";
  readonly cspSource = "vscode-webview://shim";
  readonly messages = new Emitter<unknown>();
  onDidReceiveMessage = this.messages.event;
  postMessage(): Promise<boolean> {
    return Promise.resolve(true);
  }
}

export class ShimWebviewPanel {
  readonly webview = new ShimWebview();
  visible = true;
  disposed = false;
  reveals = 0;
  private readonly disposeEmitter = new Emitter<void>();
  onDidDispose = this.disposeEmitter.event;
  private readonly viewStateEmitter = new Emitter<{ webviewPanel: ShimWebviewPanel }>();
  onDidChangeViewState = this.viewStateEmitter.event;
  /** Hides or shows the panel the way switching editor tabs does. */
  setVisible(visible: boolean): void {
    this.visible = visible;
    this.viewStateEmitter.fire({ webviewPanel: this });
  }
  constructor(
    readonly viewType: string,
    readonly title: string,
    readonly options: Record<string, unknown>,
  ) {}
  reveal(): void {
    this.reveals++;
  }
  dispose(): void {
    if (!this.disposed) {
      this.disposed = true;
      this.disposeEmitter.fire();
    }
  }
}

function logChannel(name: string) {
  const line = (level: string) => (message: string) => shim.logLines.push(`[${level}] ${message}`);
  return {
    name,
    info: line("info"),
    warn: line("warn"),
    error: line("error"),
    debug: line("debug"),
    trace: line("trace"),
    append: line("raw"),
    appendLine: line("raw"),
    show: () => {
      shim.logShown++;
    },
    dispose: () => undefined,
    logLevel: 3,
    onDidChangeLogLevel: () => new Disposable(),
  };
}

/** Any `onDid…`/`onWill…` event the extension does not use: subscribing does nothing. */
function withEvents<T extends object>(api: T): T {
  return new Proxy(api, {
    get(target, key, receiver) {
      if (typeof key === "string" && !(key in target) && /^on(Did|Will)/.test(key)) {
        return () => new Disposable();
      }
      return Reflect.get(target, key, receiver);
    },
  });
}

export const window = withEvents({
  createStatusBarItem(id: string, alignment: StatusBarAlignment, priority: number) {
    const item: ShimStatusBarItem = {
      id,
      alignment,
      priority,
      text: "",
      visible: false,
      show: () => {
        item.visible = true;
      },
      hide: () => {
        item.visible = false;
      },
      dispose: () => undefined,
    };
    shim.statusItems.push(item);
    return item;
  },
  createOutputChannel: (name: string) => logChannel(name),
  showInformationMessage: show("info"),
  showWarningMessage: show("warning"),
  showErrorMessage: show("error"),
  showOpenDialog: () =>
    Promise.resolve(shim.openDialogAnswer ? [Uri.file(shim.openDialogAnswer)] : undefined),
  showQuickPick: (items: QuickPickItem[], options: Record<string, unknown>) => {
    shim.quickPickCalls.push({ items, options });
    const label = shim.quickPick(items);
    return Promise.resolve(items.find((i) => (typeof i === "string" ? i : i.label) === label));
  },
  withProgress: <T>(_options: unknown, task: () => Promise<T>): Promise<T> => task(),
  onDidChangeWindowState: (listener: Listener<{ focused: boolean }>) => shim.windowState.event(listener),
  showInputBox: (options: { value?: string; validateInput?: (v: string) => unknown }) => {
    shim.inputBoxCalls.push(options);
    return Promise.resolve(shim.inputBox(options));
  },
  createWebviewPanel: (viewType: string, title: string, _column: unknown, options: Record<string, unknown>) => {
    const panel = new ShimWebviewPanel(viewType, title, options);
    shim.webviews.push(panel);
    return panel;
  },
});

export const workspace = withEvents({
  getConfiguration(section: string) {
    return {
      get<T>(key: string, fallback?: T): T | undefined {
        const full = `${section}.${key}`;
        return shim.settings.has(full) ? (shim.settings.get(full) as T) : fallback;
      },
      async update(key: string, value: unknown, target?: unknown): Promise<void> {
        shim.updates.push([`${section}.${key}`, value, target]);
        shim.setSetting(`${section}.${key}`, value);
      },
    };
  },
  onDidChangeConfiguration: (listener: Listener<{ affectsConfiguration(s: string): boolean }>) =>
    shim.configEmitter.event(listener),
  textDocuments: [] as unknown[],
  notebookDocuments: [] as unknown[],
  workspaceFolders: undefined as unknown,
});

export const languages = withEvents({
  createDiagnosticCollection: () => ({ set: () => undefined, clear: () => undefined, dispose: () => undefined }),
});
export const notebooks = withEvents({});

export const commands = {
  registerCommand(id: string, fn: (...args: unknown[]) => unknown): Disposable {
    if (shim.commands.has(id)) {
      throw new Error(`command '${id}' already exists`);
    }
    shim.commands.set(id, fn);
    return new Disposable(() => shim.commands.delete(id));
  },
  async executeCommand(command: string, ...args: unknown[]): Promise<unknown> {
    shim.executed.push({ command, args });
    const fn = shim.commands.get(command);
    return fn ? await fn(...args) : undefined;
  },
};

export const extensions = {
  getExtension: (id: string) => shim.extensions.get(id),
};

export const env = {
  openExternal: async (uri: Uri): Promise<boolean> => {
    shim.opened.push(uri.fsPath);
    return true;
  },
};

// What vscode-languageclient needs to load and to start a server (test/languageClient.test.ts).
class Plain {
  constructor(..._args: unknown[]) {}
}
export class CallHierarchyItem extends Plain {}
export class CodeLens extends Plain {}
export class CompletionItem extends Plain {}
export class DocumentLink extends Plain {}
export class InlayHint extends Plain {}
export class SymbolInformation extends Plain {}
export class TypeHierarchyItem extends Plain {}
export class CodeAction extends Plain {}
export class Diagnostic extends Plain {}
export class TabInputText extends Plain {}
export class TabInputTextDiff extends Plain {}
export class TabInputNotebook extends Plain {}
export class TabInputCustom extends Plain {}
export class CancellationError extends Error {}
export enum LogLevel {
  Off = 0,
  Trace = 1,
  Debug = 2,
  Info = 3,
  Warning = 4,
  Error = 5,
}
export class EventEmitter<T> {
  private readonly emitter = new Emitter<T>();
  event = this.emitter.event;
  fire(value: T): void {
    this.emitter.fire(value);
  }
  dispose(): void {}
}
export class CancellationTokenSource {
  token = { isCancellationRequested: false, onCancellationRequested: () => new Disposable() };
  cancel(): void {
    this.token.isCancellationRequested = true;
  }
  dispose(): void {}
}
/** Enums the language client maps at construction: any member reads as its own name. */
const enumOf = (): Record<string, string> =>
  new Proxy({} as Record<string, string>, { get: (_target, key) => (typeof key === "string" ? key : undefined) });
export const CodeActionKind = enumOf();
export const CodeActionTriggerKind = enumOf();
export const CompletionItemKind = enumOf();
export const CompletionItemTag = enumOf();
export const CompletionTriggerKind = enumOf();
export const DiagnosticSeverity = enumOf();
export const DiagnosticTag = enumOf();
export const DocumentHighlightKind = enumOf();
export const FileType = enumOf();
export const FoldingRangeKind = enumOf();
export const InlayHintKind = enumOf();
export const InlineCompletionTriggerKind = enumOf();
export const NotebookCellKind = enumOf();
export const SignatureHelpTriggerKind = enumOf();
export const SymbolKind = enumOf();
export const SymbolTag = enumOf();
export const TextDocumentSaveReason = enumOf();

export const version = "1.91.0";
