/**
 * What kube-apiserver's decoder for a custom resource says about a create
 * or update body before the object reaches any check of the server, in its
 * order (k8s.io/apimachinery runtime/serializer/json json.go Decode and
 * meta.go Interpret, runtime/schema ParseGroupVersion, unstructured
 * UnstructuredJSONScheme; go.yaml.in/yaml/v2 readerc.go; the summary of
 * k8s.io/apiserver endpoints/handlers rest.go transformDecodeError):
 * pure functions over the body's bytes and its decoded value.
 */
import { secondDocumentStart } from './yaml-events.js';

export interface GroupVersion {
  readonly group: string;
  readonly version: string;
}

/** The Go struct kube's SimpleMetaFactory.Interpret decodes a body into, as Go prints its type. */
const findKindType = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

/** encoding/json's name for the JSON type of a value (UnmarshalTypeError.Value). */
function jsonTypeName(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'boolean') return 'bool';
  return typeof value;
}

/** schema.ParseGroupVersion. */
export function parseGroupVersion(text: string): GroupVersion | { readonly error: string } {
  if (text === '' || text === '/') return { group: '', version: '' };
  const parts = text.split('/');
  if (parts.length === 1) return { group: '', version: text };
  if (parts.length === 2) return { group: parts[0] ?? '', version: parts[1] ?? '' };
  return { error: `unexpected GroupVersion string: ${text}` };
}

/** schema.GroupVersion.String. */
export function groupVersionString(gv: GroupVersion): string {
  return gv.group === '' ? gv.version : `${gv.group}/${gv.version}`;
}

export type TypeMeta = { readonly apiVersion: GroupVersion; readonly kind: string } | { readonly error: string };

/**
 * Interpret: apiVersion and kind as encoding/json reads them into a struct
 * (keys matched regardless of case, null leaves a field empty, any other
 * non-string is the first type error), then the group/version parsed.
 * Errors are worded as kube words them.
 */
export function interpretTypeMeta(body: unknown): TypeMeta {
  const found = { apiversion: '', kind: '' };
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    let typeError: string | undefined;
    for (const [key, value] of Object.entries(body)) {
      const field = key.toLowerCase();
      if (field !== 'apiversion' && field !== 'kind') continue;
      if (typeof value === 'string') found[field] = value;
      else if (value !== null) typeError ??= `json: cannot unmarshal ${jsonTypeName(value)} into Go struct field .${field === 'kind' ? 'kind' : 'apiVersion'} of type string`;
    }
    if (typeError !== undefined) return { error: `couldn't get version/kind; json parse error: ${typeError}` };
  } else if (body !== null) {
    return { error: `couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonTypeName(body)} into Go value of type ${findKindType}` };
  }
  const apiVersion = parseGroupVersion(found.apiversion);
  if ('error' in apiVersion) return apiVersion;
  return { apiVersion, kind: found.kind };
}

/** The json serializer's gvkWithDefaults: what the body names, completed from the endpoint's kind. */
export function withDefaults(meta: { readonly apiVersion: GroupVersion; readonly kind: string }, expected: GroupVersion, expectedKind: string): { readonly version: string; readonly kind: string } {
  const kind = meta.kind === '' ? expectedKind : meta.kind;
  const { group, version } = meta.apiVersion;
  const defaulted = version === '' && (group === '' || group === expected.group);
  return { version: defaulted ? expected.version : version, kind };
}

/** handlers/rest.go summarizeData: an object's first bytes as text, anything else in hex. */
export function summarizeData(bytes: Uint8Array, maxLength = 30): string {
  if (bytes.length === 0) return '<empty>';
  const head = bytes.subarray(0, maxLength);
  const more = bytes.length > maxLength ? ' ...' : '';
  return bytes[0] === 0x7b ? `${Buffer.from(head).toString('utf8')}${more}` : `${Buffer.from(head).toString('hex')}${more}`;
}

/** goyaml's input_raw_buffer_size. */
const rawReadSize = 512;

/** Whether go-yaml's reader accepts a character (its printable set). */
function yamlPrintable(value: number): boolean {
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

/**
 * The error go-yaml's reader (yaml_parser_update_buffer) gives for the
 * bytes of a YAML body, if any: invalid or incomplete UTF-8, surrogates,
 * control characters. A UTF-16 byte order mark switches to UTF-16, which
 * this server does not decode: it reports what goyaml reports for an odd
 * length, or refuses the body as not UTF-8.
 */
export function yamlReaderError(bytes: Uint8Array): string | undefined {
  if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) {
    return bytes.length % 2 === 1 ? 'yaml: incomplete UTF-16 character' : 'yaml: invalid leading UTF-8 octet';
  }
  // goyaml decodes its input in 512-byte reads, as far as the parser needs: through the first document's end marker.
  // Latin-1 maps each byte to one character: offsets stay byte offsets, and the markers are ASCII.
  const secondDocument = secondDocumentStart(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1'));
  const readEnd = secondDocument === undefined ? bytes.length : Math.min(bytes.length, (Math.floor((secondDocument + 4) / rawReadSize) + 1) * rawReadSize);
  const start = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  for (let position = start; position < readEnd; ) {
    const octet = bytes[position] ?? 0;
    const width = octet < 0x80 ? 1 : (octet & 0xe0) === 0xc0 ? 2 : (octet & 0xf0) === 0xe0 ? 3 : (octet & 0xf8) === 0xf0 ? 4 : 0;
    if (width === 0) return 'yaml: invalid leading UTF-8 octet';
    // A sequence cut by the end of what was read is an error only once the input has been read to its end.
    if (position + width > readEnd) return secondDocument === undefined ? 'yaml: incomplete UTF-8 octet sequence' : undefined;
    let value = width === 1 ? octet : octet & (0xff >> (width + 1));
    for (let k = 1; k < width; k++) {
      const trailing = bytes[position + k] ?? 0;
      if ((trailing & 0xc0) !== 0x80) return 'yaml: invalid trailing UTF-8 octet';
      value = (value << 6) + (trailing & 0x3f);
    }
    const shortest = width === 1 || (width === 2 && value >= 0x80) || (width === 3 && value >= 0x800) || (width === 4 && value >= 0x10000);
    if (!shortest) return 'yaml: invalid length of a UTF-8 sequence';
    if ((value >= 0xd800 && value <= 0xdfff) || value > 0x10ffff) return 'yaml: invalid Unicode character';
    if (!yamlPrintable(value)) return 'yaml: control characters are not allowed';
    position += width;
  }
  return undefined;
}
