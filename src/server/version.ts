/** /version in the shape of k8s.io/apimachinery's version.Info. */
import type { RequestHandler } from 'express';
import { exactRoutes } from '../api/exact-routes.js';
import { projectVersion } from '../project-root.js';

export function versionInfo(): Record<string, string> {
  const version = projectVersion();
  const [major = '0', minor = '0'] = version.split('.');
  return {
    major,
    minor,
    gitVersion: `v${version}`,
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
