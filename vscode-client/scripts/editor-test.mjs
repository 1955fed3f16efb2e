// Real-editor test: installs the built .vsix into code-server, opens it in headless Chromium and
// checks, against a fixture Cursor profile built by the project's own generator and CLI:
//   0. with a profile whose only spend is today, the breakdown's "this month" chart spans the whole
//      month with one bar: bars 8–24 px wide, text of text size, the chart drawn 1:1, not stretched;
//   1. the CodeBurn status bar item shows the figures `codeburn status` reports for the fixture;
//   2. its tooltip has the periods and the command links;
//   3. "CodeBurn: Import Cursor CSV" from the palette (file supplied by CODEBURN_TEST_IMPORT_PATH,
//      range prompt prefilled with the export's days) reports the import, and the status bar
//      changes to the figures `codeburn status` reports after the same import;
//   4. clicking the item opens the breakdown webview (tables by model and by project); its period
//      picker shows the last 30 days: 31 day slots, bars of the same sane size, projects by folder
//      name, and a Top conversations table with the report's conversations (ten at most);
//   5. the Settings UI finds codeburn.cursorSync.enabled; unticking it writes false into the user
//      settings.json and cursorSync: false into config.json through the server, and ticking it
//      again says CODEBURN_CURSOR_SYNC=0 keeps sync off.
//   6. a Python too old shows "Python needed" and one notification with "Pick Python…" and
//      "How to install"; Pick Python… lists a uv-managed Python (a shim reporting 3.13.0) and
//      Browse…; picking it writes the setting and the figures return without a reload; a server
//      that dies at start shows "server stopped"; the real interpreter brings the figures back;
//   8. Claude Code and Codex beside Cursor (the sample writer's histories, handed to a restarted
//      server through CLAUDE_CONFIG_DIR and CODEX_HOME, with a cache folder of its own, no
//      import): the status bar shows the figures
//      `codeburn status` reports with them, the tooltip one line per tool, and the breakdown of the
//      last 30 days a Tools column with the folder all three used as one project row;
//      a new Claude Code log and its removal reach the status bar within one timer step;
//   9. the breakdown's billing-cycle view, with a loopback cursor.com's usage summary: cumulative
//      spend, the projection and its band, the included-usage line and the on-demand limit;
//   7. none of that produced a vscode-languageclient notification (the notification center).
// Screenshots go to vscode-client/test-artifacts/. Only 127.0.0.1 is contacted.
//
//   npm run test:editor [-- --keep]      (after `npm run package`)
import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

import * as esbuild from "esbuild";
import { chromium } from "playwright-core";

const CLIENT = join(dirname(fileURLToPath(import.meta.url)), "..");
const ARTIFACTS = join(CLIENT, "test-artifacts");
const KEEP = process.argv.includes("--keep");
const CHROMIUM = process.env.CODEBURN_CHROMIUM ?? "/usr/bin/chromium";
const PYTHON = process.env.CODEBURN_PYTHON ?? "python3";
const FIRST_ITEM_TIMEOUT = 120_000;
const STEP_TIMEOUT = 60_000;

function log(message) {
  console.log(`editor-test: ${message}`);
}

/** Node 24 and code-server, installed (or found) outside the clone. */
function tools() {
  const out = execFileSync(join(CLIENT, "scripts", "install-tools.sh"), {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  });
  const value = (key) => out.split("\n").find((l) => l.startsWith(`${key}=`))?.slice(key.length + 1);
  return { node: value("NODE24"), codeServer: value("CODE_SERVER") };
}

/** The extension's own pure modules, so that expected texts use the same formatting. */
async function extensionModules(dir) {
  const outfile = join(dir, "modules.mjs");
  await esbuild.build({
    stdin: {
      contents:
        'export { computeView, toolLines } from "./src/view/statusView";\nexport { inferCsvRange, formatRange } from "./src/view/csvRange";',
      resolveDir: CLIENT,
      loader: "ts",
    },
    bundle: true,
    format: "esm",
    platform: "node",
    outfile,
    logLevel: "warning",
  });
  return import(pathToFileURL(outfile).href);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function makeRun() {
  const root = mkdtempSync(join(tmpdir(), "codeburn-editor-"));
  const dirs = {};
  for (const name of ["home", "config", "data", "tmp", "user-data", "extensions", "workspace", "cache", "cbconfig"]) {
    dirs[name] = join(root, name);
    mkdirSync(dirs[name], { recursive: true });
  }
  writeFileSync(join(dirs.workspace, "README.md"), "CodeBurn editor test workspace\n");
  return { root, dirs };
}

function runEnv(run, extra = {}) {
  const env = { ...process.env };
  for (const key of Object.keys(env)) {
    if (key.startsWith("CODEBURN_") || key.startsWith("VSCODE_")) {
      delete env[key];
    }
  }
  return {
    ...env,
    HOME: run.dirs.home,
    XDG_CONFIG_HOME: run.dirs.config,
    XDG_DATA_HOME: run.dirs.data,
    TMPDIR: run.dirs.tmp,
    ...extra,
  };
}

function writeUserSettings(run, extra) {
  const settings = {
    "security.workspace.trust.enabled": false,
    "workbench.startupEditor": "none",
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "chat.disableAIFeatures": true,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    // The dark theme most people use: screenshots show the chart's dark-theme colours.
    "workbench.colorTheme": "Default Dark Modern",
    "workbench.tips.enabled": false,
    // The Settings search stays local: one search, one render of its results (see step 5).
    "workbench.settings.enableNaturalLanguageSearch": false,
    ...extra,
  };
  const dir = join(run.dirs["user-data"], "User");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "settings.json"), JSON.stringify(settings, null, 2));
}

async function waitForHealth(port, child) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`code-server exited with ${child.exitCode}`);
    }
    try {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      if (response.ok) {
        return;
      }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error("code-server did not answer /healthz within 60 s");
}

