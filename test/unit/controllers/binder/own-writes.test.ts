import { describe, expect, it } from 'vitest';
import { OwnWrites } from '../../../../src/controllers/binder/own-writes.js';

describe('OwnWrites', () => {
  it('does not queue a claim for the echo of a write the binder made for it, and queues it for anything else', () => {
    const writes = new OwnWrites();
    writes.wrote('ns.claim', 'record', '101');
    writes.wrote('ns.claim', 'infra/host-1', '102');
    expect(writes.shouldQueue('ns.claim', 'record', '101')).toBe(false);
    expect(writes.shouldQueue('ns.claim', 'infra/host-1', '102')).toBe(false);
    // Another version of the same object: someone else's change.
    expect(writes.shouldQueue('ns.claim', 'record', '103')).toBe(true);
    expect(writes.shouldQueue('ns.claim', 'infra/host-1', '101')).toBe(true);
    // The same version of another object, or for another claim.
    expect(writes.shouldQueue('ns.claim', 'infra/host-2', '102')).toBe(true);
    expect(writes.shouldQueue('ns.other', 'infra/host-1', '102')).toBe(true);
    expect(writes.shouldQueue('ns.other', 'record', '101')).toBe(true);
  });

  it('always queues for an event without a resourceVersion', () => {
    const writes = new OwnWrites();
    writes.wrote('ns.claim', 'record', undefined);
    writes.wrote('ns.claim', 'record', '');
    expect(writes.shouldQueue('ns.claim', 'record', undefined)).toBe(true);
    expect(writes.shouldQueue('ns.claim', 'record', '')).toBe(true);
  });

  it('holds events during a reconcile and asks for another only when one of them was not its own write', () => {
    const writes = new OwnWrites();
    writes.begin('ns.claim');
    // The echo overtakes the answer to the write.
    expect(writes.shouldQueue('ns.claim', 'record', '7')).toBe(false);
    writes.wrote('ns.claim', 'record', '7');
    expect(writes.end('ns.claim')).toBe(false);

    writes.begin('ns.claim');
    expect(writes.shouldQueue('ns.claim', 'record', '7')).toBe(false);
    expect(writes.shouldQueue('ns.claim', 'infra/host-1', '8')).toBe(false);
    writes.wrote('ns.claim', 'record', '9');
    expect(writes.end('ns.claim')).toBe(true);
    // Held only while the reconcile runs; other claims are never held.
    expect(writes.shouldQueue('ns.claim', 'infra/host-1', '8')).toBe(true);
    writes.begin('ns.claim');
    expect(writes.shouldQueue('ns.other', 'record', '7')).toBe(true);
    expect(writes.end('ns.claim')).toBe(false);
  });

  it('keeps the last eight writes of a claim', () => {
    const writes = new OwnWrites();
    for (let version = 1; version <= 9; version++) writes.wrote('ns.claim', 'record', String(version));
    expect(writes.shouldQueue('ns.claim', 'record', '1')).toBe(true);
    for (let version = 2; version <= 9; version++) expect(writes.shouldQueue('ns.claim', 'record', String(version))).toBe(false);
  });

  it('forgets a claim whose record is gone, and everything on clear', () => {
    const writes = new OwnWrites();
    writes.wrote('ns.a', 'record', '1');
    writes.wrote('ns.b', 'record', '2');
    writes.begin('ns.b');
    writes.forget('ns.a');
    expect(writes.shouldQueue('ns.a', 'record', '1')).toBe(true);
    writes.clear();
    expect(writes.shouldQueue('ns.b', 'record', '2')).toBe(true);
    expect(writes.end('ns.b')).toBe(false);
  });
});
