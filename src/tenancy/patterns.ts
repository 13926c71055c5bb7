/**
 * Regular expressions written by admins on HostDeployPolicies (namespace
 * names, shared label keys). They run on RE2 (linear time, Go's regexp
 * syntax), so a pattern can never stall the server, and always match the
 * whole text, so `tenant-a` never admits `xtenant-a` by accident.
 */
import { RE2JS } from 're2js';

const maxPatternLength = 1024;
const maxCachedPatterns = 512;

/** Compiled patterns; null for a pattern that does not compile. */
const cache = new Map<string, RE2JS | null>();

/** Why a pattern is refused (RE2 rejects it, or it is absurdly long); undefined when valid. */
export function validatePattern(pattern: string): string | undefined {
  if (pattern.length > maxPatternLength) return `must be no more than ${maxPatternLength} characters`;
  try {
    RE2JS.compile(pattern);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : 'invalid regular expression';
  }
}

/** Whether the pattern matches all of `text`; an invalid pattern matches nothing. */
export function matchesWhole(pattern: string, text: string): boolean {
  return compiled(pattern)?.matches(text) ?? false;
}

function compiled(pattern: string): RE2JS | undefined {
  let entry = cache.get(pattern);
  if (entry === undefined) {
    entry = validatePattern(pattern) === undefined ? RE2JS.compile(pattern) : null;
    if (cache.size >= maxCachedPatterns) cache.clear();
    cache.set(pattern, entry);
  }
  return entry ?? undefined;
}
