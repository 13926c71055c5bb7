/**
 * Structured JSON logs on stdout. Request logging is done by the
 * request-log filter with an explicit field list, so headers (bearer
 * tokens, identity headers) and bodies never reach the log; the redact
 * paths are a second line of defence for anything logged by mistake.
 *
 * The lines logged during one turn of the event loop are written together
 * when it ends, with one write(2): a write per request log line cost more
 * CPU than serving a discovery request. Nothing waits longer than that
 * turn, and what is pending when the process exits is written before it
 * does. (klog, kube-apiserver's logger, buffers its output for seconds.)
 */
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string = process.env['LOG_LEVEL'] ?? 'info'): Logger {
  return pino(
    {
      level,
      base: { component: 'hostclaim-apiserver' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['token', '*.token', 'authorization', '*.authorization', 'headers', '*.headers', 'password', '*.password'],
        censor: '[REDACTED]',
      },
    },
    stdoutPerTurn,
  );
}

/** One per process, shared by every logger: there is one stdout. */
class TurnBufferedStdout implements DestinationStream {
  private pending = '';
  private scheduled = false;
  // pino's own synchronous stdout destination, which waits out a full pipe and stops writing once the reader is gone (EPIPE).
  private readonly stdout = pino.destination({ dest: 1, sync: true });

  constructor() {
    process.once('exit', () => {
      this.flush();
    });
  }

  write(line: string): void {
    this.pending += line;
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.flush();
    });
  }

  /** Writes what is pending now, synchronously. */
  flush(done?: (error?: Error) => void): void {
    this.scheduled = false;
    const text = this.pending;
    this.pending = '';
    if (text !== '') this.stdout.write(text);
    done?.();
  }
}

const stdoutPerTurn = new TurnBufferedStdout();
