// The shell commands of a Markdown document's ```sh blocks, one entry per
// logical command (a line, its backslash continuations and the body of any
// here-document it opens), exactly as written, so a test can run the
// documentation and break when the documentation changes.
import fs from 'node:fs';

export interface DocCommand {
  /** The document (as passed in) and the 1-based line the command starts on. */
  file: string;
  line: number;
  /** The command text as written, comments included. */
  text: string;
}

const FENCE_OPEN = /^```(sh|bash|shell)\s*$/;
const FENCE_CLOSE = /^```\s*$/;
/** `<<'YAML'`, `<<"EOF"`, `<<-END`, `<<END`: the terminator word. */
const HEREDOC = /<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\1/;

export function readDocCommands(file: string): DocCommand[] {
  return docCommands(file, fs.readFileSync(file, 'utf8'));
}

export function docCommands(file: string, markdown: string): DocCommand[] {
  const lines = markdown.split('\n');
  const commands: DocCommand[] = [];
  let inBlock = false;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] ?? '';
    if (!inBlock) {
      inBlock = FENCE_OPEN.test(line);
      continue;
    }
    if (FENCE_CLOSE.test(line)) {
      inBlock = false;
      continue;
    }
    if (line.trim() === '' || line.trim().startsWith('#')) continue;
    const start = index;
    const text = [line];
    while (/\\$/.test(text[text.length - 1] ?? '') && index + 1 < lines.length) text.push(lines[++index] ?? '');
    const terminator = HEREDOC.exec(text.join('\n'))?.[2];
    if (terminator !== undefined) {
      do {
        if (index + 1 >= lines.length || FENCE_CLOSE.test(lines[index + 1] ?? '')) {
          throw new Error(`${file}:${start + 1}: here-document ${terminator} is not terminated inside its code block`);
        }
        text.push(lines[++index] ?? '');
      } while ((lines[index] ?? '').trim() !== terminator);
    }
    commands.push({ file, line: start + 1, text: text.join('\n') });
  }
  if (inBlock) throw new Error(`${file}: a code block is not closed`);
  return commands;
}
