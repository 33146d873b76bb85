export type LogLevel = "trace" | "debug" | "info" | "warn" | "error";
/**
 * @param {LogLevel} level
 * @param {unknown} message
 */
declare function writeLog(level: LogLevel, message: unknown): void;
/**
 * Log lines, written into GRW's log under the plugin's name; natively they
 * go to stderr.
 */
export declare const log: Readonly<{
    log: typeof writeLog;
    /** @param {unknown} message */
    trace: (message: unknown) => void;
    /** @param {unknown} message */
    debug: (message: unknown) => void;
    /** @param {unknown} message */
    info: (message: unknown) => void;
    /** @param {unknown} message */
    warn: (message: unknown) => void;
    /** @param {unknown} message */
    error: (message: unknown) => void;
}>;
export {};
