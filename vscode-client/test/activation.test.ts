/**
 * Activation and command wiring against the `vscode` shim, with a scripted stand-in for the
 * language server connection (the real client runs in the real-editor test).
 */
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, test } from "node:test";

import * as vscode from "vscode";

import { activateWith } from "../src/host/activation";
import type { ConnectionEvents, ServerConnection } from "../src/view/connection";
import { type Interpreter, PythonNotFoundError, type ServerLaunch, type Tried } from "../src/view/python";
import { shim } from "./shim/vscode";
import { report, status } from "./fixtures";

class FakeServer implements ServerConnection {
  calls: Array<{ command: string; args: unknown[] }> = [];
  results = new Map<string, unknown>();
  failures = new Map<string, string>();
  events!: ConnectionEvents;
  launch!: ServerLaunch;
  settings!: () => unknown;
  started = 0;
  stopped = 0;
  startError: string | undefined;

  async start(): Promise<void> {
    this.started++;
    if (this.startError) {
      throw new Error(this.startError);
    }
    this.events.onRunning();
  }
  async stop(): Promise<void> {
    this.stopped++;
  }
  async execute<T>(command: string, args: unknown[]): Promise<T> {
    this.calls.push({ command, args });
    const failure = this.failures.get(command);
    if (failure) {
      throw new Error(failure);
    }
    return this.results.get(command) as T;
  }
}

function context() {
  const state = new Map<string, unknown>();
  return {
    subscriptions: [] as Array<{ dispose(): unknown }>,
    extensionUri: vscode.Uri.file("/ext"),
    extension: { id: "codeburn.codeburn" },
    globalState: {
      get: (key: string) => state.get(key),
      update: async (key: string, value: unknown) => void state.set(key, value),
    },
  } as unknown as vscode.ExtensionContext;
}

function setup(
  options: {
    env?: NodeJS.ProcessEnv;
    python?: (setting: string) => Promise<Interpreter>;
    listPythons?: () => Promise<Tried[]>;
  } = {},
) {
  const server = new FakeServer();
  const ctx = context();
  const log = vscode.window.createOutputChannel("CodeBurn", { log: true });
  const controller = activateWith(ctx, {
    log: log as unknown as vscode.LogOutputChannel,
    env: options.env ?? { PATH: process.env.PATH },
    bundledLibs: "/ext/bundled/libs",
    now: () => new Date(2026, 10, 30, 12),
    findInterpreter: options.python ?? (async () => ({ command: "/usr/bin/python3", version: "3.11.7" })),
    listPythons: options.listPythons ?? (async () => []),
    connectionFactory: (launch, settings, events) => {
      server.launch = launch;
      server.settings = settings;
      server.events = events;
      return server;
    },
  });
  const item = shim.statusItems[0];
  const tick = () => new Promise((resolve) => setImmediate(resolve));
  const run = (id: string) => vscode.commands.executeCommand(id);
  return { server, ctx, controller, item, tick, run };
}

beforeEach(() => shim.reset());

test("activation shows a starting item, launches the bundled server and shows its figures", async () => {
  const { server, item, tick, ctx } = setup();
  assert.equal(item.id, "codeburn.spend");
  assert.equal(item.name, "CodeBurn");
  assert.ok(item.visible);
  assert.equal(item.text, "$(sync~spin) CodeBurn");
  await tick();
  assert.equal(server.started, 1);
  assert.equal(server.launch.command, "/usr/bin/python3");
  assert.deepEqual(server.launch.args, ["-P", "-m", "codeburn.server"]);
  assert.ok(server.launch.env.PYTHONPATH?.startsWith("/ext/bundled/libs"));
  server.events.onStatus(status());
  assert.equal(item.text, "$(flame) $4.56 today · $123 month");
  assert.equal(item.command, "codeburn.showBreakdown");
  const tooltip = item.tooltip as vscode.MarkdownString;
  assert.deepEqual((tooltip.isTrusted as { enabledCommands: string[] }).enabledCommands.sort(), [
    "codeburn.importCursorCsv",
    "codeburn.openSettings",
    "codeburn.restartServer",
    "codeburn.selectPython",
    "codeburn.showBreakdown",
    "codeburn.showLogs",
    "codeburn.syncCursor",
  ]);
  assert.equal(tooltip.supportThemeIcons, true);
  assert.ok(ctx.subscriptions.length >= 9);
});

