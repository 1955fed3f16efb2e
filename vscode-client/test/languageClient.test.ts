/**
 * The real vscode-languageclient against small Python stand-ins for the server: it must never pop
 * up its own notifications (docs/editor.md) — not when the server cannot start, not when it crashes and
 * is given up on, not when a setting changes while it is down.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeEach, test } from "node:test";

import * as vscode from "vscode";

import { languageClientFactory } from "../src/host/languageClient";
import type { ConnectionEvents } from "../src/view/connection";
import { shim } from "./shim/vscode";

const PYTHON = execFileSync(process.env.CODEBURN_PYTHON ?? "python3", ["-c", "import sys; print(sys.executable)"], {
  encoding: "utf8",
}).trim();

/** A minimal LSP server: answers initialize, registers for settings changes, then maybe crashes. */
const FAKE_SERVER = String.raw`
import json, sys
def read():
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            sys.exit(0)
        if line in (b"\r\n", b"\n"):
            break
        key, _, value = line.decode().partition(":")
        if key.strip().lower() == "content-length":
            length = int(value)
    return json.loads(sys.stdin.buffer.read(length))
def send(message):
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()
crash = sys.argv[1] == "crash"
seen = sys.argv[2] if len(sys.argv) > 2 else None
while True:
    message = read()
    method = message.get("method")
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": message["id"], "result": {"capabilities": {}}})
    elif method == "initialized":
        send({"jsonrpc": "2.0", "id": "reg", "method": "client/registerCapability", "params": {"registrations": [
            {"id": "settings", "method": "workspace/didChangeConfiguration", "registerOptions": {"section": "codeburn"}}]}})
    elif message.get("id") == "reg" and crash:
        sys.stderr.write("Traceback (most recent call last):\nRuntimeError: simulated crash\n")
        sys.exit(1)
    elif method == "workspace/didChangeConfiguration" and seen:
        with open(seen, "a") as out:
            out.write("changed\n")
    elif method == "shutdown":
        send({"jsonrpc": "2.0", "id": message["id"], "result": None})
    elif method == "exit":
        sys.exit(0)
`;

function fakeServer(): string {
  const file = join(mkdtempSync(join(tmpdir(), "cb-lsp-")), "server.py");
  writeFileSync(file, FAKE_SERVER);
  return file;
}

function recorder() {
  const seen = { running: 0, restarting: 0, stopped: [] as string[] };
  let stopped: () => void = () => undefined;
  const gaveUp = new Promise<void>((resolve) => {
    stopped = resolve;
  });
  const events: ConnectionEvents = {
    onStatus: () => undefined,
    onRunning: () => void seen.running++,
    onRestarting: () => void seen.restarting++,
    onStopped: (message) => {
      seen.stopped.push(message);
      stopped();
    },
  };
  return { seen, events, gaveUp };
}

function connect(args: string[], events: ConnectionEvents) {
  const log = vscode.window.createOutputChannel("CodeBurn", { log: true }) as unknown as vscode.LogOutputChannel;
  return languageClientFactory(log)({ command: PYTHON, args, cwd: tmpdir(), env: { ...process.env } }, () => ({}), events);
}

beforeEach(() => shim.reset());

test("a server that dies before answering: start() rejects with its error, no pop-up", { timeout: 30_000 }, async () => {
  const { events } = recorder();
  const code = "import sys; sys.stderr.write('Traceback (most recent call last):\\nRuntimeError: simulated crash\\n'); sys.exit(1)";
  const connection = connect(["-c", code], events);
  await assert.rejects(connection.start(), /RuntimeError: simulated crash/);
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.deepEqual(shim.messages, []);
  assert.ok(shim.logLines.some((line) => line.includes("simulated crash")));
  await connection.stop();
});

test("a server that keeps crashing after it ran: restarted, then given up on; a setting changed meanwhile; no pop-up", { timeout: 30_000 }, async () => {
  const { seen, events, gaveUp } = recorder();
  const connection = connect([fakeServer(), "crash"], events);
  await connection.start();
  await gaveUp;
  const ran = seen.running;
  shim.setSetting("codeburn.budget.daily", 5); // the client's settings sync must not toast either
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(seen.running, ran, "a settings change started the given-up server again");
  assert.ok(seen.running >= 1);
  assert.equal(seen.restarting, 4);
  assert.equal(seen.stopped.length, 1);
  assert.match(seen.stopped[0], /stopped 5 times in 3 minutes .*RuntimeError: simulated crash/);
  assert.deepEqual(shim.messages, []);
  await connection.stop();
});

test("a crashed server whose interpreter is gone cannot be restarted: said once, no pop-up", { timeout: 30_000 }, async () => {
  const { seen, events, gaveUp } = recorder();
  const dir = mkdtempSync(join(tmpdir(), "cb-lsp-gone-"));
  const wrapper = join(dir, "python-wrapper");
  // Runs the crashing stand-in, removing itself first: the automatic restart finds nothing to run.
  writeFileSync(wrapper, `#!/bin/sh\nrm -f "$0"\nexec "${PYTHON}" "${fakeServer()}" crash\n`, { mode: 0o755 });
  const log = vscode.window.createOutputChannel("CodeBurn", { log: true }) as unknown as vscode.LogOutputChannel;
  const connection = languageClientFactory(log)({ command: wrapper, args: [], cwd: dir, env: { ...process.env } }, () => ({}), events);
  await connection.start();
  await gaveUp;
  await new Promise((resolve) => setTimeout(resolve, 200));
  assert.equal(seen.running, 1);
  assert.equal(seen.restarting, 1);
  assert.deepEqual(seen.stopped.length, 1);
  assert.match(seen.stopped[0], /exited and could not be restarted .*Restart Server/);
  assert.deepEqual(shim.messages, []);
  await connection.stop();
});

test("a server that runs: settings changes reach it without a pop-up, and it stops cleanly", { timeout: 30_000 }, async () => {
  const { seen, events } = recorder();
  const seenFile = join(mkdtempSync(join(tmpdir(), "cb-lsp-seen-")), "changes");
  const connection = connect([fakeServer(), "stay", seenFile], events);
  await connection.start();
  await new Promise((resolve) => setTimeout(resolve, 200));
  const changes = () => (existsSync(seenFile) ? readFileSync(seenFile, "utf8").split("\n").length - 1 : 0);
  const before = changes(); // the client sends one as soon as the server registers
  shim.setSetting("codeburn.budget.daily", 7);
  shim.setSetting("editor.fontSize", 20); // not our section: not sent
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(changes(), before + 1, "one workspace/didChangeConfiguration per change of the codeburn section");
  await connection.stop();
  assert.equal(seen.running, 1);
  assert.deepEqual(seen.stopped, []);
  assert.deepEqual(shim.messages, []);
});