function stopGroup(child) {
  if (child && child.exitCode === null) {
    try {
      process.kill(-child.pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
}

/** Files the extension host wrote for the CodeBurn log channel (printed when a step fails). */
function extensionLogs(run) {
  const found = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        walk(path);
      } else if (/CodeBurn|exthost\.log/.test(entry.name)) {
        found.push(path);
      }
    }
  };
  const logs = join(run.dirs["user-data"], "logs");
  if (existsSync(logs)) {
    walk(logs);
  }
  return found.map((file) => `--- ${file}\n${readFileSync(file, "utf8").slice(-6000)}`).join("\n");
}

/** Visible text of the CodeBurn status bar item (the codicon is a separate span). */
function statusItem(page) {
  return page.locator(".statusbar-item").filter({ has: page.locator(".codicon-flame, .codicon-sync") }).filter({ hasText: /today|month|CodeBurn/ });
}

async function expectStatusText(page, expected, timeout) {
  const item = statusItem(page);
  await item.filter({ hasText: expected }).first().waitFor({ timeout });
  const text = (await item.first().innerText()).trim();
  if (text !== expected) {
    throw new Error(`status bar shows "${text}", expected "${expected}"`);
  }
  return item.first();
}

async function runPaletteCommand(page, title) {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ timeout: STEP_TIMEOUT });
  await input.fill(`>${title}`);
  const row = page.locator(".quick-input-list .monaco-list-row").filter({ hasText: title }).first();
  await row.waitFor({ timeout: STEP_TIMEOUT });
  await row.click();
}

