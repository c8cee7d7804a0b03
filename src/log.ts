/** A minimal structured logger: one JSON line per event on stderr. */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
  /** Events that are normal in operation (a client going away); optional, so any logger fits. */
  debug?(message: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: Logger = { info() {}, warn() {}, error() {}, debug() {} };

export const LOG_LEVELS = ['silent', 'error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const RANK: Record<LogLevel, number> = { silent: 0, error: 1, warn: 2, info: 3, debug: 4 };

/**
 * The level BRAINSTEM_LOG names (unset or empty: info). A misspelt level is an error rather than
 * a silent fall-back, so `BRAINSTEM_LOG=degub` does not hide the lines its user asked for.
 */
export function logLevelOf(value: string | undefined): LogLevel {
  if (value === undefined || value === '') return 'info';
  if ((LOG_LEVELS as readonly string[]).includes(value)) return value as LogLevel;
  throw new Error(`BRAINSTEM_LOG must be one of ${LOG_LEVELS.join(', ')}, got "${value}"`);
}

export function createLogger(level: LogLevel = logLevelOf(process.env.BRAINSTEM_LOG), name = 'brainstem'): Logger {
  const rank = RANK[level];
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
