/** The "Show Spend Breakdown" webview panel (one at a time, refreshed when figures change). */

import { randomBytes } from "node:crypto";

import * as vscode from "vscode";

import { PROTOCOL } from "../protocol";
import {
  type BreakdownPeriod,
  cycleView,
  isBreakdownPeriod,
  renderBreakdown,
  renderBreakdownError,
} from "../view/breakdownHtml";
import type { ReportPayload } from "../view/types";
import type { Controller } from "./controller";

export class BreakdownPanel {
  private static current: BreakdownPanel | undefined;
  private readonly disposables: vscode.Disposable[] = [];
  private loading: Promise<void> | undefined;
  private reloadAfter = false;
  private period: BreakdownPeriod = "month";
  /** Figures changed while the panel was hidden: reload when it is shown again. */
  private stale = false;

  private constructor(
    private readonly panel: vscode.WebviewPanel,
    private readonly controller: Controller,
  ) {
    this.disposables.push(
      panel.onDidDispose(() => this.dispose()),
      panel.webview.onDidReceiveMessage((message: { type?: string; period?: unknown }) => {
        if (message?.type === "refresh") {
          void this.load();
        } else if (message?.type === "period" && isBreakdownPeriod(message.period)) {
          this.period = message.period;
          void this.load({ fresh: true });
        }
      }),
      controller.onStatus(() => {
        if (panel.visible) {
          void this.load();
        } else {
          this.stale = true;
        }
      }),
      // A hidden webview keeps its last page (an error from a server that has since recovered).
      panel.onDidChangeViewState(() => {
        if (panel.visible && this.stale) {
          this.stale = false;
          void this.load();
        }
      }),
    );
  }

  /** Opens the panel (or brings it forward) and loads the report of the period shown (this month first). */
  static async show(controller: Controller): Promise<BreakdownPanel> {
    if (BreakdownPanel.current) {
      BreakdownPanel.current.panel.reveal();
    } else {
      const panel = vscode.window.createWebviewPanel(
        "codeburn.breakdown",
        "CodeBurn: Spend Breakdown",
        vscode.ViewColumn.Active,
        { enableScripts: true, localResourceRoots: [], retainContextWhenHidden: false },
      );
      BreakdownPanel.current = new BreakdownPanel(panel, controller);
    }
    await BreakdownPanel.current.load();
    return BreakdownPanel.current;
  }

  get html(): string {
    return this.panel.webview.html;
  }

  get shownPeriod(): BreakdownPeriod {
    return this.period;
  }

  /**
   * Fetches the report of the chosen period; a load in flight is joined, not repeated. `fresh`
   * (a new period was picked) asks for one more load after the one in flight.
   */
  async load(options: { fresh?: boolean } = {}): Promise<void> {
    if (this.loading && options.fresh) {
      this.reloadAfter = true;
    }
    this.loading ??= (async () => {
      try {
        do {
          this.reloadAfter = false;
          await this.fetchAndRender();
        } while (this.reloadAfter);
      } finally {
        this.loading = undefined;
      }
    })();
    return this.loading;
  }

  private async fetchAndRender(): Promise<void> {
    const nonce = randomBytes(16).toString("base64");
    try {
      const period = this.period;
      const report = await this.controller.execute<ReportPayload>(PROTOCOL.report, [{ period }]);
      const status = this.controller.lastStatus;
      const notice = status && status.state !== "ok" ? (status.message ?? undefined) : undefined;
      const cycle = status ? cycleView(status) : undefined;
      this.panel.webview.html = renderBreakdown(report, { nonce, notice, period, cycle });
    } catch (error) {
      this.controller.log.error(`Breakdown: ${(error as Error).message}`);
      this.panel.webview.html = renderBreakdownError(
        `The breakdown could not be loaded: ${(error as Error).message}`,
        nonce,
      );
    }
  }

  dispose(): void {
    BreakdownPanel.current = undefined;
    for (const d of this.disposables) {
      d.dispose();
    }
    this.panel.dispose();
  }
}
