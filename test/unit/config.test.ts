import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';

describe('--controllers (kube-controller-manager syntax)', () => {
  const enabled = (flag?: string): string[] => [...parseConfig(flag === undefined ? [] : [`--controllers=${flag}`]).controllers];

  it('runs every controller by default and with *', () => {
    expect(enabled()).toEqual(['binder']);
    expect(enabled('*')).toEqual(['binder']);
  });

  it('disables a controller named with a leading dash, and runs only those named without *', () => {
    expect(enabled('*,-binder')).toEqual([]);
    expect(enabled('-binder')).toEqual([]);
    expect(enabled('binder')).toEqual(['binder']);
    expect(enabled('')).toEqual([]);
  });

  it('refuses an unknown controller', () => {
    expect(() => enabled('*,-garbagecollector')).toThrow('--controllers: unknown controller "garbagecollector"; known: binder');
  });
});
