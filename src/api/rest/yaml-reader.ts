/**
 * The character checks of goyaml's reader (go.yaml.in/yaml/v2 readerc.go
 * yaml_parser_update_buffer), which kube's YAML decoding runs on the raw
 * body before parsing: bytes that are not UTF-8, surrogates and control
 * characters are refused (`yaml: invalid leading UTF-8 octet`), where
 * decoding the body as a string would silently replace them. goyaml checks
 * in 512-byte chunks as it parses; this checks the whole body first.
 */

/** goyaml's reader problem for these bytes, or undefined when every character is allowed. */
export function yamlReaderProblem(bytes: Uint8Array): string | undefined {
  // goyaml also reads UTF-16 with a byte order mark; its checks are not repeated here.
  if (bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))) return undefined;
  for (let position = 0; position < bytes.length; ) {
    const octet = bytes[position] ?? 0;
    const width = octet < 0x80 ? 1 : (octet & 0xe0) === 0xc0 ? 2 : (octet & 0xf0) === 0xe0 ? 3 : (octet & 0xf8) === 0xf0 ? 4 : 0;
    if (width === 0) return 'invalid leading UTF-8 octet';
    if (position + width > bytes.length) return 'incomplete UTF-8 octet sequence';
    let value = width === 1 ? octet : width === 2 ? octet & 0x1f : width === 3 ? octet & 0x0f : octet & 0x07;
    for (let k = 1; k < width; k++) {
      const trailing = bytes[position + k] ?? 0;
      if ((trailing & 0xc0) !== 0x80) return 'invalid trailing UTF-8 octet';
      value = (value << 6) | (trailing & 0x3f);
    }
    const minimum = [0, 0, 0x80, 0x800, 0x10000][width] ?? 0;
    if (value < minimum) return 'invalid length of a UTF-8 sequence';
    if ((value >= 0xd800 && value <= 0xdfff) || value > 0x10ffff) return 'invalid Unicode character';
    if (!printable(value)) return 'control characters are not allowed';
    position += width;
  }
  return undefined;
}

function printable(value: number): boolean {
  return (
    value === 0x09 ||
    value === 0x0a ||
    value === 0x0d ||
    (value >= 0x20 && value <= 0x7e) ||
    value === 0x85 ||
    (value >= 0xa0 && value <= 0xd7ff) ||
    (value >= 0xe000 && value <= 0xfffd) ||
    (value >= 0x10000 && value <= 0x10ffff)
  );
}
