/** The language server's stderr: which lines are its own log, and the last real problem. */

/** `2026-11-30 12:48:16,608 INFO codeburn.server.lsp: …` (the server's logging format). */
const LOG_LINE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3} (DEBUG|INFO|WARNING|ERROR|CRITICAL) /;

export function isServerLogLine(line: string): boolean {
  return LOG_LINE.test(line);
}

/** Keeps the last lines the server wrote to stderr. */
export class StderrTail {
  private readonly lines: string[] = [];

  constructor(private readonly size = 50) {}

  push(line: string): void {
    this.lines.push(line);
    if (this.lines.length > this.size) {
      this.lines.shift();
    }
  }

  /**
   * The most telling recent line: the last one that is not a traceback frame or an INFO/DEBUG log
   * line (for a Python crash, the exception line; for `-m` failures, Python's own message).
   */
  lastProblem(): string | undefined {
    for (let i = this.lines.length - 1; i >= 0; i--) {
      const line = this.lines[i].trim();
      if (line === "" || /^(File "|Traceback|\^|~)/.test(line) || /^\s/.test(this.lines[i])) {
        continue;
      }
      const match = LOG_LINE.exec(line);
      if (match && (match[1] === "INFO" || match[1] === "DEBUG")) {
        continue;
      }
      return line.length > 300 ? `${line.slice(0, 300)}…` : line;
    }
    return undefined;
  }
}
