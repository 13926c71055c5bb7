import v8 from 'node:v8';
import vm from 'node:vm';

/**
 * V8's full collection, run twice, for tests that measure what stays live.
 * The tests' own context has no global `gc`: it is taken from a fresh
 * context once --expose-gc is set.
 */
export function fullCollector(): () => void {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as () => void;
  return () => {
    gc();
    gc();
  };
}
