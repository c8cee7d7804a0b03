/** A minimal structured logger: one JSON line per event on stderr. */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** Events that are normal in operation (a client going away); optional, so any logger fits. */
  debug?(message: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {}, debug() {} };

export type LogLevel = 'silent' | 'error' | 'warn' | 'info' | 'debug';

const RANK: Record<LogLevel, number> = { silent: 0, error: 1, warn: 2, info: 3, debug: 4 };

export function createLogger(level: LogLevel = (process.env.BRAINSTEM_LOG as LogLevel | undefined) ?? 'info', name = 'brainstem'): Logger {
  const rank = RANK[level] ?? RANK.info;
  const emit = (lvl: Exclude<LogLevel, 'silent'>, message: string, fields?: Record<string, unknown>): void => {
    if (RANK[lvl] > rank) return;
    process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: lvl, name, msg: message, ...fields })}\n`);
  };
  return {
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    debug: (m, f) => emit('debug', m, f),
  };
}
