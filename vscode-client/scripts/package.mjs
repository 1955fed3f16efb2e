// `npm run package` (and `bash ./dev package`): bundles the Python package, then builds
// codeburn-<version>.vsix with @vscode/vsce 3.9 (pinned; it runs on Node >= 20) on the Node that
// runs this script. No platform-specific binary and nothing downloaded but the pinned wheels pip
// installs into bundled/libs. vsce runs the `vscode:prepublish` script (esbuild, production).
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const MIN_NODE = 20;

const client = join(dirname(fileURLToPath(import.meta.url)), "..");
const major = Number(process.versions.node.split(".")[0]);
if (major < MIN_NODE) {
  console.error(`package: Node ${MIN_NODE} or newer is needed to build the .vsix; this is Node ${process.versions.node}.`);
  process.exit(1);
}

const run = (command, args) => execFileSync(command, args, { cwd: client, stdio: "inherit" });

const { name, version } = JSON.parse(readFileSync(join(client, "package.json"), "utf8"));
const output = process.argv[2] ?? `${name}-${version}.vsix`;
run(process.env.CODEBURN_PYTHON ?? "python3", ["scripts/bundle_python.py"]);
run(process.execPath, [
  join(client, "node_modules", "@vscode", "vsce", "vsce"),
  "package",
  "--no-dependencies",
  "--allow-missing-repository",
  "--skip-license",
  // No repository yet: the README's screenshot stays a relative link (see CHANGELOG.md).
  "--no-rewrite-relative-links",
  "--out",
  output,
]);
console.log(`package: ${join(client, output)}`);
