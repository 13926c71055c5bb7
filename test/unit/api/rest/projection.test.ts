import { describe, expect, it } from 'vitest';
import { RequesterProjection, type ResourceProjection } from '../../../../src/api/rest/projection.js';
import type { ApiObject } from '../../../../src/api/rest/types.js';
import type { WatchEventOut } from '../../../../src/api/rest/types.js';
import { ProjectingSink } from '../../../../src/api/rest/watch-projection.js';
import type { UserInfo } from '../../../../src/api/user.js';

const user: UserInfo = { name: 'alice', uid: '', groups: ['system:authenticated'], extra: {} };

function object(name: string, infra: string | undefined): ApiObject {
  return { apiVersion: 'v1', kind: 'Thing', metadata: { name, namespace: 'tenant-a', ...(infra === undefined ? {} : { annotations: { infra } }) } };
}

/** A kind whose objects name their infrastructure namespace in an annotation; admins see `admin: true`. */
function fakeProjection(admins: ReadonlySet<string>, options: { fail?: boolean; delayed?: boolean } = {}) {
  const asked: string[] = [];
  const release: (() => void)[] = [];
  const adminForms = new WeakMap<ApiObject, ApiObject>();
  const projection: ResourceProjection = {
    infrastructureNamespace: (o) => o.metadata.annotations?.['infra'],
    forInfrastructureAdmin: (o) => {
      let admin = adminForms.get(o);
      if (admin === undefined) {
        admin = { ...o, admin: true };
        adminForms.set(o, admin);
      }
      return admin;
    },
    infrastructureAccess: async (who, namespace) => {
      expect(who).toBe(user);
      asked.push(namespace);
      if (options.delayed === true) await new Promise<void>((resolve) => release.push(resolve));
      if (options.fail === true) throw new Error('authorizer down');
      return admins.has(namespace);
    },
  };
  return { projection, asked, release };
}

describe('RequesterProjection', () => {
  it('asks once per infrastructure namespace, never per object, and only for objects that have more to show', async () => {
    const { projection, asked } = fakeProjection(new Set(['infra-1']));
    const requester = new RequesterProjection(projection, user);
    const objects = [object('a', 'infra-1'), object('b', 'infra-1'), object('c', 'infra-2'), object('d', undefined), object('e', 'infra-2')];
    const projected = await requester.projectAll(objects);
    expect(asked.sort()).toEqual(['infra-1', 'infra-2']);
    expect(projected.map((o) => [o.metadata.name, o['admin'] ?? false])).toEqual([
      ['a', true],
      ['b', true],
      ['c', false],
      ['d', false],
      ['e', false],
    ]);
    // The tenant form is the stored object itself; the admin form is shared, so its bytes can be.
    expect(projected[2]).toBe(objects[2]);
    expect(requester.project(objects[0] as ApiObject)).toBe(projected[0]);
    await requester.projectAll(objects);
    expect(asked).toHaveLength(2);
  });

  it('gives the tenant form while undecided, when the authorizer fails, and without a projection', async () => {
    const failing = fakeProjection(new Set(['infra-1']), { fail: true });
    const requester = new RequesterProjection(failing.projection, user);
    const thing = object('a', 'infra-1');
    expect(requester.isDecided(thing)).toBe(false);
    expect(requester.classOf(thing)).toBe('tenant');
    expect(await requester.projectAll([thing])).toEqual([thing]);
    expect(requester.isDecided(thing)).toBe(true);
    expect(requester.classOf(thing)).toBe('tenant');

    const none = new RequesterProjection(undefined, user);
    expect(none.isDecided(thing)).toBe(true);
    expect(await none.projectAll([thing])).toEqual([thing]);
  });
});

describe('ProjectingSink', () => {
  function setup(admins: ReadonlySet<string>, options: { delayed?: boolean; full?: boolean } = {}) {
    const fake = fakeProjection(admins, { delayed: options.delayed ?? false });
    const requester = new RequesterProjection(fake.projection, user);
    const written: string[] = [];
    let closed = 0;
    let drains = 0;
    const sink = new ProjectingSink(
      requester,
      (event, projectionClass) => {
        const name = event.type === 'ADDED' || event.type === 'MODIFIED' || event.type === 'DELETED' ? event.object.metadata.name : event.type;
        written.push(`${event.type} ${name ?? ''} ${projectionClass}`);
        return options.full !== true;
      },
      { close: () => closed++, onDrain: () => undefined },
    );
    sink.onDrain(() => drains++);
    return { sink, fake, written, closed: () => closed, drains: () => drains };
  }
  const added = (o: ApiObject): WatchEventOut => ({ type: 'ADDED', object: o });
  const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

  it('holds events from an undecided namespace, and all after them, until decided; then writes them in order and resumes the hub', async () => {
    const { sink, fake, written, drains } = setup(new Set(['infra-1']), { delayed: true });
    expect(sink.send({ type: 'BOOKMARK', resourceVersion: '1', initialEventsEnd: false })).toBe(true);
    expect(sink.send(added(object('a', 'infra-1')))).toBe(false);
    expect(sink.send(added(object('b', undefined)))).toBe(false);
    expect(sink.send(added(object('c', 'infra-2')))).toBe(false);
    expect(written).toEqual(['BOOKMARK BOOKMARK tenant']);
    expect(fake.asked).toEqual(['infra-1']);
    fake.release.shift()?.();
    await settle();
    expect(fake.asked).toEqual(['infra-1', 'infra-2']);
    expect(written).toEqual(['BOOKMARK BOOKMARK tenant', 'ADDED a infrastructureAdmin', 'ADDED b tenant']);
    expect(drains()).toBe(0);
    fake.release.shift()?.();
    await settle();
    expect(written).toEqual(['BOOKMARK BOOKMARK tenant', 'ADDED a infrastructureAdmin', 'ADDED b tenant', 'ADDED c tenant']);
    expect(drains()).toBe(1);
    // Decided namespaces go straight through.
    expect(sink.send({ type: 'MODIFIED', object: object('d', 'infra-1') })).toBe(true);
    expect(written.at(-1)).toBe('MODIFIED d infrastructureAdmin');
  });

  it('closes only after the held events, and leaves resuming to the socket when it is full', async () => {
    const held = setup(new Set(), { delayed: true });
    held.sink.send(added(object('a', 'infra-1')));
    held.sink.close();
    expect(held.closed()).toBe(0);
    held.fake.release.shift()?.();
    await settle();
    expect(held.written).toEqual(['ADDED a tenant']);
    expect(held.closed()).toBe(1);
    expect(held.drains()).toBe(0);

    const full = setup(new Set(['infra-1']), { full: true });
    full.sink.send(added(object('a', 'infra-1')));
    await settle();
    expect(full.written).toEqual(['ADDED a infrastructureAdmin']);
    expect(full.drains()).toBe(0);
  });
});
