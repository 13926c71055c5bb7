/** /version in the shape of k8s.io/apimachinery's version.Info. */
import { readFileSync } from 'node:fs';
import type { RequestHandler } from 'express';
import { exactRoutes } from './routes.js';
import { projectRoot } from '../project-root.js';

export function versionInfo(): Record<string, string> {
  const pkg = JSON.parse(readFileSync(`${projectRoot()}/package.json`, 'utf8')) as { version: string };
  const [major = '0', minor = '0'] = pkg.version.split('.');
  return {
    major,
    minor,
    gitVersion: `v${pkg.version}`,
    gitCommit: process.env['HOSTCLAIM_GIT_COMMIT'] ?? '',
    gitTreeState: process.env['HOSTCLAIM_GIT_TREE_STATE'] ?? '',
    buildDate: process.env['HOSTCLAIM_BUILD_DATE'] ?? '',
    goVersion: '',
    compiler: `node ${process.version}`,
    platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
  };
}

export function versionRouter(): RequestHandler {
  const body = versionInfo();
  return exactRoutes([['/version', (_req, res) => { res.json(body); }]]);
}
