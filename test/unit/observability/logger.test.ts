/** The log destination: one write per turn of the event loop, nothing lost at exit. */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createLogger } from '../../../src/observability/logger.js';
import { projectRoot } from '../../../src/project-root.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('logger', () => {
  it('writes the lines of one event-loop turn together, in order, when the turn ends', async () => {
    const writes: string[] = [];
    const writeSync = fs.writeSync.bind(fs);
    vi.spyOn(fs, 'writeSync').mockImplementation((fd: number, data: string | NodeJS.ArrayBufferView, ...rest: unknown[]) => {
      if (fd !== 1 || typeof data !== 'string') return (writeSync as (...args: unknown[]) => number)(fd, data, ...rest);
      writes.push(data);
      return Buffer.byteLength(data);
    });
    const logger = createLogger('info');
    logger.info({ n: 1 }, 'first');
    logger.info({ n: 2 }, 'second');
    logger.warn({ token: 'secret' }, 'third');
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toHaveLength(1);
    const lines = (writes[0] ?? '').trimEnd().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(lines.map((line) => [line['msg'], line['n'], line['level']])).toEqual([
      ['first', 1, 30],
      ['second', 2, 30],
      ['third', undefined, 40],
    ]);
    expect(lines[2]?.['token']).toBe('[REDACTED]');
    logger.info('later');
    await nextTurn();
    expect(writes).toHaveLength(2);
    expect(JSON.parse(writes[1] ?? '')).toMatchObject({ msg: 'later', component: 'hostclaim-apiserver' });
  });

  it('writes what is pending when the process exits in the same turn', () => {
    const script = [
      `const { createLogger } = await import(${JSON.stringify(`${projectRoot()}/src/observability/logger.ts`)});`,
      `createLogger('info').error('last words');`,
      'process.exit(3);',
    ].join('\n');
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', cwd: projectRoot() });
    expect(child.status).toBe(3);
    expect(JSON.parse(child.stdout)).toMatchObject({ level: 50, msg: 'last words' });
  });
});
