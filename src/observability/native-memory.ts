/**
 * Hands the memory glibc's allocator holds free back to the system, every
 * few seconds (malloc_trim(3), through native/malloc-trim.c).
 *
 * Why: Buffers, TLS state and socket reads live in malloc'd memory. V8 frees
 * garbage Buffers in bursts, when it collects them, and glibc's free() only
 * returns memory at the top of its heap: without a trim, RSS is the
 * high-water mark of the largest burst of garbage since the process started,
 * and climbs in steps for as long as new peaks come (a 1-hour `make soak`
 * measured 150–165 MiB of malloc'd memory of which 40–55 MiB was free, and
 * a trim gave 55 MiB back at once). kube-apiserver needs no such thing: Go's
 * scavenger returns free pages by itself.
 *
 * Where the addon is missing (run from src/ by tsx, or a platform without
 * glibc) nothing is trimmed, and hostclaim_apiserver_native_memory_release_enabled
 * says 0.
 */
import { createRequire } from 'node:module';
import { Gauge, Histogram, type Registry } from 'prom-client';

interface MallocTrimAddon {
  /** malloc_trim(0): true if memory was released. */
  trim(): boolean;
  /** Whether trim() can release anything here (glibc). */
  supported(): boolean;
}

/** Often enough that a burst's garbage does not stay in RSS for long; a trim holds the event loop 3–5 ms (0.05 % of the time). */
const intervalMs = 10_000;
/** Built by `make build` from native/malloc-trim.c, beside dist/src. */
const addonPath = '../../native/malloc-trim.node';

export function registerNativeMemoryRelease(registry: Registry): void {
  const addon = loadAddon();
  new Gauge({
    name: 'hostclaim_apiserver_native_memory_release_enabled',
    help: "1 if the server hands glibc's free heap memory back to the system every few seconds (malloc_trim), 0 if it cannot here.",
    registers: [registry],
    collect() {
      this.set(addon === undefined ? 0 : 1);
    },
  });
  const duration = new Histogram({
    name: 'hostclaim_apiserver_native_memory_release_duration_seconds',
    help: 'How long each malloc_trim held the event loop.',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1],
    registers: [registry],
  });
  if (addon === undefined) return;
  const timer = setInterval(() => {
    const done = duration.startTimer();
    addon.trim();
    done();
  }, intervalMs);
  timer.unref();
}

function loadAddon(): MallocTrimAddon | undefined {
  let addon: MallocTrimAddon;
  try {
    addon = createRequire(import.meta.url)(addonPath) as MallocTrimAddon;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return undefined;
    throw error;
  }
  return addon.supported() ? addon : undefined;
}
