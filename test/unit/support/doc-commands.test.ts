import { describe, expect, it } from 'vitest';
import { docCommands } from '../../support/doc-commands.js';

describe('docCommands', () => {
  it('returns the commands of sh blocks only, with continuations and here-documents, skipping comments', () => {
    const markdown = [
      'Text `kubectl get x` outside a block.',
      '```yaml',
      'kind: NotShell',
      '```',
      '```sh',
      '# a comment line',
      'export A=1   # trailing comment kept',
      '',
      'kubectl get pods \\',
      '  -n x',
      "cat <<'YAML' | kubectl apply -f -",
      'kind: Pod',
      '',
      'YAML',
      'kubectl get hc -w',
      '```',
      '```bash',
      'kubectl apply -f - <<EOF',
      'a: b',
      'EOF',
      '```',
    ].join('\n');
    expect(docCommands('doc.md', markdown)).toEqual([
      { file: 'doc.md', line: 7, text: 'export A=1   # trailing comment kept' },
      { file: 'doc.md', line: 9, text: 'kubectl get pods \\\n  -n x' },
      { file: 'doc.md', line: 11, text: "cat <<'YAML' | kubectl apply -f -\nkind: Pod\n\nYAML" },
      { file: 'doc.md', line: 15, text: 'kubectl get hc -w' },
      { file: 'doc.md', line: 18, text: 'kubectl apply -f - <<EOF\na: b\nEOF' },
    ]);
  });

  it('refuses a here-document that runs past its block and an unclosed block', () => {
    expect(() => docCommands('doc.md', "```sh\ncat <<'YAML'\na: b\n```\n")).toThrow(
      'doc.md:2: here-document YAML is not terminated inside its code block',
    );
    expect(() => docCommands('doc.md', '```sh\nls\n')).toThrow('doc.md: a code block is not closed');
  });
});
