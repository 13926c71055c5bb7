/**
 * Structured JSON logs on stdout. Request logging is done by the
 * request-log filter with an explicit field list, so headers (bearer
 * tokens, identity headers) and bodies never reach the log; the redact
 * paths are a second line of defence for anything logged by mistake.
 */
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string = process.env['LOG_LEVEL'] ?? 'info'): Logger {
  return pino({
    level,
    base: { component: 'hostclaim-apiserver' },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: ['token', '*.token', 'authorization', '*.authorization', 'headers', '*.headers', 'password', '*.password'],
      censor: '[REDACTED]',
    },
  });
}
