/** package.json against docs/editor.md (settings, commands, activation, engines, pins). */
import assert from "node:assert/strict";
import { test } from "node:test";

import manifest from "../package.json";

type Property = {
  type: string;
  default: unknown;
  minimum?: number;
  enum?: string[];
  description?: string;
  markdownDescription?: string;
};

const properties = manifest.contributes.configuration.properties as Record<string, Property>;

test("settings with docs/editor.md's names, types, defaults, minimums and enums", () => {
  const expected: Record<string, Partial<Property>> = {
    "codeburn.cursorSync.enabled": { type: "boolean", default: true },
    "codeburn.cursorSync.intervalMinutes": { type: "integer", default: 5, minimum: 2 },
    "codeburn.cursor.databasePath": { type: "string", default: "" },
    "codeburn.refreshIntervalSeconds": { type: "integer", default: 30, minimum: 10 },
    "codeburn.statusBar.show": { type: "string", default: "both", enum: ["today", "month", "both"] },
    "codeburn.budget.daily": { type: "number", default: 0, minimum: 0 },
    "codeburn.budget.monthly": { type: "number", default: 0, minimum: 0 },
    "codeburn.python.interpreter": { type: "string", default: "" },
    "codeburn.statusBar.period": { type: "string", default: "month", enum: ["month", "cycle"] },
    "codeburn.alerts.enabled": { type: "boolean", default: true },
    "codeburn.alerts.includedPercent": { type: "array", default: [80, 100] },
    "codeburn.providers": { type: "array", default: [] },
  };
  assert.deepEqual(Object.keys(properties).sort(), Object.keys(expected).sort());
  for (const [key, want] of Object.entries(expected)) {
    for (const [field, value] of Object.entries(want)) {
      assert.deepEqual(properties[key][field as keyof Property], value, `${key}.${field}`);
    }
    assert.ok((properties[key].description ?? properties[key].markdownDescription ?? "").length > 20, key);
  }
  assert.equal(manifest.contributes.configuration.title, "CodeBurn");
});

test("commands in category CodeBurn with docs/editor.md's titles, distinct from the server's", () => {
  const titles = manifest.contributes.commands.map((c) => c.title);
  for (const title of [
    "Import Cursor CSV",
    "Sync Cursor Usage Now",
    "Remove Cursor Import",
    "Refresh",
    "Show Spend Breakdown",
    "Show Logs",
    "Restart Server",
    "Select Python Interpreter",
  ]) {
    assert.ok(titles.includes(title), title);
  }
  for (const command of manifest.contributes.commands) {
    assert.equal(command.category, "CodeBurn");
    assert.ok(command.command.startsWith("codeburn.") && !command.command.startsWith("codeburn.server."));
  }
});

test("activation, engines, pinned dependencies", () => {
  assert.deepEqual(manifest.activationEvents, ["onStartupFinished"]);
  assert.equal(manifest.engines.vscode, "^1.91.0");
  assert.equal(manifest.devDependencies["@types/vscode"], "1.91.0");
  for (const version of [...Object.values(manifest.dependencies), ...Object.values(manifest.devDependencies)]) {
    assert.match(version, /^\d+\.\d+\.\d+$/);
  }
  assert.match(manifest.dependencies["vscode-languageclient"], /^(9|11)\./);
});

test("runs on the UI side first: Cursor's database is on the user's machine, not the remote", () => {
  assert.deepEqual((manifest as { extensionKind?: string[] }).extensionKind, ["ui", "workspace"]);
});

test("packaging runs on Node 20: @vscode/vsce 3.9 (4.x needs Node 22)", () => {
  assert.match(manifest.devDependencies["@vscode/vsce"], /^3\.9\.\d+$/);
});
