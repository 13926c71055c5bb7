/**
 * The label selector lexer (k8s.io/apimachinery/pkg/labels/selector.go,
 * Lexer): splits a `labelSelector` query parameter into the tokens the parser
 * in label-selector.ts reads.
 */

export type TokenKind = 'end' | 'identifier' | 'in' | 'notin' | '(' | ')' | ',' | '!' | '=' | '==' | '!=' | '>' | '<';

export interface Token {
  readonly kind: TokenKind;
  readonly literal: string;
}

const LITERAL_TOKENS: ReadonlyMap<string, TokenKind> = new Map<string, TokenKind>([
  ['in', 'in'],
  ['notin', 'notin'],
  ['(', '('],
  [')', ')'],
  [',', ','],
  ['!', '!'],
  ['=', '='],
  ['==', '=='],
  ['!=', '!='],
  ['>', '>'],
  ['<', '<'],
]);

export const END: Token = { kind: 'end', literal: '' };
const NUL = 0;

function isWhitespace(char: number): boolean {
  return char === 0x20 || char === 0x09 || char === 0x0d || char === 0x0a;
}

function isSymbol(char: number): boolean {
  return '=!(),><'.includes(String.fromCharCode(char));
}

/**
 * Splits a label selector into tokens. Go's lexer reads bytes; all special
 * characters are ASCII, so scanning UTF-16 units splits text the same way.
 * Go also takes a NUL byte for end of input: at the start of a token it ends
 * the scan, right after a token it is swallowed and scanning goes on.
 */
export class Lexer {
  private position = 0;

  constructor(private readonly text: string) {}

  tokens(): Token[] {
    const tokens: Token[] = [];
    for (let token = this.next(); ; token = this.next()) {
      tokens.push(token);
      if (token.kind === 'end') return tokens;
    }
  }

  /** The code unit at the cursor, or NUL past the end. */
  private peekChar(): number {
    return this.position < this.text.length ? this.text.charCodeAt(this.position) : NUL;
  }

  private next(): Token {
    while (isWhitespace(this.peekChar())) this.position++;
    if (this.peekChar() === NUL) return END;
    const token = isSymbol(this.peekChar()) ? this.scanSymbol() : this.scanWord();
    if (this.text.charCodeAt(this.position) === NUL) this.position++; // a NUL right after a token
    return token;
  }

  /** The longest operator at the cursor; only "==" and "!=" are two characters long. */
  private scanSymbol(): Token {
    const pair = this.text.slice(this.position, this.position + 2);
    const pairKind = pair.length === 2 ? LITERAL_TOKENS.get(pair) : undefined;
    const literal = pairKind === undefined ? pair.slice(0, 1) : pair;
    this.position += literal.length;
    return { kind: LITERAL_TOKENS.get(literal) ?? 'identifier', literal };
  }

  /** A key, value or the keywords in/notin: everything up to a symbol or blank. */
  private scanWord(): Token {
    const start = this.position;
    for (let char = this.peekChar(); char !== NUL && !isSymbol(char) && !isWhitespace(char); char = this.peekChar()) {
      this.position++;
    }
    const literal = this.text.slice(start, this.position);
    return { kind: LITERAL_TOKENS.get(literal) ?? 'identifier', literal };
  }
}
