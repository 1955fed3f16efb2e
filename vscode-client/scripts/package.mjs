// `npm run package`: bundles the Python package, then builds the .vsix with @vscode/vsce on
// Node >= 22 (this Node, or Node 24 from scripts/install-tools.sh); vsce runs the
// `vscode:prepublish` script, which bundles the extension with esbuild.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const client = join(dirname(fileURLToPath(import.meta.url)), "..");
const run = (command, args, options = {}) =>
  execFileSync(command, args, { cwd: client, stdio: "inherit", ...options });

function node22() {
  if (Number(process.versions.node.split(".")[0]) >= 22) {
    return process.execPath;
  }
  const out = execFileSync(join(client, "scripts", "install-tools.sh"), ["--node-only"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const line = out.split("\n").find((l) => l.startsWith("NODE24="));
  if (!line) {
    throw new Error("install-tools.sh did not report a Node 24 binary");
  }
  return line.slice("NODE24=".length);
}

const { name, version } = JSON.parse(readFileSync(join(client, "package.json"), "utf8"));
const output = process.argv[2] ?? `${name}-${version}.vsix`;
run(process.env.CODEBURN_PYTHON ?? "python3", ["scripts/bundle_python.py"]);
const node = node22();
run(node, [
  join(client, "node_modules", "@vscode", "vsce", "vsce"),
  "package",
  "--no-dependencies",
  "--allow-missing-repository",
  "--skip-license",
  "--out",
  output,
], { env: { ...process.env, PATH: `${dirname(node)}:${process.env.PATH}` } });
console.log(`package: ${join(client, output)}`);
