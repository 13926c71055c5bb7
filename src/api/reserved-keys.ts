/**
 * Label, annotation and finalizer keys in this project's domain belong to
 * the infrastructure: tenants may neither set, see nor select on them. The
 * storage mapping keeps them out of every virtual object; the REST layer
 * refuses them in selectors and strategies in writes. One rule, here, below
 * both.
 */
export function isReservedKey(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash < 0) return false;
  const domain = key.slice(0, slash);
  return domain === 'tenancy.metal3.io' || domain.endsWith('.tenancy.metal3.io');
}
