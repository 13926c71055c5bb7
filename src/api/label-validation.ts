/**
 * Label key, label value and DNS subdomain validation with kube's messages
 * (k8s.io/apimachinery/pkg/api/validate/content: IsLabelKey, IsLabelValue,
 * IsDNS1123Subdomain), shared by object metadata, selectors and tenancy.
 */
import { Buffer } from 'node:buffer';

const LABEL_NAME_PATTERN = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_NAME = new RegExp(`^${LABEL_NAME_PATTERN}$`);
const LABEL_VALUE_PATTERN = `(${LABEL_NAME_PATTERN})?`;
const LABEL_VALUE = new RegExp(`^${LABEL_VALUE_PATTERN}$`);
const DNS_LABEL_PATTERN = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS_SUBDOMAIN_PATTERN = `${DNS_LABEL_PATTERN}(\\.${DNS_LABEL_PATTERN})*`;
const DNS_SUBDOMAIN = new RegExp(`^${DNS_SUBDOMAIN_PATTERN}$`);
const LABEL_NAME_MESSAGE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_MESSAGE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS_SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/** kube's RegexError wording, double space before "or" included. */
function regexError(message: string, pattern: string, ...examples: string[]): string {
  const shown = examples.map((example) => `'${example}', `).join(' or ');
  return `${message} (e.g. ${shown}regex used for validation is '${pattern}')`;
}

function maxLengthError(length: number): string {
  return `must be no more than ${length} bytes`;
}

/** kube limits lengths in UTF-8 bytes, not characters. */
function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

export function dnsSubdomainErrors(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > 253) errors.push(maxLengthError(253));
  if (!DNS_SUBDOMAIN.test(value)) errors.push(regexError(DNS_SUBDOMAIN_MESSAGE, DNS_SUBDOMAIN_PATTERN, 'example.com'));
  return errors;
}

function labelKeyPrefixErrors(prefix: string): string[] {
  if (prefix === '') return ['prefix part must be non-empty'];
  return dnsSubdomainErrors(prefix).map((error) => `prefix part ${error}`);
}

function labelKeyNameErrors(name: string): string[] {
  const errors: string[] = [];
  if (name === '') errors.push('name part must be non-empty');
  else if (byteLength(name) > 63) errors.push(`name part ${maxLengthError(63)}`);
  // An empty name also fails the pattern; kube reports both.
  if (!LABEL_NAME.test(name)) {
    errors.push(`name part ${regexError(LABEL_NAME_MESSAGE, LABEL_NAME_PATTERN, 'MyName', 'my.name', '123-abc')}`);
  }
  return errors;
}

/** content.IsLabelKey (a qualified name): `[dns-subdomain/]name`. */
export function labelKeyErrors(key: string): string[] {
  const parts = key.split('/');
  const [first = '', second] = parts;
  if (parts.length > 2) {
    const shape = regexError(LABEL_NAME_MESSAGE, LABEL_NAME_PATTERN, 'MyName', 'my.name', '123-abc');
    return [`a valid label key ${shape} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`];
  }
  if (second === undefined) return labelKeyNameErrors(first);
  return [...labelKeyPrefixErrors(first), ...labelKeyNameErrors(second)];
}

/** content.IsLabelValue. */
export function labelValueErrors(value: string): string[] {
  const errors: string[] = [];
  if (byteLength(value) > 63) errors.push(maxLengthError(63));
  if (!LABEL_VALUE.test(value)) errors.push(regexError(LABEL_VALUE_MESSAGE, LABEL_VALUE_PATTERN, 'MyValue', 'my_value', '12345'));
  return errors;
}