async function drive(page, run, fixture, modules) {
  const view = (status) =>
    modules
      .computeView({ state: { kind: "status", status }, show: "both", busy: false, now: new Date(), syncSetting: true })
      .text.replace(/^\$\([^)]*\)\s*/, "");
  const before = view(fixture.before);
  const after = view(fixture.after);
  const oneDayText = view(fixture.oneDay);
  log(`expecting "${oneDayText}" (one day of spend), then "${before}", then "${after}" after the import`);

  // -1. No database where the setting points, nothing imported: "no Cursor data" in the normal
  // colour, the tooltip naming the path looked at and the setting to change.
  const noData = statusItem(page).filter({ hasText: "no Cursor data" }).first();
  await noData.waitFor({ timeout: FIRST_ITEM_TIMEOUT });
  await noData.hover();
  await page.locator(".monaco-hover, .workbench-hover").filter({ hasText: "no-cursor" }).first().waitFor({ timeout: STEP_TIMEOUT });
  await page.screenshot({ path: join(ARTIFACTS, "no-data.png") });
  await page.keyboard.press("Escape");
  await page.mouse.move(10, 10);
  log("no database at the set path: \"no Cursor data\", the path in the tooltip");
  run.machineExtra = { "codeburn.cursor.databasePath": run.oneDayDb };
  setMachineInterpreter(run, run.interpreter);

  // 0. A profile whose only spend is today: this month's chart has one bar, of a sane size.
  await expectStatusText(page, oneDayText, FIRST_ITEM_TIMEOUT);
  await statusItem(page).first().click();
  const frame = page.frameLocator("iframe.webview.ready").frameLocator("iframe#active-frame");
  await pickPeriod(frame, "month", null, (g) => g.drawn === 1);
  const oneDay = await chartGeometry(frame);
  expectSaneChart(oneDay, oneDay.slots, "one day of spend");
  if (oneDay.slots < 28) {
    throw new Error(`this month's chart spans ${oneDay.slots} days, not the whole month`);
  }
  log(`one day of spend: ${oneDay.first} to ${oneDay.last}, 1 bar ${oneDay.barWidths.join("/")} px wide, label ${oneDay.labelHeight} px high`);
  await page.screenshot({ path: join(ARTIFACTS, "breakdown-one-day.png") });
  // Close the panel and move away: the next steps start as a fresh window would.
  await page.locator(".part.sidebar").first().click(); // focus out of the webview
  await runPaletteCommand(page, "View: Close All Editors");
  await page.locator(".tabs-container .tab").filter({ hasText: "CodeBurn: Spend Breakdown" }).waitFor({ state: "detached", timeout: STEP_TIMEOUT });
  await page.mouse.move(10, 10);
  run.machineExtra = {}; // now the fixture's profile, from the user settings
  setMachineInterpreter(run, run.interpreter);

  // 1. The figures of the fixture.
  const item = await expectStatusText(page, before, FIRST_ITEM_TIMEOUT);
  log("status bar shows the fixture's figures");
  await page.locator(".part.statusbar").screenshot({ path: join(ARTIFACTS, "statusbar-before-import.png") });

  // 2. The tooltip.
  await item.hover();
  const hover = page.locator(".monaco-hover, .workbench-hover").filter({ hasText: "Cursor AI spend" }).first();
  await hover.waitFor({ timeout: STEP_TIMEOUT });
  const hoverText = await hover.innerText();
  for (const wanted of ["Today:", "This month:", "Sync now", "Import CSV", "Show breakdown", "Settings"]) {
    if (!hoverText.includes(wanted)) {
      throw new Error(`tooltip lacks "${wanted}": ${hoverText}`);
    }
  }
  log("tooltip has the periods and the links");
  await page.screenshot({ path: join(ARTIFACTS, "tooltip.png") });
  await page.keyboard.press("Escape");
  await page.mouse.move(10, 10);

  // 3. Import from the palette.
  await runPaletteCommand(page, "CodeBurn: Import Cursor CSV");
  const range = modules.formatRange(modules.inferCsvRange(readFileSync(fixture.csv, "utf8")));
  const rangeInput = page.locator(".quick-input-widget input");
  await page.locator(".quick-input-widget").filter({ hasText: "range this export covers" }).waitFor({ timeout: STEP_TIMEOUT });
  const prefilled = await rangeInput.inputValue();
  if (prefilled !== range) {
    throw new Error(`range prompt prefilled with "${prefilled}", expected "${range}"`);
  }
  await rangeInput.press("Enter");
  const notice = page.locator(".notifications-toasts").filter({ hasText: `CodeBurn imported ${fixture.rows} rows` });
  await notice.first().waitFor({ timeout: STEP_TIMEOUT });
  log(`import reported: ${(await notice.first().innerText()).split("\n")[0]}`);
  await expectStatusText(page, after, STEP_TIMEOUT);
  log("status bar changed to the imported figures");
  await page.locator(".part.statusbar").screenshot({ path: join(ARTIFACTS, "statusbar.png") });
  await page.keyboard.press("Escape");
  // The imported rows belong to no folder: the top project line says how much is not in one.
  await item.hover();
  await page.locator(".monaco-hover, .workbench-hover").filter({ hasText: "not tied to a project" }).first().waitFor({ timeout: STEP_TIMEOUT });
  await page.screenshot({ path: join(ARTIFACTS, "tooltip-after-import.png") });
  log("after the import the tooltip's top project line says what is not tied to a project");
  await page.keyboard.press("Escape");
  await page.mouse.move(10, 10);

  // 4. The breakdown webview.
  await statusItem(page).first().click();
  await frame.locator("h2", { hasText: "By project" }).waitFor({ timeout: STEP_TIMEOUT });
  const rows = await frame.locator("table tbody tr").count();
  const bars = await frame.locator("svg.chart g.day").count();
  if (rows < 2 || bars < 1) {
    throw new Error(`breakdown has ${rows} table rows and ${bars} day bars`);
  }
  log(`breakdown webview: ${bars} day bars, ${rows} table rows`);
  await page.screenshot({ path: join(ARTIFACTS, "breakdown.png") });

  // 4b. The period picker: the last 30 days are 31 day slots, bars of the same sane size.
  await pickPeriod(frame, "30days", 31);
  const thirty = await chartGeometry(frame);
  expectSaneChart(thirty, 31, "31 days");
  if (thirty.drawn < 2) {
    throw new Error(`the last 30 days show ${thirty.drawn} day(s) with spend; the fixture has several`);
  }
  log(`last 30 days: ${thirty.first} to ${thirty.last}, ${thirty.drawn} days with spend, bars ${thirty.barWidths.join("/")} px wide`);
  await page.screenshot({ path: join(ARTIFACTS, "breakdown-30days.png") });
  // The sample's local projects (before the import's days) show by folder name, not path slug.
  const projectNames = await frame.locator("h2:has-text('By project') + table tbody tr td:first-child").allInnerTexts();
  const local = projectNames.filter((name) => name !== "Cursor (imported)");
  if (local.length === 0 || projectNames.some((name) => name.startsWith("-"))) {
    throw new Error(`the project table shows ${JSON.stringify(projectNames)}: folder names expected, not path slugs`);
  }
  log(`projects by name: ${projectNames.join(", ")}`);
  // The Top conversations table: the report's conversations, ten at most, each with a title.
  const conversationRows = frame.locator("h2:has-text('Top conversations') + table tbody tr");
  const wantedRows = Math.min(10, fixture.conversations30);
  if (wantedRows > 0) {
    await conversationRows.first().waitFor({ timeout: STEP_TIMEOUT });
  }
  const shownRows = await conversationRows.count();
  const titles = await conversationRows.locator("td:first-child").allInnerTexts();
  if (fixture.conversations30 < 1 || shownRows !== wantedRows || titles.some((t) => t.trim() === "")) {
    throw new Error(`Top conversations shows ${shownRows} row(s) ${JSON.stringify(titles)}; the report has ${fixture.conversations30}`);
  }
  log(`top conversations: ${shownRows} of ${fixture.conversations30}: ${titles.join(", ")}`);
  await frame.locator("h2", { hasText: "Top conversations" }).scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(ARTIFACTS, "breakdown-conversations.png") });

  // 5. Settings: find the sync switch, untick it, tick it again.
  await runPaletteCommand(page, "Preferences: Open Settings (UI)");
  const search = page.locator(".settings-editor .search-container .monaco-editor");
  await search.waitFor({ timeout: STEP_TIMEOUT });
  const setting = page.locator(`.settings-editor .setting-item-contents[data-key="${SYNC_KEY}"]`);
  // The whole query in one input event (typed key by key on a slow machine, prefixes start searches
  // of their own), and the search again whenever the row has to be drawn afresh (see setSetting).
  const searchForSetting = async () => {
    await search.click();
    await page.keyboard.press("Control+a");
    await page.keyboard.insertText(SYNC_KEY);
    await setting.waitFor({ timeout: STEP_TIMEOUT });
    await page.locator(".settings-editor .settings-count-widget").filter({ hasText: "1 Setting Found" }).waitFor({ timeout: STEP_TIMEOUT });
  };
  await searchForSetting();
  await page.locator(".settings-editor").screenshot({ path: join(ARTIFACTS, "settings.png") });
  const checkbox = setting.locator(".setting-value-checkbox");
  const configFile = join(run.dirs.cbconfig, "config.json");
  const userSettings = join(run.dirs["user-data"], "User", "settings.json");
  const sync = { checkbox, file: userSettings, redraw: searchForSetting };
  await setSetting(sync, false);
  await waitFor(() => readConfig(configFile)?.cursorSync === false, "config.json to say cursorSync: false");
  log("unticking the setting wrote false to settings.json and cursorSync: false to config.json");
  await setSetting(sync, true);
  await waitFor(() => readConfig(configFile)?.cursorSync === true, "config.json to say cursorSync: true");
  await page.locator(".notifications-toasts").filter({ hasText: "CODEBURN_CURSOR_SYNC=0" }).first().waitFor({ timeout: STEP_TIMEOUT });
  log("ticking it again wrote cursorSync: true and said the environment keeps sync off");

  // 6. Failure states: a Python too old, then one whose server dies at start, then the real one.
  const bin = join(run.dirs.home, "bin");
  mkdirSync(bin, { recursive: true });
  const oldPython = join(bin, "python-old");
  writeFileSync(oldPython, "#!/bin/sh\necho 3.9.2\n", { mode: 0o755 });
  const brokenPython = join(bin, "python-broken");
  writeFileSync(
    brokenPython,
    '#!/bin/sh\nif [ "$1" = "-c" ]; then echo 3.12.1; exit 0; fi\necho "RuntimeError: simulated crash" >&2\nexit 1\n',
    { mode: 0o755 },
  );
  await page.keyboard.press("Escape");
  setMachineInterpreter(run, oldPython);
  await expectTrouble(page, "CodeBurn: Python needed", "Python 3.9.2");
  log("a Python too old shows \"CodeBurn: Python needed\"");

  // 6b. The one notification offers Pick Python…: the quick pick lists what discovery finds (a
  // uv-managed shim reporting 3.13.0), and picking it brings the figures back without a reload.
  const offer = page.locator(".notifications-toasts .notification-toast").filter({ hasText: "Python 3.9.2" }).first();
  await offer.waitFor({ timeout: STEP_TIMEOUT });
  for (const button of ["Pick Python…", "How to install"]) {
    if ((await offer.locator(".monaco-button", { hasText: button }).count()) === 0) {
      throw new Error(`the Python notification lacks "${button}": ${await offer.innerText()}`);
    }
  }
  await page.screenshot({ path: join(ARTIFACTS, "python-needed.png") });
  await offer.locator(".monaco-button", { hasText: "Pick Python…" }).click();
  const pick = page.locator(".quick-input-widget").filter({ hasText: "Python for the language server" });
  await pick.waitFor({ timeout: STEP_TIMEOUT });
  const choice = page.locator(".quick-input-list .monaco-list-row").filter({ hasText: "Python 3.13.0" }).first();
  await choice.waitFor({ timeout: STEP_TIMEOUT });
  if ((await page.locator(".quick-input-list .monaco-list-row").filter({ hasText: "Browse…" }).count()) === 0) {
    throw new Error("the Python quick pick has no Browse… row");
  }
  await page.screenshot({ path: join(ARTIFACTS, "python-pick.png") });
  await choice.click();
  await expectStatusText(page, after, STEP_TIMEOUT);
  const machineFile = join(run.dirs["user-data"], "Machine", "settings.json");
  if (!run.pathShims.includes(readConfig(machineFile)?.["codeburn.python.interpreter"])) {
    throw new Error(`picking wrote ${JSON.stringify(readConfig(machineFile))}, not ${run.pathShim}`);
  }
  log("Pick Python… listed the uv-managed shim, wrote the setting, and the figures came back without a reload");
  setMachineInterpreter(run, brokenPython);
  await expectTrouble(page, "CodeBurn: server stopped", "simulated crash");
  await page.locator(".part.statusbar").screenshot({ path: join(ARTIFACTS, "statusbar-server-stopped.png") });
  log("a server that dies at start shows \"CodeBurn: server stopped\" with its error");
  setMachineInterpreter(run, run.interpreter);
  await expectStatusText(page, after, STEP_TIMEOUT);
  log("back to the real interpreter: the figures return");

  // 6c. A budget crossed: one message from the server that names it, with ~ on an estimate.
  run.machineExtra = { "codeburn.budget.monthly": 0.01 };
  setMachineInterpreter(run, run.interpreter);
  const budgetToast = page.locator(".notifications-toasts .notification-toast").filter({ hasText: "monthly budget" }).first();
  await budgetToast.waitFor({ timeout: STEP_TIMEOUT });
  log(`budget message: ${(await budgetToast.innerText()).split("\n")[0]}`);
  await page.screenshot({ path: join(ARTIFACTS, "budget-message.png") });
  run.machineExtra = {};
  setMachineInterpreter(run, run.interpreter);

  // 8. Claude Code and Codex beside Cursor. The sample writer's histories (in the run's folder,
  // never the developer's) reach the server only from here on: an interpreter that sets
  // CLAUDE_CONFIG_DIR and CODEX_HOME restarts it, so the steps above counted Cursor alone. It
  // also gives the server a fresh cache folder, as on a machine where the logs were there from
  // the start (days the steps above sealed keep the figures they had; docs/other-tools.md).
  const threeTools = join(bin, "python-three-tools");
  const toolRoots = {
    CLAUDE_CONFIG_DIR: fixture.claudeConfigDir,
    CODEX_HOME: fixture.codexHome,
    CODEBURN_CACHE_DIR: join(run.root, "cache-three-tools"),
  };
  writeFileSync(threeTools, envShim(run.interpreter, toolRoots), { mode: 0o755 });
  setMachineInterpreter(run, threeTools);
  const threeText = view(fixture.threeTools);
  const item3 = await expectStatusText(page, threeText, FIRST_ITEM_TIMEOUT);
  log(`with Claude Code and Codex counted the status bar shows "${threeText}"`);
  await page.mouse.move(10, 10);
  await item3.hover();
  const toolsHover = page.locator(".monaco-hover, .workbench-hover").filter({ hasText: "By tool this month" }).first();
  await toolsHover.waitFor({ timeout: STEP_TIMEOUT });
  const toolsText = (await toolsHover.innerText()).replace(/\s+/g, " ");
  // One line per tool this month, as the extension formats the fixture's status (`- ` is the bullet).
  const toolLines = modules.toolLines(fixture.threeTools).filter((l) => l.startsWith("- ")).map((l) => l.slice(2).replace(/\\/g, ""));
  const missingLines = toolLines.filter((l) => !toolsText.includes(l.replace(/\s+/g, " ")));
  const monthTools = (fixture.threeTools.month.providers ?? []).map((t) => t.name);
  if (missingLines.length > 0 || !toolsText.includes("AI spend") || toolsText.includes("Cursor AI spend")) {
    throw new Error(`the tooltip lacks ${JSON.stringify(missingLines)} or its "AI spend" title: ${toolsText}`);
  }
  for (const name of ["Cursor", "Claude Code", "Codex"]) {
    if (monthTools.includes(name) && !toolLines.some((l) => l.startsWith(`${name} — `))) {
      throw new Error(`no tooltip line for ${name}: ${JSON.stringify(toolLines)}`);
    }
  }
  if (monthTools.length < 3) {
    // The logs cover the last 4 days: in a month's first days some of them are last month's.
    log(`only ${monthTools.join(", ")} have calls this month (the month began less than 4 days ago)`);
  }
  log(`tooltip, one line per tool: ${toolLines.join(" | ")}`);
  await page.screenshot({ path: join(ARTIFACTS, "tooltip-three-tools.png") });
  await page.keyboard.press("Escape");
  await page.mouse.move(10, 10);

  // 8b. The breakdown of the last 30 days: a Tools column, and the folder used from all three
  // tools is one project row split by tool.
  await page.locator(".part.sidebar").first().click();
  await runPaletteCommand(page, "View: Close All Editors");
  await page.locator(".tabs-container .tab").filter({ hasText: "CodeBurn: Spend Breakdown" }).waitFor({ state: "detached", timeout: STEP_TIMEOUT });
  await statusItem(page).first().click();
  await pickPeriod(frame, "30days", 31);
  const sharedRow = await waitForFrame(frame, "the project row of all three tools", async () => {
    const headers = await frame.locator("h2:has-text('By project') + table thead th").allInnerTexts();
    const rows = await frame.locator("h2:has-text('By project') + table tbody tr").evaluateAll((trs) =>
      trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.innerText.trim())),
    );
    const tools = headers.indexOf("Tools");
    const shared = rows.filter((cells) => cells[0] === fixture.sharedProject);
    const ok =
      tools === 1 &&
      shared.length === 1 &&
      ["Cursor", "Claude Code", "Codex"].every((name) => shared[0][tools].split(" · ").some((part) => part.startsWith(`${name} `)));
    return ok ? shared[0] : undefined;
  });
  const models = await frame.locator("h2:has-text('By model') + table tbody tr td:nth-child(2)").allInnerTexts();
  for (const name of ["Cursor", "Claude Code", "Codex"]) {
    if (!models.includes(name)) {
      throw new Error(`the By model table has no ${name} row (providers ${JSON.stringify([...new Set(models)])})`);
    }
  }
  log(`breakdown: one "${sharedRow[0]}" row for three tools: ${sharedRow[1]}`);
  // The projects table at the top of the view (its Tools column), the models above it.
  await frame.locator("h2", { hasText: "By model" }).evaluate((h2) => h2.scrollIntoView({ block: "start" }));
  await page.screenshot({ path: join(ARTIFACTS, "breakdown-three-tools.png") });

  // 8c. A new Claude Code log reaches the status bar at the next timer step (30 s), and its
  // removal too. The server asked code-server to watch the tools' log folders (its log says so);
  // once the editor reports a change it looks at the reported logs only, and until then it lists
  // every log at each step (docs/lsp.md#file-watch): either way within one step.
  await waitFor(
    () => extensionLogs(run).includes("the editor watches the other tools' logs"),
    "the server's log to say the editor watches the tools' logs",
  );
  const watchedLog = join(fixture.claudeConfigDir, "projects", "-srv-watched", "0c5e1a4e-0000-4000-8000-00000000beef.jsonl");
  mkdirSync(dirname(watchedLog), { recursive: true });
  writeFileSync(watchedLog, claudeLine(200_000)); // $3.00 at Sonnet 4.5's $15 per million output
  const grownAt = Date.now();
  const grown = await statusTextOtherThan(page, threeText, 45_000);
  const added = todayDollars(grown) - todayDollars(threeText);
  if (Math.abs(added - 3) > 0.011) {
    throw new Error(`a $3.00 Claude Code request moved today by $${added.toFixed(3)}: "${threeText}" → "${grown}"`);
  }
  log(`a new Claude Code log: "${grown}" after ${((Date.now() - grownAt) / 1000).toFixed(1)} s`);
  rmSync(dirname(watchedLog), { recursive: true });
  await expectStatusText(page, threeText, 45_000);
  const delivers = extensionLogs(run).includes("the editor reports changes to the other tools' logs");
  log(`and its removal: "${threeText}" again; the editor's watch ${delivers ? "reported the changes" : "reported nothing (every log listed at each step)"}`);

  // 9. The billing cycle view. A loopback cursor.com serves a usage summary (a cycle that began 20
  // days ago, so the forecast has its 3 days with calls on any date; included usage and an
  // on-demand limit); its usage events answer 503, so a sync fails and the store stays as it is.
  // The server reads it once signed in (a token in the profile) with sync allowed.
  const cursorCom = await loopbackCursor(cycleSummary(Date.now()));
  const cyclePython = join(bin, "python-cycle");
  writeFileSync(
    cyclePython,
    envShim(run.interpreter, { ...toolRoots, CODEBURN_CURSOR_BASE_URL: cursorCom.url }, ["CODEBURN_CURSOR_SYNC"]),
    { mode: 0o755 },
  );
  signIn(fixture.db);
  setMachineInterpreter(run, cyclePython);
  try {
    const drawn = await waitForFrame(frame, "the cycle view with its projection, band and limits", async () => {
      const select = frame.locator("select#period");
      if ((await select.inputValue({ timeout: 2000 })) !== "cycle") {
        await select.selectOption("cycle", { timeout: 2000 });
      }
      const svg = frame.locator("svg.chart.cycle");
      if ((await svg.count()) !== 1) {
        return undefined;
      }
      const seen = await svg.evaluate((el) => {
        const size = (selector) => {
          const box = el.querySelector(selector)?.getBoundingClientRect();
          return box ? [Math.round(box.width), Math.round(box.height)] : null;
        };
        return {
          rendered: el.ownerDocument.querySelector("select#period option[selected]")?.value,
          summary: el.ownerDocument.querySelector("p.forecast")?.textContent ?? "",
          band: size("polygon.band"),
          projection: size("line.projection"),
          spent: size("polyline.spent"),
          included: el.querySelector("line.included") !== null,
          onDemand: el.querySelector("line.ondemand") !== null,
          labels: [...el.querySelectorAll("text.axis")].map((t) => t.textContent),
        };
      });
      const drawnBox = (box) => box !== null && box[0] > 0;
      return seen.rendered === "cycle" && seen.summary.startsWith("At this pace:") && drawnBox(seen.band) && seen.band[1] > 0 &&
        drawnBox(seen.projection) && drawnBox(seen.spent) && seen.included && seen.onDemand
        ? seen
        : undefined;
    });
    log(`cycle view: "${drawn.summary}", band ${drawn.band.join("×")} px, projection ${drawn.projection.join("×")} px, ${drawn.labels.filter((l) => /included|on-demand/.test(l)).join(", ")}`);
    if (cursorCom.summaryReads() < 1) {
      throw new Error("the cycle view drew limits without reading the loopback usage summary");
    }
    await frame.locator("svg.chart.cycle").scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(ARTIFACTS, "breakdown-cycle.png") });
  } finally {
    await cursorCom.close();
  }

  // 7. No language-client pop-up in any of that: every notification so far is one of ours.
  const texts = await notificationTexts(page);
  const clientToast = texts.filter((t) => CLIENT_TOAST.test(t));
  if (clientToast.length > 0) {
    throw new Error(`language-client notifications appeared: ${JSON.stringify(clientToast)}`);
  }
  log(`no language-client notification (${texts.length} notifications, all CodeBurn's own or the editor's)`);
}

