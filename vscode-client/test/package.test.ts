/** What the VSIX carries: `vsce ls` against an allow-list (.vscodeignore decides). */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";

import manifest from "../package.json";

const CLIENT = join(__dirname, "..", "..");
const VSCE = join(CLIENT, "node_modules", "@vscode", "vsce", "vsce");

/** Every file the package may hold; anything else is a mistake (a new file at the root, say). */
const ALLOWED = [
  /^package\.json$/,
  /^README\.md$/,
  /^CHANGELOG\.md$/,
  /^LICENSE$/,
  /^media\/(icon|screenshot)\.png$/,
  /^dist\/extension\.js$/,
  /^bundled\/libs\/.+/,
];
/** Never shipped, even inside bundled/. */
const DENIED = [/\.map$/, /\/sboms\//, /^bundled\/libs\/[^/]+\/tests?\//, /\/providers\/(samples\/|sample_[^/]*\.py$|[^/]*_writer\.py$)/, /__pycache__|\.pyc$/];

function vsceLs(cwd: string): string[] {
  return execFileSync(process.execPath, [VSCE, "ls", "--no-dependencies"], { cwd, encoding: "utf8" })
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "");
}

function problems(files: string[]): string[] {
  return files.filter((f) => !ALLOWED.some((a) => a.test(f)) || DENIED.some((d) => d.test(f)));
}

test("the package's own files: allow-listed, with README, CHANGELOG, icon and screenshot", () => {
  const files = vsceLs(CLIENT);
  assert.deepEqual(problems(files), []);
  for (const wanted of ["package.json", "README.md", "CHANGELOG.md", "LICENSE", "media/icon.png", "media/screenshot.png"]) {
    assert.ok(files.includes(wanted), wanted);
  }
});

test(".vscodeignore keeps out SBOMs, sample writers, tests, source maps and the development files", () => {
  const dir = mkdtempSync(join(tmpdir(), "cb-vsce-"));
  for (const file of ["package.json", ".vscodeignore", "README.md", "CHANGELOG.md", "LICENSE", "media/icon.png", "media/screenshot.png"]) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    copyFileSync(join(CLIENT, file), join(dir, file));
  }
  const shipped = [
    "dist/extension.js",
    "bundled/libs/codeburn/server/lsp.py",
    "bundled/libs/codeburn/providers/cursor_reader.py",
    "bundled/libs/httpx-0.28.1.dist-info/METADATA",
    "bundled/libs/h11/_writers.py",
  ];
  const kept = [
    "dist/extension.js.map",
    "bundled/libs/filelock-4.3.1.dist-info/sboms/filelock.cyclonedx.json",
    "bundled/libs/codeburn/providers/sample_generator.py",
    "bundled/libs/codeburn/providers/cursor3_writer.py",
    "bundled/libs/codeburn/providers/samples/profile.py",
    "bundled/libs/certifi/tests/test_certify.py",
    "bundled/libs/codeburn/server/__pycache__/lsp.cpython-311.pyc",
    "src/extension.ts",
    "test/python.test.ts",
    "scripts/make_icon.py",
    "out/test/python.test.js",
    "test-artifacts/statusbar.png",
    "media/draft.png",
    "node_modules/esbuild/package.json",
    "DEVELOPMENT.md",
    "esbuild.mjs",
    "tsconfig.json",
    "package-lock.json",
    "requirements-bundle.txt",
    "codeburn-0.0.9.vsix",
  ];
  for (const file of [...shipped, ...kept]) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), "x");
  }
  const files = vsceLs(dir);
  assert.deepEqual(
    [...files].sort(),
    [...shipped, "package.json", "README.md", "CHANGELOG.md", "LICENSE", "media/icon.png", "media/screenshot.png"].sort(),
  );
  assert.deepEqual(problems(files), []);
  assert.deepEqual(problems(kept), kept, "the allow-list itself refuses every kept-out file");
});

test("marketplace fields: icon, categories, no private flag, no invented URLs", () => {
  const fields = manifest as Record<string, unknown>;
  assert.equal(fields.icon, "media/icon.png");
  assert.equal(fields.private, undefined);
  assert.ok((manifest.categories as string[]).includes("AI"));
  for (const invented of ["repository", "homepage", "bugs"]) {
    assert.equal(fields[invented], undefined, invented);
  }
  assert.equal(manifest.publisher, "codeburn");
});
