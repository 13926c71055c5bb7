/**
 * The Warning headers of one response, bounded as kube-apiserver bounds them
 * (k8s.io/apiserver/pkg/endpoints/filters/warning.go recorder): repeated
 * texts once; past 4 KiB of text in all, every text is cut to 256 runes and
 * texts stop being added once 4 KiB is reached again. A body with 100,000
 * repeated or unknown fields gets a few kilobytes of headers, not megabytes.
 */
const truncateAtTotalRunes = 4 * 1024;
const truncateItemRunes = 256;

/** `299 - "text"` headers in, the headers kube's recorder would write out. */
export function boundedWarnings(headers: readonly string[]): string[] {
  const seen = new Set<string>();
  const recorded: { header: string; text: string }[] = [];
  let written = 0;
  let truncating = false;
  let out: string[] = [];
  for (const header of headers) {
    if (truncating && written >= truncateAtTotalRunes) break;
    const text = warningText(header);
    if (text === '' || seen.has(text)) continue;
    seen.add(text);
    recorded.push({ header, text });
    const length = runeLength(text);
    if (truncating) {
      const cut = cutTo(text, header);
      written += Math.min(length, truncateItemRunes);
      out.push(cut);
    } else if (written + length <= truncateAtTotalRunes) {
      written += length;
      out.push(header);
    } else {
      truncating = true;
      written = recorded.reduce((sum, r) => sum + Math.min(runeLength(r.text), truncateItemRunes), 0);
      out = recorded.map((r) => cutTo(r.text, r.header));
    }
  }
  return out;
}

function cutTo(text: string, header: string): string {
  // Runes, as Go counts them: code points.
  const runes = Array.from(text);
  return runes.length <= truncateItemRunes ? header : `299 - ${JSON.stringify(runes.slice(0, truncateItemRunes).join(''))}`;
}

function runeLength(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

/** The text of a `299 - "…"` header (kube's quoting is JSON-compatible for what it sends); the header itself otherwise. */
function warningText(header: string): string {
  const quoted = /^\d{3} \S+ (".*")$/s.exec(header)?.[1];
  if (quoted === undefined) return header;
  try {
    return JSON.parse(quoted) as string;
  } catch {
    return header;
  }
}

/**
 * A header as Go writes it: its UTF-8 bytes as they are (a warning may quote
 * a key holding U+FFFD). Node writes a header string as Latin-1 and refuses
 * characters above U+00FF, so the bytes are handed over one per character.
 */
export function headerBytes(text: string): string {
  return Buffer.from(text, 'utf8').toString('latin1');
}
