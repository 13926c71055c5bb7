import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { loadSchemaSource } from '../../../../src/api/openapi/schema-source.js';
import { canonicalJson, SCHEMA_GENERATION_ANNOTATION } from '../../../../src/backing/crd.js';
import { hostClaimRecordCRD, hostClaimRecordSchemaGeneration } from '../../../../src/resources/hostclaim/storage.js';

/**
 * The HostClaimRecord CRD's spec digest at each schema generation. A change
 * of the schema fails here until the generation is bumped and its digest
 * added: replicas of a rolling upgrade tell schemas apart by generation
 * only, and an older replica would otherwise put its schema back.
 */
const SPEC_DIGEST_BY_GENERATION: Readonly<Record<number, string>> = {
  1: '2f6cf491e19474c5cb0495c5bfa26de1df1f2fef11c88d70df52635d3099df12',
  2: 'd69f31941ed2fe46e8c30943a4c47f5ade70928f63ff2b62441b7a7a55e37e0d',
};

describe('the HostClaimRecord CRD', () => {
  const crd = hostClaimRecordCRD(loadSchemaSource());

  it('carries its schema generation', () => {
    expect(crd.metadata).toEqual({
      name: 'hostclaimrecords.infra.tenancy.metal3.io',
      annotations: { [SCHEMA_GENERATION_ANNOTATION]: String(hostClaimRecordSchemaGeneration) },
    });
  });

  it('has the spec recorded for its schema generation (bump the generation with every schema change)', () => {
    const digest = createHash('sha256').update(canonicalJson(crd.spec)).digest('hex');
    expect(digest).toBe(SPEC_DIGEST_BY_GENERATION[hostClaimRecordSchemaGeneration]);
  });
});
