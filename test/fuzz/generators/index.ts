/** Every family of generated requests, equally likely. */
import fc from 'fast-check';
import type { FuzzCase } from '../model.js';
import { applyPatch, jsonBody, jsonPatch, mergePatch, strategicPatch, yamlBody } from './bodies.js';
import { headersCase, pathCase, queryCase } from './requests.js';

export const fuzzCase: fc.Arbitrary<FuzzCase> = fc.oneof(jsonBody, yamlBody, mergePatch, jsonPatch, strategicPatch, applyPatch, queryCase, headersCase, pathCase);
