import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { registerNativeMemoryRelease } from '../../../src/observability/native-memory.js';

describe('native memory release', () => {
  it('says it is off, and schedules nothing, where the addon was not built beside the code (src/ under tsx)', async () => {
    const registry = new Registry();
    registerNativeMemoryRelease(registry);
    const text = await registry.metrics();
    expect(text).toMatch(/^hostclaim_apiserver_native_memory_release_enabled 0$/m);
    expect(text).not.toContain('hostclaim_apiserver_native_memory_release_duration_seconds');
  });
});
