import { describe, expect, it } from 'vitest';
import type { Peer } from '../../../src/backing/replica-membership.js';
import { ReplicaWatermarks, type MembershipView, type PeerAnswer } from '../../../src/backing/replica-watermarks.js';
import { isApiError } from '../../../src/api/status.js';

/** A membership the test moves by hand. */
class FakeMembership implements MembershipView {
  readonly identity = 'me';
  synced = true;
  incarnation = 1;
  leaseValid = true;
  live: Peer[] = [];
  known = new Set<string>();
  private readonly listeners = new Set<() => void>();

  hasSynced(): boolean {
    return this.synced;
  }
  leaseIncarnation(): number {
    return this.incarnation;
  }
  ownLeaseValid(): boolean {
    return this.leaseValid;
  }
  peers(): Peer[] {
    return [...this.live];
  }
  knows(identity: string): boolean {
    return this.known.has(identity);
  }
  onDeparture(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  depart(identity: string): void {
    this.live = this.live.filter((peer) => peer.identity !== identity);
    for (const listener of [...this.listeners]) listener();
  }
}

interface Asked {
  readonly url: string;
  readonly asker: string;
  answer(answer: Partial<PeerAnswer>): void;
  fail(error: Error): void;
}

/** Peers and kube-apiserver answered by the test, one call at a time. */
class Calls {
  readonly asked: Asked[] = [];
  readonly revisionProbes: { answer(revision: bigint): void; fail(error: Error): void }[] = [];

  readonly askPeer = (url: string, asker: string): Promise<PeerAnswer> =>
    new Promise((resolve, reject) => {
      this.asked.push({ url, asker, answer: (answer) => { resolve({ identity: 'peer-1', watermark: '0', knowsAsker: true, ...answer }); }, fail: reject });
    });

