/**
 * What the generic REST layer asks of a kind (cf. k8s.io/apiserver's
 * rest.Storage + RESTCreateStrategy/RESTUpdateStrategy and sample-apiserver's
 * strategies): a kind supplies its descriptor, table columns, validation and
 * admission, and a store; every verb is written once in this folder.
 */
import type { Request, Response } from 'express';
import type { UserInfo } from '../user.js';
import type { FieldError } from '../field-errors.js';
import type { ResourceRequestInfo } from '../request-info.js';
import type { RequestUrl } from '../request-url.js';
import type { ApiGroupVersion, ResourceDescriptor } from '../resource.js';
import type { GroupResource } from '../status.js';
import type { TableColumn } from './table.js';
import type { ResourceProjection } from './projection.js';
import type { ReadableStore, WritableStore } from './store.js';
import type { ApiObject } from './types.js';

export interface ResourceStrategy {
  readonly descriptor: ResourceDescriptor;
  readonly columns: readonly TableColumn[];
  /** What infrastructure admins see beyond the tenant form the store returns (projection.ts); none: everyone sees the same. */
  readonly projection?: ResourceProjection;
}

export interface WritableResourceStrategy extends ResourceStrategy {
  /** Semantic rules the schema cannot express; run on create and update. */
  validate(object: ApiObject, namespace: string): FieldError[];
  /**
   * Checks that need the requester, run after validation on every write of
   * the main resource (not its status); throws an ApiError to refuse.
   */
  admit?(request: AdmissionRequest): Promise<void>;
}

export interface AdmissionRequest {
  readonly user: UserInfo;
  readonly namespace: string;
  readonly object: ApiObject;
}

/** Served with get, list and watch only: it has no write path to dispatch to. */
export interface ReadOnlyResource {
  readonly access: 'read-only';
  readonly strategy: ResourceStrategy;
  readonly store: ReadableStore;
}

export interface ReadWriteResource {
  readonly access: 'read-write';
  readonly strategy: WritableResourceStrategy;
  readonly store: WritableStore;
}

export type RestResource = ReadOnlyResource | ReadWriteResource;

/** One request being served: what was asked, of which resource. */
export interface Call<R extends RestResource = RestResource> {
  readonly req: Request;
  readonly res: Response;
  readonly info: ResourceRequestInfo;
  readonly url: RequestUrl;
  readonly resource: R;
  readonly gv: ApiGroupVersion;
  readonly gr: GroupResource;
}

export type WriteCall = Call<ReadWriteResource>;