test("every palette command in package.json is registered", async () => {
  setup();
  const manifest = (await import("../package.json")).default as {
    contributes: { commands: Array<{ command: string }> };
  };
  for (const { command } of manifest.contributes.commands) {
    assert.ok(shim.commands.has(command), command);
  }
});

test("missing Python: the item says so, one notification offers Pick Python… and How to install", async () => {
  const { item, tick, run, server } = setup({
    python: async () => {
      throw new PythonNotFoundError("CodeBurn needs Python 3.11 or newer to run its language server");
    },
  });
  await tick();
  assert.equal(item.text, "$(flame) CodeBurn: Python needed");
  assert.equal(item.backgroundColor?.id, "statusBarItem.errorBackground");
  assert.equal(item.command, "codeburn.selectPython");
  assert.equal(server.started, 0);
  assert.equal(shim.messages.length, 1);
  assert.equal(shim.messages[0].level, "error");
  assert.deepEqual(shim.messages[0].items, ["Pick Python…", "How to install"]);
  // Retrying (a restart, coming back to the window) does not repeat the notification.
  await run("codeburn.restartServer");
  await tick();
  assert.equal(shim.messages.length, 1);
  shim.messageAnswers.push("Show Logs");
  await run("codeburn.refresh");
  assert.equal(shim.messages[1].level, "error");
  assert.match(shim.messages[1].message, /Python 3\.11/);
  assert.deepEqual(shim.messages[1].items, ["Pick Python…", "Show Logs"]);
  assert.equal(shim.logShown, 1);
  await run("codeburn.showBreakdown");
  assert.equal(shim.webviews.length, 0);
  assert.match(shim.messages[2].message, /Python 3\.11/);
});

test("How to install opens python.org", async () => {
  shim.messageAnswers.push("How to install");
  const { tick } = setup({
    python: async () => {
      throw new PythonNotFoundError("CodeBurn needs Python 3.11 or newer");
    },
  });
  await tick();
  await tick();
  assert.deepEqual(shim.opened, ["https://www.python.org/downloads/"]);
});

test("Pick Python… lists what was found, writes the setting, and the server starts without a reload", async () => {
  const good = "/opt/homebrew/bin/python3.12";
  const configured: string[] = [];
  shim.messageAnswers.push("Pick Python…");
  shim.quickPick = (items) => {
    const labels = items.map((i) => (typeof i === "string" ? i : i.label));
    assert.deepEqual(labels, ["Python 3.12.4", "Python 3.9.6", "$(folder-opened) Browse…"]);
    return "Python 3.12.4";
  };
  const { item, tick, server } = setup({
    python: async (setting: string) => {
      configured.push(setting);
      if (setting !== good) {
        throw new PythonNotFoundError("CodeBurn needs Python 3.11 or newer; /usr/bin/python3 (PATH) is Python 3.9.6");
      }
      return { command: good, version: "3.12.4", source: "setting" };
    },
    listPythons: async () => [
      { candidate: { command: "/usr/bin/python3", args: [], source: "PATH" }, result: { kind: "ok", version: "3.9.6", executable: "/usr/bin/python3" } },
      { candidate: { command: "/usr/bin/python3.8", args: [], source: "PATH" }, result: { kind: "failed", exitCode: 1, detail: "x" } },
      { candidate: { command: good, args: [], source: "Homebrew" }, result: { kind: "ok", version: "3.12.4", executable: good } },
    ],
  });
  for (let i = 0; i < 5; i++) {
    await tick();
  }
  assert.deepEqual(shim.updates, [["codeburn.python.interpreter", good, vscode.ConfigurationTarget.Global]]);
  assert.deepEqual(configured, ["", good]);
  assert.equal(server.started, 1);
  assert.equal(server.launch.command, good);
  server.events.onStatus(status());
  assert.equal(item.text, "$(flame) $4.56 today · $123 month");
});