/** A shell script that runs `interpreter` with `set` exported and `unset` removed. */
function envShim(interpreter, set, unset = []) {
  const quote = (value) => `'${String(value).replaceAll("'", "'\\''")}'`;
  return [
    "#!/bin/sh",
    ...unset.map((key) => `unset ${key}`),
    ...Object.entries(set).map(([key, value]) => `export ${key}=${quote(value)}`),
    `exec ${quote(interpreter)} "$@"`,
    "",
  ].join("\n");
}

/** One Claude Code request made now (a line of its log), of `output` Sonnet 4.5 tokens. */
function claudeLine(output) {
  const at = new Date().toISOString();
  const message = {
    id: `msg_watch_${Date.now()}`,
    type: "message",
    role: "assistant",
    model: "claude-sonnet-4-5-20250929",
    content: [{ type: "text", text: "ok" }],
    usage: { input_tokens: 0, output_tokens: output, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 },
  };
  const line = { type: "assistant", sessionId: "0c5e1a4e-0000-4000-8000-00000000beef", cwd: "/srv/watched", timestamp: at, requestId: `req_watch_${Date.now()}`, message };
  return `${JSON.stringify(line)}\n`;
}

/** Today's dollars in the status bar's text ("~$0.750 today · ~$7.44 month"). */
function todayDollars(text) {
  const found = /\$([\d,.]+) today/.exec(text);
  if (!found) {
    throw new Error(`no figure for today in "${text}"`);
  }
  return Number(found[1].replaceAll(",", ""));
}