  readonly currentRevision = (): Promise<bigint> =>
    new Promise((resolve, reject) => {
      this.revisionProbes.push({ answer: resolve, fail: reject });
    });
}

const settle = async (): Promise<void> => {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

const peer: Peer = { identity: 'peer-1', url: 'https://10.0.0.2:8443' };

/** Started, with the startup floor answered at `floor` and registration done (no peers unless given). */
async function started(options: { peers?: Peer[]; floor?: bigint; newest?: bigint } = {}): Promise<{ watermarks: ReplicaWatermarks; membership: FakeMembership; calls: Calls }> {
  const membership = new FakeMembership();
  membership.live = options.peers ?? [];
  const calls = new Calls();
  const watermarks = new ReplicaWatermarks(membership, () => options.newest ?? -1n, calls.askPeer, calls.currentRevision, { retryMs: 5, downMs: 60_000 });
  watermarks.start();
  await settle();
  calls.revisionProbes.shift()?.answer(options.floor ?? 10n);
  for (const asked of calls.asked.splice(0)) asked.answer({ identity: membership.live.find((p) => p.url === asked.url)?.identity ?? '', knowsAsker: true });
  await settle();
  return { watermarks, membership, calls };
}

describe('ReplicaWatermarks: the target of a consistent read', () => {
  it('has none until the membership has synced, the records can be read and the startup floor came back; alone, it is then max(floor, own writes)', async () => {
    const membership = new FakeMembership();
    membership.synced = false;
    let storageReady = false;
    const calls = new Calls();
    const watermarks = new ReplicaWatermarks(membership, () => -1n, calls.askPeer, calls.currentRevision, { retryMs: 5, storageReady: () => storageReady });
    watermarks.start();
    expect(await watermarks.target()).toBeUndefined();
    membership.synced = true;
    await new Promise((resolve) => setTimeout(resolve, 20));
    // No floor read before the records' CRD is served: it would only fail.
    expect(calls.revisionProbes).toHaveLength(0);
    storageReady = true;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await watermarks.target()).toBeUndefined();
    calls.revisionProbes.shift()?.answer(10n);
    await settle();
    expect(await watermarks.target()).toBe(10n);
    await watermarks.acknowledged('25');
    expect(await watermarks.target()).toBe(25n);
    // Acknowledgements only raise it.
    await watermarks.acknowledged('12');
    expect([await watermarks.target(), calls.asked.length]).toEqual([25n, 0]);
    watermarks.stop();
  });

  it("asks every live peer and waits for the highest watermark it names", async () => {
    const { watermarks, calls } = await started({ peers: [peer, { identity: 'peer-2', url: 'https://10.0.0.3:8443' }] });
    const target = watermarks.target();
    await settle();
    expect(calls.asked.map((asked) => [asked.url, asked.asker])).toEqual([
      ['https://10.0.0.2:8443', 'me'],
      ['https://10.0.0.3:8443', 'me'],
    ]);
    calls.asked[0]?.answer({ watermark: '300' });
    calls.asked[1]?.answer({ identity: 'peer-2', watermark: '120' });
    expect(await target).toBe(300n);
    watermarks.stop();
  });

  it('is inconclusive (the read probes instead) when a peer fails, answers as someone else, or has no URL; a failed peer is not asked again for a while', async () => {
    const { watermarks, membership, calls } = await started({ peers: [peer] });
    const wrongPeer = watermarks.target();
    await settle();
    calls.asked.shift()?.answer({ identity: 'a-successor', watermark: '500' });
    expect(await wrongPeer).toBeUndefined();
    // Down for downMs: the next rounds do not wait on it.
    expect([await watermarks.target(), calls.asked.length]).toEqual([undefined, 0]);

    membership.live = [{ identity: 'peer-3', url: 'https://10.0.0.4:8443' }];
    const failing = watermarks.target();
    await settle();
    calls.asked.shift()?.fail(new Error('connection refused'));
    expect(await failing).toBeUndefined();

    membership.live = [{ identity: 'peer-4', url: undefined }];
    expect([await watermarks.target(), calls.asked.length]).toEqual([undefined, 0]);
    watermarks.stop();
  });

  it('serves a read only with a round that started after it arrived', async () => {
    const { watermarks, calls } = await started({ peers: [peer] });
    const first = watermarks.target();
    await settle();
    // Arrives while the first round is out: a write acknowledged just before it may be missing from that round.
    const second = watermarks.target();
    calls.asked.shift()?.answer({ watermark: '100' });
    expect(await first).toBe(100n);
    await settle();
    expect(calls.asked).toHaveLength(1);
    calls.asked.shift()?.answer({ watermark: '150' });
    expect(await second).toBe(150n);
    watermarks.stop();
  });

  it('after a peer departs, has no target until kube-apiserver’s current revision, read after the departure, came back; then includes it', async () => {
    const { watermarks, membership, calls } = await started({ peers: [peer], floor: 10n });
    membership.depart('peer-1');
    expect(await watermarks.target()).toBeUndefined();
    // A second departure while the first floor probe is out: that probe is not enough, another is read.
    membership.depart('peer-x');
    calls.revisionProbes.shift()?.answer(400n);
    await settle();
    expect(await watermarks.target()).toBeUndefined();
    calls.revisionProbes.shift()?.answer(420n);
    await settle();
    expect(await watermarks.target()).toBe(420n);
    watermarks.stop();
  });
});

describe('ReplicaWatermarks: acknowledging writes', () => {
  it('admits writes only once every peer knows this replica, and while its own Lease is valid', async () => {
    const membership = new FakeMembership();
    membership.live = [peer];
    const calls = new Calls();
    const watermarks = new ReplicaWatermarks(membership, () => -1n, calls.askPeer, calls.currentRevision, { retryMs: 5, downMs: 0 });
    watermarks.start();
    await settle();
    const refusal = (): unknown => {
      try {
        watermarks.admit();
        return undefined;
      } catch (error) {
        // Retriable, as a 503 for an unreachable kube-apiserver is: Retry-After set.
        return isApiError(error) ? [error.code, error.reason, error.details?.retryAfterSeconds] : error;
      }
    };
    expect(refusal()).toEqual([503, 'ServiceUnavailable', 1]);
    calls.asked.shift()?.answer({ knowsAsker: false });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect([watermarks.isRegistered(), refusal()]).toEqual([false, [503, 'ServiceUnavailable', 1]]);
    calls.asked.shift()?.answer({ knowsAsker: true });
    await settle();
    expect([watermarks.isRegistered(), refusal()]).toEqual([true, undefined]);
    membership.leaseValid = false;
    expect(refusal()).toEqual([503, 'ServiceUnavailable', 1]);
    // Its Lease deleted by someone and created again: refused until every peer confirms the new one.
    membership.leaseValid = true;
    membership.incarnation = 2;
    expect(refusal()).toEqual([503, 'ServiceUnavailable', 1]);
    await settle();
    calls.asked.shift()?.answer({ knowsAsker: true });
    await settle();
    expect([watermarks.isRegistered(), refusal()]).toEqual([true, undefined]);
    watermarks.stop();
  });

  it('does not confirm a write that completed after its own Lease lapsed (504: outcome unknown), nor raise the watermark', async () => {
    const { watermarks, membership } = await started({ floor: 10n });
    membership.leaseValid = false;
    const error: unknown = await watermarks.acknowledged('99').catch((e: unknown) => e);
    expect(isApiError(error) ? [error.code, error.reason] : error).toEqual([504, 'Timeout']);
    membership.leaseValid = true;
    expect(await watermarks.target()).toBe(10n);
    watermarks.stop();
  });

  it('reads kube-apiserver’s current revision for a write whose answer names none (a deletion answered with a Status)', async () => {
    const { watermarks, calls } = await started({ floor: 10n });
    const acknowledged = watermarks.acknowledged(undefined);
    await settle();
    calls.revisionProbes.shift()?.answer(77n);
    await acknowledged;
    expect(await watermarks.target()).toBe(77n);
    watermarks.stop();
  });

  it('answers a peer with max(own acknowledged writes, newest record in its cache) and whether it knows the asker', async () => {
    const { watermarks, membership } = await started({ newest: 60n });
    membership.known.add('peer-1');
    expect(watermarks.answer('peer-1')).toEqual({ identity: 'me', watermark: '60', knowsAsker: true });
    await watermarks.acknowledged('70');
    expect(watermarks.answer('stranger')).toEqual({ identity: 'me', watermark: '70', knowsAsker: false });
    watermarks.stop();
  });
});
