/**
 * The slab size of Node's shared Buffer pool, back to 8 KiB (Node 24's
 * default is 64 KiB; Node 20's was 8 KiB).
 *
 * Why: small Buffers are slices of a shared slab, and a slab lives as long
 * as one of its slices does. Node copies a TLS server's ALPN protocol list into a
 * fresh slice for every connection, so each long-lived connection (a watch
 * holds one for minutes) keeps a whole slab of other requests' garbage
 * alive. A `make soak` heap snapshot found 446 watch connections keeping
 * 29 MB of 64 KiB slabs, growing while watches reconnected; at 8 KiB the
 * same connections keep under 4 MB. Larger Buffers (half a slab and more)
 * get allocations of their own, as before.
 */
export const bufferPoolSlabBytes = 8 * 1024;

/** Sets the slab size for every pool created from now on (the current slab is used up first). */
export function useSmallBufferPool(): void {
  Buffer.poolSize = bufferPoolSlabBytes;
}