test("Browse… in Pick Python… writes the chosen file", async () => {
  const { run, tick } = setup({ listPythons: async () => [] });
  await tick();
  shim.quickPick = (items) => {
    assert.equal(items.length, 1);
    return "$(folder-opened) Browse…";
  };
  shim.openDialogAnswer = "/home/me/.pyenv/versions/3.13.0/bin/python3";
  await run("codeburn.selectPython");
  assert.match(String(shim.quickPickCalls[0].options.placeHolder), /No Python 3\.11 or newer was found/);
  assert.deepEqual(shim.updates[0].slice(0, 2), ["codeburn.python.interpreter", "/home/me/.pyenv/versions/3.13.0/bin/python3"]);
});

test("a Python installed meanwhile is found when the window gets focus again", async () => {
  let installed = false;
  const { item, tick, server } = setup({
    python: async () => {
      if (!installed) {
        throw new PythonNotFoundError("CodeBurn needs Python 3.11 or newer");
      }
      return { command: "/usr/local/bin/python3.13", version: "3.13.0", source: "/usr/local/bin" };
    },
  });
  await tick();
  assert.equal(item.text, "$(flame) CodeBurn: Python needed");
  installed = true;
  shim.windowState.fire({ focused: true });
  await tick();
  assert.equal(server.started, 1);
  assert.equal(server.launch.command, "/usr/local/bin/python3.13");
});

test("a server that cannot start, or stops for good, is shown with Restart", async () => {
  const { item, tick, server, run } = setup();
  server.startError = "No module named codeburn.server";
  await run("codeburn.restartServer");
  await tick();
  assert.equal(item.text, "$(flame) CodeBurn: server stopped");
  assert.match((item.tooltip as vscode.MarkdownString).value, /No module named codeburn\\\.server/);
  server.startError = undefined;
  await run("codeburn.restartServer");
  server.events.onStatus(status());
  assert.equal(item.text, "$(flame) $4.56 today · $123 month");
  server.events.onStopped("stopped 5 times in 3 minutes");
  assert.equal(item.text, "$(flame) CodeBurn: server stopped");
  await run("codeburn.syncCursor");
  assert.deepEqual(shim.messages.at(-1)?.items, ["Show Logs", "Restart Server"]);
  assert.equal(server.calls.length, 0);
});

test("Import Cursor CSV: file picker, range prompt prefilled, summary shown", async () => {
  const { server, tick, run } = setup();
  await tick();
  server.events.onStatus(status());
  const dir = mkdtempSync(join(tmpdir(), "cb-import-"));
  const csv = join(dir, "usage.csv");
  writeFileSync(csv, "Date,Model,Cost\n2026-11-02T12:00:00.000Z,auto,Included\n2026-11-20T12:00:00.000Z,auto,$1.00\n");
  shim.openDialogAnswer = csv;
  server.results.set("codeburn.server.importCursorCsv", {
    changed: true, added: 2, skipped: 0, total: 2, tokens: 10, replaced: ["cursor"],
    coverage: { start: "2026-11-02T00:00:00.000Z", end: "2026-11-20T22:59:59.999Z", inferred: true },
  });
  await run("codeburn.importCursorCsv");
  assert.equal(shim.inputBoxCalls[0].value, "2026-11-02 to 2026-11-20");
  assert.deepEqual(server.calls, [{ command: "codeburn.server.importCursorCsv", args: [{ path: csv }] }]);
  assert.match(shim.messages.at(-1)?.message ?? "", /imported 2 rows .* Nothing was uploaded/);

  // A changed range goes to the server; a cancelled prompt imports nothing.
  shim.inputBox = () => "2026-11-01 to 2026-11-30";
  await run("codeburn.importCursorCsv");
  assert.deepEqual(server.calls[1].args, [{ path: csv, from: "2026-11-01", to: "2026-11-30" }]);
  shim.inputBox = () => undefined;
  await run("codeburn.importCursorCsv");
  assert.equal(server.calls.length, 2);
  assert.equal(shim.inputBoxCalls[2].validateInput?.("nonsense"), "Write the range as FROM to TO, for example 2026-11-01 to 2026-11-30.");

  // A refused import shows the server's message.
  shim.inputBox = (o) => o.value;
  server.failures.set("codeburn.server.importCursorCsv", "line 3: Total Tokens is not the sum");
  await run("codeburn.importCursorCsv");
  assert.equal(shim.messages.at(-1)?.level, "error");
  assert.match(shim.messages.at(-1)?.message ?? "", /line 3: Total Tokens/);
});

