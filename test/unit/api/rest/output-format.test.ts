import { describe, expect, it } from 'vitest';

import { negotiateOutput, type ResponseFormat, type OutputTarget } from '../../../../src/api/rest/output-format.js';
import { apiError } from '../api-errors.js';

const negotiated = (accept: string | undefined, target: OutputTarget): ResponseFormat =>
  negotiateOutput(accept, target);

const NOT_ACCEPTABLE = 'only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf';

// Accept headers as the clients send them (protocol reference §3.1).
const KUBECTL_GET =
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
const METADATA_LIST =
  'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const METADATA_OBJECT =
  'application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

describe('negotiateOutput', () => {
  it('serves kubectl get a v1 Table for objects, lists and watches', () => {
    for (const target of ['object', 'list', 'watch'] as const) {
      expect(negotiated(KUBECTL_GET, target)).toEqual({ kind: 'table', version: 'v1' });
    }
  });

  it('serves a v1beta1 Table when that is preferred', () => {
    const accept = 'application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json';
    expect(negotiated(accept, 'list')).toEqual({ kind: 'table', version: 'v1beta1' });
  });

  it('serves JSON to controller-runtime, client-go, kubectl -o yaml and clients without Accept', () => {
    for (const accept of [undefined, '', 'application/json', '*/*', 'application/*', 'application/json, */*']) {
      expect(negotiated(accept, 'list')).toEqual({ kind: 'json' });
      expect(negotiated(accept, 'object')).toEqual({ kind: 'json' });
      expect(negotiated(accept, 'watch')).toEqual({ kind: 'json' });
    }
  });

  it('serves the metadata client (GC, quota) PartialObjectMetadata(List) in JSON, skipping protobuf', () => {
    expect(negotiated(METADATA_LIST, 'list')).toEqual({ kind: 'partialObjectMetadata', version: 'v1' });
    expect(negotiated(METADATA_OBJECT, 'object')).toEqual({ kind: 'partialObjectMetadata', version: 'v1' });
    // client-go's metadata Watch asks for PartialObjectMetadata per event.
    expect(negotiated(METADATA_OBJECT, 'watch')).toEqual({ kind: 'partialObjectMetadata', version: 'v1' });
    const beta = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1';
    expect(negotiated(beta, 'list')).toEqual({ kind: 'partialObjectMetadata', version: 'v1beta1' });
  });

  it('orders ranges by q-value, then specificity', () => {
    const accept = 'application/json;q=0.5,application/json;as=Table;v=v1;g=meta.k8s.io';
    expect(negotiated(accept, 'list')).toEqual({ kind: 'table', version: 'v1' });
    expect(negotiated('text/html,*/*;q=0.1', 'object')).toEqual({ kind: 'json' });
  });

  it('converts under a wildcard range, as kube tries JSON first', () => {
    expect(negotiated('*/*;as=Table;g=meta.k8s.io;v=v1', 'list')).toEqual({ kind: 'table', version: 'v1' });
  });

  it('accepts stream=watch and sv=v1, skips other values', () => {
    expect(negotiated('application/json;stream=watch', 'watch')).toEqual({ kind: 'json' });
    expect(negotiated('application/json;sv=v1', 'list')).toEqual({ kind: 'json' });
    expect(apiError(() => negotiated('application/json;stream=other', 'watch')).message).toBe(NOT_ACCEPTABLE);
    expect(apiError(() => negotiated('application/json;sv=v2', 'list')).message).toBe(NOT_ACCEPTABLE);
  });

  it('serves objects and lists as YAML where kube does, never a watch (kube has no YAML stream serializer) nor a conversion', () => {
    expect(negotiated('application/yaml', 'object')).toEqual({ kind: 'yaml' });
    expect(negotiated('application/yaml', 'list')).toEqual({ kind: 'yaml' });
    expect(negotiated('application/yaml, application/json', 'list')).toEqual({ kind: 'yaml' });
    expect(negotiated('application/*', 'object')).toEqual({ kind: 'json' });
    expect(negotiated('application/yaml, application/json', 'watch')).toEqual({ kind: 'json' });
    expect(apiError(() => negotiated('application/yaml', 'watch')).code).toBe(406);
    expect(negotiated('application/yaml;as=Table;g=meta.k8s.io;v=v1, application/json', 'list')).toEqual({ kind: 'json' });
  });

  it('orders by q like goautoneg but never drops a range: q=0 and an unparsable q are served', () => {
    for (const accept of ['application/json;q=0', '*/*;q=0', 'application/json;q=abc', 'application/json;q= 0.5']) {
      expect(negotiated(accept, 'object'), accept).toEqual({ kind: 'json' });
    }
    expect(negotiated('application/json;q=0,application/json;as=Table;g=meta.k8s.io;v=v1;q=0.1', 'list')).toEqual({ kind: 'table', version: 'v1' });
    // Specific before wildcard at equal q; type and subtype compared as sent.
    expect(negotiated('*/*;as=Table;g=meta.k8s.io;v=v1,application/json', 'list')).toEqual({ kind: 'json' });
    expect(apiError(() => negotiated('Application/JSON', 'object')).code).toBe(406);
    expect(apiError(() => negotiated('*/json', 'object')).code).toBe(406);
  });

  it('answers 406 NotAcceptable listing what it serves when nothing is acceptable', () => {
    for (const accept of [
      'application/vnd.kubernetes.protobuf',
      'text/plain',
      'application/',
      'json',
      'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
    ]) {
      const err = apiError(() => negotiated(accept, 'list'));
      expect(err.code).toBe(406);
      expect(err.toStatus()).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: NOT_ACCEPTABLE,
        reason: 'NotAcceptable',
        code: 406,
      });
    }
  });

  it('skips conversions to other groups, versions or kinds (406 when nothing else is acceptable)', () => {
    for (const accept of [
      'application/json;as=Table;g=meta.k8s.io;v=v2',
      'application/json;as=Table;v=v1',
      'application/json;as=Table',
      'application/json;as=Status;g=meta.k8s.io;v=v1',
      'application/json;as=HostClaim;g=tenancy.metal3.io;v=v1alpha1',
      'application/json;g=meta.k8s.io;v=v1',
      'application/yaml;as=Table;g=meta.k8s.io;v=v1',
    ]) {
      expect(apiError(() => negotiated(accept, 'list')).message, accept).toBe(NOT_ACCEPTABLE);
      expect(negotiated(`${accept},application/json`, 'list'), accept).toEqual({ kind: 'json' });
    }
  });

  it('refuses a PartialObjectMetadata kind that does not fit the target, without falling back', () => {
    const list = apiError(() => negotiated(METADATA_OBJECT, 'list'));
    expect(list.code).toBe(406);
    expect(list.reason).toBe('NotAcceptable');
    expect(list.message).toBe(
      'you requested PartialObjectMetadata, but the requested object is a list (*unstructured.UnstructuredList)',
    );
    const object = apiError(() => negotiated(METADATA_LIST, 'object'));
    expect(object.code).toBe(406);
    expect(object.message).toBe(
      'you requested PartialObjectMetadataList, but the requested object is not a list (*unstructured.Unstructured)',
    );
  });

  it('streams plain objects when a watch asks for PartialObjectMetadataList, as kube does', () => {
    expect(negotiated(METADATA_LIST, 'watch')).toEqual({ kind: 'json' });
  });
});
