// Log lines: into GRW's log inside a component, to stderr under node.

import { host } from "./host.js";
import { describe } from "./values.js";

/** @typedef {"trace" | "debug" | "info" | "warn" | "error"} LogLevel */

/** @type {readonly unknown[]} */
const LEVELS = ["trace", "debug", "info", "warn", "error"];

/**
 * @param {LogLevel} level
 * @param {unknown} message
 */
function writeLog(level, message) {
  if (!LEVELS.includes(level)) {
    throw new TypeError(`unknown log level ${describe(level)}; use one of ${LEVELS.join(", ")}`);
  }
  const text = String(message);
  const hostLog = host()?.log;
  if (hostLog) {
    hostLog(level, text);
  } else {
    console.error(`[${level}] ${text}`);
  }
}

/**
 * Log lines, written into GRW's log under the plugin's name; natively they
 * go to stderr.
 */
export const log = /* @__PURE__ */ Object.freeze({
  log: writeLog,
  /** @param {unknown} message */
  trace: (message) => writeLog("trace", message),
  /** @param {unknown} message */
  debug: (message) => writeLog("debug", message),
  /** @param {unknown} message */
  info: (message) => writeLog("info", message),
  /** @param {unknown} message */
  warn: (message) => writeLog("warn", message),
  /** @param {unknown} message */
  error: (message) => writeLog("error", message),
});
