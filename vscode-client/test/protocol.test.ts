/** The wire names live in src/protocol.ts only; pure modules (src/view) never touch the editor. */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";

import { PROTOCOL, SERVER_COMMANDS } from "../src/protocol";

const src = join(__dirname, "..", "..", "src");

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? sources(path) : entry.name.endsWith(".ts") ? [path] : [];
  });
}

/** What a script (server/names.py's test) does to read the names: one `key: "value",` a line. */
function parseLikeAScript(text: string): Record<string, string> {
  const body = /export const PROTOCOL = \{\n([\s\S]*?)\n\} as const;/.exec(text);
  assert.ok(body, "PROTOCOL is `export const PROTOCOL = {` … `} as const;`");
  const names: Record<string, string> = {};
  for (const line of body[1].split("\n")) {
    const trimmed = line.trim();
    if (trimmed === "" || trimmed.startsWith("/**") || trimmed.startsWith("*") || trimmed.startsWith("//")) {
      continue;
    }
    const entry = /^([A-Za-z][A-Za-z0-9]*): "([^"\\]*)",$/.exec(trimmed);
    assert.ok(entry, `not a simple \`key: "value",\` line: ${trimmed}`);
    names[entry[1]] = entry[2];
  }
  return names;
}

test("PROTOCOL reads back with a line-by-line parse, every name with a doc comment", () => {
  const text = readFileSync(join(src, "protocol.ts"), "utf8");
  assert.deepEqual(parseLikeAScript(text), { ...PROTOCOL });
  for (const key of Object.keys(PROTOCOL)) {
    assert.match(text, new RegExp(`\\*/\\n  ${key}: "`), `${key} has a doc comment`);
  }
});

test("SERVER_COMMANDS are exactly the codeburn.server.* names, each once", () => {
  const commands = Object.values(PROTOCOL).filter((v) => v.startsWith("codeburn.server."));
  assert.deepEqual([...SERVER_COMMANDS].sort(), commands.sort());
  assert.equal(new Set(SERVER_COMMANDS).size, SERVER_COMMANDS.length);
  assert.equal(SERVER_COMMANDS.length, 6);
  assert.equal(PROTOCOL.statusMethod, "codeburn/status");
});

test("no wire name is spelled as a string literal outside src/protocol.ts", () => {
  const values = Object.values(PROTOCOL);
  for (const file of sources(src)) {
    if (relative(src, file) === "protocol.ts") {
      continue;
    }
    const text = readFileSync(file, "utf8");
    for (const value of values) {
      for (const quote of ['"', "'"]) {
        assert.ok(!text.includes(`${quote}${value}${quote}`), `${relative(src, file)} spells ${value}`);
      }
    }
  }
});

test("src/view and src/protocol.ts import neither vscode, the language client nor src/host", () => {
  const pure = [join(src, "protocol.ts"), ...sources(join(src, "view"))];
  assert.ok(pure.length > 5);
  for (const file of pure) {
    const text = readFileSync(file, "utf8");
    const imports = [...text.matchAll(/(?:from|import|require\()\s*["']([^"']+)["']/g)].map((m) => m[1]);
    for (const name of imports) {
      assert.ok(
        name !== "vscode" && !name.startsWith("vscode-languageclient") && !name.includes("/host/") && !name.startsWith("../host"),
        `${relative(src, file)} imports ${name}`,
      );
    }
  }
});
