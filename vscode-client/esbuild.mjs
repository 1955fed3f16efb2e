// Bundles the extension (dist/extension.js) or, with --tests, the unit tests (out/test/), where
// `vscode` resolves to a small shim so that activation and commands run without an editor.
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";

import * as esbuild from "esbuild";

const production = process.argv.includes("--production");
const tests = process.argv.includes("--tests");

const common = {
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node18",
  logLevel: "warning",
};

if (tests) {
  rmSync("out", { recursive: true, force: true });
  const entryPoints = readdirSync("test")
    .filter((name) => name.endsWith(".test.ts"))
    .map((name) => join("test", name));
  await esbuild.build({
    ...common,
    entryPoints,
    outdir: "out/test",
    sourcemap: "inline",
    alias: { vscode: "./test/shim/vscode.ts" },
  });
} else {
  await esbuild.build({
    ...common,
    entryPoints: ["src/extension.ts"],
    outfile: "dist/extension.js",
    external: ["vscode"],
    sourcemap: !production,
    minify: production,
  });
}