test("Import of a team export: a quick pick of its users, then only that person's rows", async () => {
  const { server, tick, run } = setup();
  await tick();
  server.events.onStatus(status());
  const dir = mkdtempSync(join(tmpdir(), "cb-team-"));
  const csv = join(dir, "team.csv");
  writeFileSync(csv, "Date,User,Model\n2026-11-02T12:00:00.000Z,ana@example.com,auto\n");
  shim.openDialogAnswer = csv;
  shim.inputBox = () => "";
  const users = ["ana@example.com", "ben@example.com"];
  const imported = {
    changed: true, added: 1, skipped: 0, total: 1, tokens: 10, replaced: ["cursor"],
    coverage: { start: "2026-11-02T00:00:00.000Z", end: "2026-11-02T22:59:59.999Z", inferred: true },
  };
  server.execute = async <T>(command: string, args: unknown[]): Promise<T> => {
    server.calls.push({ command, args });
    const options = args[0] as { user?: string };
    const answer = options.user === "ben@example.com" ? imported : { changed: false, chooseUser: users };
    return answer as T;
  };

  // Dismissed: nothing is imported, nothing is shown.
  await run("codeburn.importCursorCsv");
  assert.deepEqual(shim.quickPickCalls.map((c) => c.items), [users]);
  assert.equal(server.calls.length, 1);
  assert.equal(shim.messages.length, 0);

  // Picked: the import runs again for that person only.
  shim.quickPick = (items) => items[1] as string;
  await run("codeburn.importCursorCsv");
  assert.deepEqual(server.calls.at(-1)?.args, [{ path: csv, user: "ben@example.com" }]);
  assert.match(shim.messages.at(-1)?.message ?? "", /imported 1 row/);
  assert.ok(!shim.logLines.some((line) => line.includes("example.com")), "an e-mail was logged");

  // A person with no rows (the server asks again): an error, no second pick.
  shim.quickPick = (items) => items[0] as string;
  await run("codeburn.importCursorCsv");
  assert.equal(shim.quickPickCalls.length, 3);
  assert.equal(shim.messages.at(-1)?.level, "error");
});

test("the test hook replaces the file picker only when its variable is set", async () => {
  const { server, tick, run } = setup({ env: { CODEBURN_TEST_IMPORT_PATH: "/data/export.csv" } });
  await tick();
  server.results.set("codeburn.server.importCursorCsv", { changed: false, added: 0, skipped: 4, total: 4, tokens: 0, replaced: [], coverage: null });
  shim.openDialogAnswer = "/never/used.csv";
  await run("codeburn.importCursorCsv");
  assert.deepEqual(server.calls[0].args, [{ path: "/data/export.csv" }]);
});

test("sync spins the icon while it runs; refresh applies the returned status", async () => {
  const { server, item, tick, run } = setup();
  await tick();
  server.events.onStatus(status());
  let release!: () => void;
  server.execute = async <T>(command: string, args: unknown[]): Promise<T> => {
    server.calls.push({ command, args });
    await new Promise<void>((resolve) => (release = resolve));
    return { changed: true, added: 5, skipped: 0, total: 5, tokens: 1, replaced: [], coverage: null, window: { start: "2026-11-01T00:00:00.000Z", end: "x" }, empty: false } as T;
  };
  const running = run("codeburn.syncCursor");
  await tick();
  assert.equal(item.text, "$(sync~spin) $4.56 today · $123 month");
  release();
  await running;
  assert.equal(item.text, "$(flame) $4.56 today · $123 month");
  assert.equal(server.calls[0].command, "codeburn.server.syncCursor");
  assert.match(shim.messages.at(-1)?.message ?? "", /synced 5 new rows from cursor\.com since 2026-11-01/);

  server.execute = FakeServer.prototype.execute.bind(server);
  server.results.set("codeburn.server.refresh", status({ today: { cost: 9, estimatedCost: 0, calls: 1 } }));
  await run("codeburn.refresh");
  assert.equal(item.text, "$(flame) $9.00 today · $123 month");
});

