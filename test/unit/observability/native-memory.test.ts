import { Registry } from 'prom-client';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { registerNativeMemoryRelease } from '../../../src/observability/native-memory.js';

afterEach(() => {
  vi.useRealTimers();
});

describe('native memory release', () => {
  it('says it is off, and trims nothing, where the addon was not built beside the code (src/ under tsx)', async () => {
    vi.useFakeTimers();
    const registry = new Registry();
    registerNativeMemoryRelease(registry);
    vi.advanceTimersByTime(60_000);
    const text = await registry.metrics();
    expect(text).toMatch(/^hostclaim_apiserver_native_memory_release_enabled 0$/m);
    expect(text).toMatch(/^hostclaim_apiserver_native_memory_release_duration_seconds_count 0$/m);
  });
});
