import type { TObject } from '@sinclair/typebox';
import type { IdentityField } from '../identity.ts';
import type { KeywordAttribute } from './search-attributes.ts';

/**
 * What the gateway needs to know of a workflow to start it and report on it.
 * Each workflow's `<name>.input.ts` exports one; the registry lists them.
 * Data only: the worker loads the workflow code itself (workflows/index.ts)
 * inside Temporal's sandbox, by `workflowType`.
 */
export interface WorkflowDefinition {
  /** The name in `/api/workflow/{workflowName}`. */
  name: string;
  /** The exported workflow function's name: Temporal's workflow type. */
  workflowType: string;
  /** JSON Schema (TypeBox) the body must satisfy before a run starts. */
  input: TObject;
  /** Maps accepted alternative spellings to the schema's keys before validation. */
  normalize?: (body: Record<string, unknown>) => Record<string, unknown>;
  /** The other spelling a body may use for a key of `input` (what `normalize` maps): canonical → alias. */
  aliases?: ReadonlyArray<readonly [canonical: string, alias: string]>;
  /** What `result.result` holds when the run completed. */
  result: TObject;
  /**
   * Input keys that name the caller (the run acts as them): required like
   * any input key they are in the schema, and one that contradicts the
   * authenticated caller is refused (403).
   */
  identityFields?: Partial<Record<IdentityField, string>>;
  /**
   * Input keys holding ids (users, companies, organizations): a UUID among
   * them is lower-cased before the run starts, so the run, its memo, its
   * search attributes and its records carry it in lower case.
   */
  idFields?: readonly string[];
  /**
   * Input keys holding recipient addresses (arrays of strings): checked at
   * the trigger with the rules of a send (core/email/addresses.ts: format,
   * length, blocked domains; at most MAX_RECIPIENTS together), so an address
   * a send would refuse never starts a run that fails later.
   */
  addressFields?: readonly string[];
  /**
   * The run's own search attributes beyond `CompanyId` and `UserId` (which
   * every run carries): input key → attribute (core/workflows/search-attributes.ts),
   * set at start from the validated input when the value is a non-empty
   * string. `{}` when there are none.
   */
  searchAttributes: Readonly<Record<string, KeywordAttribute>>;
  /** The ids of the templates (templates/<id>/) its emails use; `[]` for none. */
  templates: readonly string[];
  /** One line for the API reference: what the workflow does. */
  description: string;
}