test("Remove Cursor Import asks first", async () => {
  const { server, tick, run } = setup();
  await tick();
  server.results.set("codeburn.server.removeCursorImport", { removed: true, ranges: [{}] });
  shim.messageAnswers.push(undefined);
  await run("codeburn.removeCursorImport");
  assert.equal(shim.messages[0].modal, true);
  assert.deepEqual(shim.messages[0].items, ["Remove"]);
  assert.equal(server.calls.length, 0);
  shim.messageAnswers.push("Remove");
  await run("codeburn.removeCursorImport");
  assert.deepEqual(server.calls, [{ command: "codeburn.server.removeCursorImport", args: [] }]);
  assert.match(shim.messages.at(-1)?.message ?? "", /removed the imported Cursor usage/);
});

test("Show Spend Breakdown opens one webview with this month's report", async () => {
  const { server, tick, run } = setup();
  await tick();
  server.events.onStatus(status());
  server.results.set("codeburn.server.report", report());
  await run("codeburn.showBreakdown");
  await run("codeburn.showBreakdown");
  assert.equal(shim.webviews.length, 1);
  assert.equal(shim.webviews[0].reveals, 1);
  assert.deepEqual(shim.webviews[0].options.localResourceRoots, []);
  assert.deepEqual(server.calls[0], { command: "codeburn.server.report", args: [{ period: "month" }] });
  assert.match(shim.webviews[0].webview.html, /<h2>By model<\/h2>/);
  // A new status reloads the visible panel; its Refresh button does too.
  server.events.onStatus(status({ today: { cost: 1, estimatedCost: 0, calls: 1 } }));
  await tick();
  assert.equal(server.calls.filter((c) => c.command === "codeburn.server.report").length, 3);
  shim.webviews[0].webview.messages.fire({ type: "refresh" });
  await tick();
  assert.equal(server.calls.filter((c) => c.command === "codeburn.server.report").length, 4);
  shim.webviews[0].dispose();
  await run("codeburn.showBreakdown");
  assert.equal(shim.webviews.length, 2);
  shim.webviews[1].dispose(); // the next test starts without a panel
});

test("a hidden breakdown reloads when shown if the figures changed meanwhile (a stale error goes)", async () => {
  const { server, tick, run } = setup();
  await tick();
  server.events.onStatus(status());
  server.failures.set("codeburn.server.report", "Request with id \"1\" is canceled");
  await run("codeburn.showBreakdown");
  const panel = shim.webviews[0];
  assert.match(panel.webview.html, /could not be loaded: Request with id/);
  panel.setVisible(false);
  server.failures.delete("codeburn.server.report");
  server.results.set("codeburn.server.report", report());
  server.events.onStatus(status({ today: { cost: 2, estimatedCost: 0, calls: 2 } }));
  await tick();
  const reports = () => server.calls.filter((c) => c.command === "codeburn.server.report").length;
  assert.equal(reports(), 1, "a hidden panel is not reloaded");
  panel.setVisible(true);
  await tick();
  assert.equal(reports(), 2);
  assert.match(panel.webview.html, /<h2>By model<\/h2>/);
  panel.setVisible(false);
  panel.setVisible(true); // nothing changed: no reload
  await tick();
  assert.equal(reports(), 2);
  panel.dispose();
});