/** The status bar's text once it is no longer `before`. */
async function statusTextOtherThan(page, before, timeout) {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    const text = (await statusItem(page).first().innerText()).trim();
    if (text !== before && /today/.test(text)) {
      return text;
    }
    await page.waitForTimeout(250);
  }
  throw new Error(`the status bar still shows "${before}" after ${timeout / 1000} s`);
}

/** Polls `check` (its answer, or undefined to keep waiting) while the webview may be replaced. */
async function waitForFrame(frame, what, check) {
  const deadline = Date.now() + STEP_TIMEOUT;
  let lastError;
  while (Date.now() < deadline) {
    try {
      const answer = await check();
      if (answer !== undefined) {
        return answer;
      }
    } catch (error) {
      lastError = error; // the page is being replaced by the next report
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`timed out waiting for ${what}${lastError ? ` (last error: ${lastError.message})` : ""}`);
}

/**
 * cursor.com's usage summary for the cycle view (docs/quota.md): a 30-day cycle that began 20
 * days ago, $20 of included usage (75 % used) and a $20 on-demand limit.
 */
function cycleSummary(now) {
  const start = now - 20 * 86_400_000;
  return {
    billingCycleStart: new Date(start).toISOString(),
    billingCycleEnd: new Date(start + 30 * 86_400_000).toISOString(),
    membershipType: "pro",
    individualUsage: {
      plan: { enabled: true, used: 1500, limit: 2000, remaining: 500, autoPercentUsed: 40, apiPercentUsed: 75, totalPercentUsed: 75 },
      onDemand: { enabled: true, used: 0, limit: 2000, remaining: 2000 },
    },
  };
}

/** A loopback cursor.com: GET /api/usage-summary answers `summary`, everything else 503. */
async function loopbackCursor(summary) {
  const { createServer: createHttpServer } = await import("node:http");
  let reads = 0;
  const server = createHttpServer((request, response) => {
    request.resume();
    if (request.method === "GET" && request.url === "/api/usage-summary") {
      reads += 1;
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify(summary));
    } else {
      response.writeHead(503, { "content-type": "text/plain" });
      response.end("unavailable in this test");
    }
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    summaryReads: () => reads,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Signs the profile in: an (unsigned, made-up) login token in Cursor's global database. */
function signIn(db) {
  const part = (value) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const exp = Math.floor(Date.now() / 1000) + 86_400;
  const token = `${part({ alg: "HS256", typ: "JWT" })}.${part({ sub: "auth0|user_editor_test", exp })}.${part("not-a-signature")}`;
  const code = [
    "import sqlite3, sys",
    "db = sqlite3.connect(sys.argv[1])",
    "db.execute(\"DELETE FROM ItemTable WHERE key = 'cursorAuth/accessToken'\")",
    "db.execute(\"INSERT INTO ItemTable (key, value) VALUES ('cursorAuth/accessToken', ?)\", (sys.stdin.read(),))",
    "db.commit()",
  ].join("\n");
  execFileSync(PYTHON, ["-c", code, db], { input: token, stdio: ["pipe", "ignore", "inherit"] });
}

/** What vscode-languageclient's own toasts say (they all offer "Go to output"). */
const CLIENT_TOAST = /Go to output|couldn't create connection|Connection to server|didChangeConfiguration|Server initialization failed|Restarting server failed|Request \S+ failed/;

/** The text of every notification in the notification center (toasts that hid themselves too). */
async function notificationTexts(page) {
  await runPaletteCommand(page, "Notifications: Show Notifications");
  const center = page.locator(".notifications-center");
  await center.waitFor({ timeout: STEP_TIMEOUT });
  await page.waitForTimeout(500);
  const texts = await center.locator(".notification-list-item").allInnerTexts();
  await page.screenshot({ path: join(ARTIFACTS, "notifications.png") });
  await page.keyboard.press("Escape");
  return texts.map((t) => t.replace(/\s+/g, " ").trim());
}

/** Chooses a period in the breakdown's picker and waits for its chart (`slots` days, `until`). */
async function pickPeriod(frame, period, slots, until = () => true) {
  const deadline = Date.now() + STEP_TIMEOUT;
  let last;
  while (Date.now() < deadline) {
    try {
      const select = frame.locator("select#period");
      if ((await select.inputValue({ timeout: 2000 })) !== period) {
        await select.selectOption(period, { timeout: 2000 });
      }
      last = await chartGeometry(frame);
      if (last.rendered === period && (slots === null || last.slots === slots) && until(last)) {
        return;
      }
    } catch {
      // the page is being replaced by the next report
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`the breakdown did not show ${period} (last chart: ${JSON.stringify(last)})`);
}

/** What the chart measures on screen, in CSS pixels. */
async function chartGeometry(frame) {
  return frame.locator("svg.chart").evaluate((svg) => {
    const box = svg.getBoundingClientRect();
    const bars = [...svg.querySelectorAll("rect.exact, rect.estimated")].filter((r) => r.getBoundingClientRect().height > 0);
    const days = [...svg.querySelectorAll("g.day")];
    const drawn = days.filter((g) => [...g.querySelectorAll("rect.exact, rect.estimated")].some((r) => r.getBoundingClientRect().height > 0));
    const label = svg.querySelector("text.axis").getBoundingClientRect();
    return {
      rendered: svg.ownerDocument.querySelector("select#period option[selected]")?.value, // the page's report
      first: days[0]?.dataset.date,
      last: days.at(-1)?.dataset.date,
      slots: days.length,
      drawn: drawn.length,
      width: Math.round(box.width),
      height: Math.round(box.height),
      barWidths: [...new Set(bars.map((r) => Math.round(r.getBoundingClientRect().width * 10) / 10))],
      tallest: Math.max(0, ...bars.map((r) => r.getBoundingClientRect().height)),
      labelHeight: Math.round(label.height),
    };
  });
}

/** Bars 8–24 px wide, no taller than the chart, a label of text size, the chart not stretched. */
function expectSaneChart(g, slots, what) {
  const problems = [];
  if (g.slots !== slots) problems.push(`${g.slots} day slots, expected ${slots}`);
  if (g.drawn < 1) problems.push("no bar drawn");
  if (g.barWidths.length === 0 || g.barWidths.some((w) => w < 8 || w > 24)) problems.push(`bar widths ${g.barWidths} px`);
  if (g.tallest > 170) problems.push(`a bar ${g.tallest} px tall`);
  if (g.height < 150 || g.height > 260) problems.push(`chart ${g.height} px high`);
  if (Math.abs(g.width - (slots * 20 + 8)) > 2) problems.push(`chart ${g.width} px wide for ${slots} days (stretched?)`);
  if (g.labelHeight < 6 || g.labelHeight > 20) problems.push(`"max" label ${g.labelHeight} px high`);
  if (problems.length > 0) {
    throw new Error(`breakdown chart for ${what}: ${problems.join("; ")}`);
  }
}

/** Machine settings: the interpreter, plus `run.machineExtra` (they win over the user's settings). */
function setMachineInterpreter(run, interpreter) {
  const machine = join(run.dirs["user-data"], "Machine");
  mkdirSync(machine, { recursive: true });
  const settings = { "codeburn.python.interpreter": interpreter, ...run.machineExtra };
  writeFileSync(join(machine, "settings.json"), JSON.stringify(settings, null, 2));
}

/** The item shows a trouble state: exact text, error background, and the cause in the tooltip. */
async function expectTrouble(page, text, cause) {
  const item = await expectStatusText(page, text, STEP_TIMEOUT);
  const background = await item.evaluate((el) => getComputedStyle(el).backgroundColor);
  if (!(await item.evaluate((el) => el.classList.contains("error-kind") || el.closest(".error-kind") !== null))) {
    throw new Error(`"${text}" is not shown with the error background (${background})`);
  }
  await page.mouse.move(10, 10);
  await item.hover();
  const hover = page.locator(".monaco-hover, .workbench-hover").filter({ hasText: cause }).first();
  await hover.waitFor({ timeout: STEP_TIMEOUT });
  const hoverText = await hover.innerText();
  for (const link of ["Show Logs", "Restart Server"]) {
    if (!hoverText.includes(link)) {
      throw new Error(`tooltip of "${text}" lacks "${link}": ${hoverText}`);
    }
  }
  await page.mouse.move(10, 10);
}

const SYNC_KEY = "codeburn.cursorSync.enabled";

/** The sync switch as the user settings.json stores it (absent: the default, on). */
function storedSync(file) {
  return readConfig(file)?.[SYNC_KEY] ?? true;
}

/**
 * Sets the sync switch in the Settings UI. The Settings editor can redraw the row from values read
 * before its own last write (measured here: 2 in 16 writes left the box showing the old value
 * while settings.json held the new one), and a box that was taken at its word then said "already
 * ticked" and was never clicked. So settings.json is the truth: the box must show what it holds
 * (else the row is drawn afresh by searching again), then one click, then settings.json must hold
 * the wanted value — the editor wrote it, not just redrew the box.
 */
async function setSetting({ checkbox, file, redraw }, wanted) {
  const shown = async () => (await checkbox.getAttribute("aria-checked")) === "true";
  const stored = storedSync(file);
  if (stored === wanted) {
    throw new Error(`settings.json already holds ${SYNC_KEY}: ${wanted}; the step would prove nothing`);
  }
  for (let redraws = 0; (await shown()) !== stored; redraws++) {
    if (redraws === 3) {
      throw new Error(`the Settings UI keeps showing ${SYNC_KEY} ${!stored} while settings.json holds ${stored}`);
    }
    log(`the Settings UI shows ${SYNC_KEY} ${!stored} while settings.json holds ${stored}: searching again to redraw it`);
    await redraw();
  }
  await checkbox.click();
  await waitFor(() => storedSync(file) === wanted, `settings.json to hold ${SYNC_KEY}: ${wanted}`);
}

function readConfig(file) {
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}

async function waitFor(check, what, timeout = STEP_TIMEOUT) {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    if (check()) {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function main() {
  const vsix = process.env.CODEBURN_VSIX ?? join(CLIENT, `codeburn-${JSON.parse(readFileSync(join(CLIENT, "package.json"), "utf8")).version}.vsix`);
  if (!existsSync(vsix)) {
    throw new Error(`${vsix} is missing: run npm run package first`);
  }
  const built = statSync(vsix).mtimeMs;
  const stale = readdirSync(join(CLIENT, "src"), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(".ts") && statSync(join(CLIENT, "src", f)).mtimeMs > built);
  if (stale.length > 0 && !process.env.CODEBURN_VSIX) {
    throw new Error(`${vsix} is older than src/${stale[0]}: run npm run package first`);
  }
  mkdirSync(ARTIFACTS, { recursive: true });
  rmSync(join(ARTIFACTS, "failure.png"), { force: true });
  const { node, codeServer } = tools();
  const run = makeRun();
  log(`run folder ${run.root}`);
  const modules = await extensionModules(run.dirs.tmp);

  execFileSync(PYTHON, [join(CLIENT, "scripts", "make_fixture.py"), join(run.root, "fixture")], {
    stdio: ["ignore", "ignore", "inherit"],
  });
  const fixture = JSON.parse(readFileSync(join(run.root, "fixture", "fixture.json"), "utf8"));
  // The real interpreter path: shims (pyenv, asdf) depend on HOME, which the run replaces.
  const interpreter = execFileSync(PYTHON, ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).trim();

  const baseArgs = ["--user-data-dir", run.dirs["user-data"], "--extensions-dir", run.dirs.extensions];
  execFileSync(node, [codeServer, ...baseArgs, "--install-extension", vsix], {
    env: runEnv(run),
    stdio: ["ignore", "ignore", "inherit"],
  });
  writeUserSettings(run, {
    "codeburn.cursor.databasePath": fixture.db,
    "codeburn.python.interpreter": interpreter,
  });
  // In a remote window (code-server), machine-scoped settings come from the Machine settings
  // (which code-server also re-reads when they change). Step 0 reads the one-day profile.
  run.interpreter = interpreter;
  // A uv-managed Python (an install place under XDG_DATA_HOME; PATH would not do: the extension
  // host gets the login shell's PATH) for "Pick Python…": reports 3.13.0, runs the real one.
  const pathBin = join(run.dirs.data, "uv", "python", "cpython-3.13.0-linux-x86_64-gnu", "bin");
  mkdirSync(pathBin, { recursive: true });
  run.pathShim = join(pathBin, "python3");
  writeFileSync(run.pathShim, `#!/bin/sh\nif [ "$1" = "-c" ]; then echo 3.13.0; echo "$0"; exit 0; fi\nexec "${interpreter}" "$@"\n`, { mode: 0o755 });
  // The same under ~/.local/share, uv's default when XDG_DATA_HOME does not reach the extension host.
  const homeUv = join(run.dirs.home, ".local", "share", "uv", "python", "cpython-3.13.0-linux-x86_64-gnu", "bin");
  mkdirSync(homeUv, { recursive: true });
  symlinkSync(run.pathShim, join(homeUv, "python3"));
  run.pathShims = [run.pathShim, join(homeUv, "python3")];
  // Step -1 starts with no database at the set path; step 0 reads the one-day profile.
  run.oneDayDb = fixture.oneDayDb;
  run.machineExtra = { "codeburn.cursor.databasePath": join(run.root, "no-cursor", "state.vscdb") };
  setMachineInterpreter(run, interpreter);

  const port = await freePort();
  const serverLog = join(run.root, "code-server.log");
  const { openSync } = await import("node:fs");
  const out = openSync(serverLog, "a");
  const child = spawn(
    node,
    [
      codeServer,
      ...baseArgs,
      "--bind-addr", `127.0.0.1:${port}`,
      "--auth", "none",
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      "--disable-getting-started-override",
      run.dirs.workspace,
    ],
    {
      detached: true,
      stdio: ["ignore", out, out],
      env: runEnv(run, {
        CODEBURN_CACHE_DIR: run.dirs.cache,
        CODEBURN_CONFIG_DIR: run.dirs.cbconfig,
        CODEBURN_CURSOR_SYNC: "0",
        CODEBURN_TEST_IMPORT_PATH: fixture.csv,
      }),
    },
  );
  let browser;
  let page;
  let failed = false;
  const consoleErrors = [];
  try {
    await waitForHealth(port, child);
    log(`code-server on 127.0.0.1:${port}`);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
    const context = await browser.newContext({ serviceWorkers: "allow", viewport: { width: 1500, height: 900 } });
    await context.route("**/*", (route) => {
      const { hostname, protocol } = new URL(route.request().url());
      const local = hostname === "127.0.0.1" || hostname === "localhost" || !protocol.startsWith("http");
      return local ? route.continue() : route.abort();
    });
    page = await context.newPage();
    page.on("console", (message) => {
      if (message.type() === "error") {
        consoleErrors.push(message.text().slice(0, 300));
      }
    });
    context.on("requestfailed", (request) => consoleErrors.push(`request failed: ${request.url().slice(0, 200)}`));
    await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(run.dirs.workspace)}`);
    await drive(page, run, fixture, modules);
    log("passed");
  } catch (error) {
    failed = true;
    console.error(`editor-test: FAILED: ${error.stack ?? error}`);
    if (page) {
      await page.screenshot({ path: join(ARTIFACTS, "failure.png") }).catch(() => undefined);
      console.error("editor-test: screenshot of the failure in test-artifacts/failure.png");
    }
    console.error(`browser errors:\n${consoleErrors.slice(-40).join("\n")}`);
    console.error(readFileSync(serverLog, "utf8").slice(-3000));
    console.error(extensionLogs(run));
  } finally {
    await browser?.close().catch(() => undefined);
    stopGroup(child);
    await new Promise((resolve) => setTimeout(resolve, 500));
    try {
      process.kill(-child.pid, "SIGKILL");
    } catch {
      // stopped
    }
    if (!KEEP && !failed) {
      rmSync(run.root, { recursive: true, force: true });
    } else {
      log(`kept ${run.root}`);
    }
  }
  process.exitCode = failed ? 1 : 0;
}

await main();