test("the breakdown's period picker asks the server for that period and keeps it", async () => {
  const { server, tick, run } = setup();
  await tick();
  server.events.onStatus(status());
  server.results.set("codeburn.server.report", report());
  await run("codeburn.showBreakdown");
  const reports = () => server.calls.filter((c) => c.command === "codeburn.server.report").map((c) => c.args);
  assert.deepEqual(reports(), [[{ period: "month" }]]);
  const webview = shim.webviews[0].webview;
  webview.messages.fire({ type: "period", period: "lastmonth" });
  await tick();
  assert.deepEqual(reports().at(-1), [{ period: "lastmonth" }]);
  assert.match(webview.html, /<option value="lastmonth" selected>Last month<\/option>/);
  webview.messages.fire({ type: "refresh" });
  await tick();
  assert.deepEqual(reports().at(-1), [{ period: "lastmonth" }]);
  webview.messages.fire({ type: "period", period: "30days" });
  await tick();
  assert.deepEqual(reports().at(-1), [{ period: "30days" }]);
  // Two picks in a row: the second is not lost behind the load the first started.
  const picked = reports().length;
  webview.messages.fire({ type: "period", period: "month" });
  webview.messages.fire({ type: "period", period: "lastmonth" });
  await tick();
  await tick();
  assert.deepEqual(reports().slice(picked), [[{ period: "month" }], [{ period: "lastmonth" }]]);
  assert.match(webview.html, /<option value="lastmonth" selected>/);
  const before = reports().length;
  webview.messages.fire({ type: "period", period: "all; rm -rf" }); // not a period the page offers
  await tick();
  assert.equal(reports().length, before);
});

test("changing the sync setting tells the server once; not on start-up; the env variable is explained", async () => {
  const { server, tick } = setup();
  await tick();
  assert.equal(server.calls.length, 0);
  shim.setSetting("codeburn.cursorSync.enabled", false);
  await tick();
  assert.deepEqual(server.calls, [{ command: "codeburn.server.setCursorSync", args: [{ enabled: false }] }]);
  assert.equal(shim.messages.length, 0);
  server.results.set("codeburn.server.setCursorSync", { enabled: true, disabledByEnv: true });
  shim.setSetting("codeburn.cursorSync.enabled", true);
  await tick();
  assert.deepEqual(server.calls[1].args, [{ enabled: true }]);
  assert.match(shim.messages.at(-1)?.message ?? "", /CODEBURN_CURSOR_SYNC=0/);
  shim.setSetting("codeburn.statusBar.show", "today");
  await tick();
  assert.equal(server.calls.length, 2);
});

test("a sync switch changed before the server runs is sent once it does", async () => {
  const { server, tick, run } = setup();
  server.startError = "boom";
  await tick();
  shim.setSetting("codeburn.cursorSync.enabled", false);
  await tick();
  assert.equal(server.calls.length, 0);
  server.startError = undefined;
  await run("codeburn.restartServer");
  await tick();
  assert.deepEqual(server.calls, [{ command: "codeburn.server.setCursorSync", args: [{ enabled: false }] }]);
});

test("status bar setting and budget levels", async () => {
  const { server, item, tick } = setup();
  await tick();
  server.events.onStatus(status({ budget: { daily: 5, monthly: null, level: "warning" } }));
  assert.equal(item.backgroundColor?.id, "statusBarItem.warningBackground");
  server.events.onStatus(status({ budget: { daily: 4, monthly: null, level: "over" } }));
  assert.equal(item.backgroundColor?.id, "statusBarItem.errorBackground");
  server.events.onStatus(status());
  assert.equal(item.backgroundColor, undefined);
  // The server announces crossings itself (window/showMessage); the extension adds none.
  assert.equal(shim.messages.length, 0);
  shim.setSetting("codeburn.statusBar.show", "month");
  assert.equal(item.text, "$(flame) $123 month");
});

test("changing the interpreter setting restarts the server", async () => {
  const { server, tick } = setup();
  await tick();
  shim.setSetting("codeburn.python.interpreter", "/opt/py/bin/python3");
  await tick();
  await tick();
  assert.equal(server.stopped, 1);
  assert.equal(server.started, 2);
});

test("initialization options carry the codeburn section", async () => {
  const { server, tick } = setup();
  await tick();
  shim.settings.set("codeburn.cursor.databasePath", "/data/state.vscdb");
  shim.settings.set("codeburn.refreshIntervalSeconds", 30);
  const settings = server.settings() as { cursor: { databasePath: string }; refreshIntervalSeconds: number };
  assert.equal(settings.cursor.databasePath, "/data/state.vscdb");
  assert.equal(settings.refreshIntervalSeconds, 30);
});
