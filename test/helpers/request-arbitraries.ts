// Requests generated from a spec (openapi/v1.yaml, openapi/portal.yaml) with fast-check: each operation's query and body from
// their JSON Schemas (patterns through fc.stringMatching, bounds, enums, oneOf), with the values the
// spec's own examples send mixed in so that a fair share of requests get past validation to the
// core, and one field at a time broken in one way its schema forbids (or a neighbouring way it
// allows). fast-check rather than a schema faker: it is already the project's generator for property
// tests, it is seeded, and the schemas here use only the handful of keywords walked below.
import fc from 'fast-check';
import { listOperations, requestSchemas } from '../../codegen/request-schemas.js';
import type { Spec } from './spec.js';

type Json = Record<string, unknown>;
type Schema = Json;

export interface FuzzRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly payload?: string;
  /** What was done to the request, for the failure report. */
  readonly label: string;
  /** The client address it comes from (inject's default, loopback, when absent). */
  readonly remoteAddress?: string;
  /** The answer a rule names for this request, beyond what the contract allows for any. */
  readonly expect?: { readonly status: number; readonly code?: string };
}

/** A query value is sent as text; a body value as JSON. */
const asQueryText = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

export class RequestArbitraries {
  private readonly query: Record<string, Schema>;
  private readonly body: Record<string, Schema>;

  /**
   * `keyGiven` is the `x-request.given` condition under which the spec's examples send a valid key
   * (`partner-key` in the swap API's, `portal-key` in the portal's): an example needing only that
   * is one a keyed request reproduces.
   */
  constructor(
    private readonly spec: Spec,
    private readonly keyGiven = 'partner-key',
  ) {
    const schemas = requestSchemas(spec.document);
    this.query = schemas.query;
    this.body = schemas.body;
  }

  private resolve(schema: Schema): Schema {
    if (typeof schema.$ref !== 'string') return schema;
    const name = schema.$ref.replace('#/components/schemas/', '');
    return this.resolve(this.spec.document.components!.schemas![name]!);
  }

  /** Any value the schema allows. */
  valid(given: Schema): fc.Arbitrary<unknown> {
    const schema = this.resolve(given);
    const alternatives = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
    if (alternatives) return fc.oneof(...alternatives.map((s) => this.valid(s)));
    if ('const' in schema) return fc.constant(schema.const);
    if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
    switch (schema.type) {
      case 'string': {
        const minLength = (schema.minLength as number | undefined) ?? 0;
        const maxLength = (schema.maxLength as number | undefined) ?? 64;
        if (schema.format === 'date-time') return fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString());
        if (typeof schema.pattern === 'string') {
          return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length >= minLength && s.length <= maxLength);
        }
        return fc.string({ minLength, maxLength: Math.min(maxLength, 40), unit: 'binary' });
      }
      case 'integer':
        return fc.integer({ min: (schema.minimum as number | undefined) ?? -1_000_000, max: (schema.maximum as number | undefined) ?? 1_000_000 });
      case 'boolean':
        return fc.boolean();
      case 'array': {
        const items = this.valid((schema.items ?? {}) as Schema);
        const bounds = { minLength: (schema.minItems as number | undefined) ?? 0, maxLength: (schema.maxItems as number | undefined) ?? 10 };
        return schema.uniqueItems === true ? fc.uniqueArray(items, { ...bounds, selector: (v) => JSON.stringify(v) }) : fc.array(items, bounds);
      }
      case 'object': {
        const properties = (schema.properties ?? {}) as Record<string, Schema>;
        const record: Record<string, fc.Arbitrary<unknown>> = {};
        for (const [name, s] of Object.entries(properties)) record[name] = this.valid(s);
        return fc.record(record, { requiredKeys: (schema.required ?? []) as string[] });
      }
      default:
        return fc.jsonValue();
    }
  }

  /** Values the schema refuses, or sits at the edge of, for one field. */
  broken(given: Schema): unknown[] {
    const schema = this.resolve(given);
    const alternatives = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
    const out: unknown[] = [null, true, [], {}, '', ' ', '\u0000', 'é✓🙂', '%', '__proto__', 'x'.repeat(5000)];
    if (alternatives) for (const s of alternatives) out.push(...this.broken(s));
    if (Array.isArray(schema.enum)) out.push('not-one-of-them', String(schema.enum[0]).toUpperCase());
    if (schema.type === 'string') {
      out.push(42, -1);
      if (typeof schema.maxLength === 'number') out.push('a'.repeat(schema.maxLength + 1));
      if (typeof schema.pattern === 'string') out.push('!not-the-pattern', ' 1', '1 ', '1e5', '-1', '0', '0.00000000001', '1,5', '１２');
      if (schema.format === 'date-time') out.push('2026-13-01T00:00:00Z', 'yesterday', '2026-01-01', '99999-01-01T00:00:00Z', '1700000000');
    }
    if (schema.type === 'array') {
      const item = this.valid((schema.items ?? {}) as Schema);
      const one = fc.sample(item, { seed: 1, numRuns: 1 })[0];
      out.push([null], [42], [[]], [{}], 'x');
      if (schema.uniqueItems === true) out.push([one, one]);
      // One item too many: distinct strings, or the same valid object again (an object has no string form to vary).
      if (typeof schema.maxItems === 'number') out.push(Array.from({ length: schema.maxItems + 1 }, (_, i) => (typeof one === 'object' && one !== null ? one : `${String(one)}${i}`)));
      for (const broken of this.broken((schema.items ?? {}) as Schema)) out.push([broken]);
    }
    if (schema.type === 'integer') {
      const min = (schema.minimum as number | undefined) ?? 0;
      const max = (schema.maximum as number | undefined) ?? 1_000_000_000;
      out.push(min - 1, max + 1, 1.5, '1.5', 'abc', '1e2', String(max + 1), 2 ** 53 + 1, '0x10', -0);
    }
    return out;
  }

  /** Each operation's id, method and path. */
  operations() {
    return listOperations(this.spec.document).map(({ operationId, method, path }) => ({ operationId, method: method.toUpperCase(), path }));
  }

  /**
   * The values the spec's examples send for a field of an operation (query or body): those of
   * examples answered 2xx under no condition but a valid key first, then the others.
   */
  private examplesOf(operationId: string, where: 'query' | 'body', field: string): { succeeding: unknown[]; others: unknown[] } {
    const seen = new Set<string>();
    const out = { succeeding: [] as unknown[], others: [] as unknown[] };
    for (const ex of this.spec.examples) {
      if (ex.operationId !== operationId) continue;
      const values = (where === 'query' ? ex.request.query : ex.request.body) as Json | undefined;
      const value = values?.[field];
      if (value === undefined || seen.has(JSON.stringify(value))) continue;
      seen.add(JSON.stringify(value));
      const succeeds = ex.status < 300 && (ex.request.given ?? []).every((g) => g === this.keyGiven);
      (succeeds ? out.succeeding : out.others).push(value);
    }
    return out;
  }

  /**
   * An operation's query or body: each field the spec's succeeding examples send, or another of its
   * examples' values, or any value its schema allows; an optional field is more often left out, so
   * that a fair share of requests is coherent enough to reach the core. Absent fields are undefined.
   */
  private fields(operationId: string, where: 'query' | 'body'): fc.Arbitrary<Json> | null {
    const schema = (where === 'query' ? this.query : this.body)[operationId];
    if (!schema) return null;
    const resolved = this.resolve(schema);
    const required = new Set((resolved.required ?? []) as string[]);
    const record: Record<string, fc.Arbitrary<unknown>> = {};
    for (const [name, s] of Object.entries((resolved.properties ?? {}) as Record<string, Schema>)) {
      const { succeeding, others } = this.examplesOf(operationId, where, name);
      const choices: Array<fc.WeightedArbitrary<unknown>> = [{ weight: 1, arbitrary: this.valid(s) }];
      if (succeeding.length > 0) choices.push({ weight: 6, arbitrary: fc.constantFrom(...succeeding) });
      if (others.length > 0) choices.push({ weight: 1, arbitrary: fc.constantFrom(...others) });
      if (!required.has(name)) choices.push({ weight: succeeding.length > 0 ? 4 : 8, arbitrary: fc.constant(undefined) });
      record[name] = fc.oneof(...choices);
    }
    return fc.record(record);
  }

  /** The fields of an operation's query or body, as its schema names them. */
  fieldNames(operationId: string, where: 'query' | 'body'): string[] {
    const schema = (where === 'query' ? this.query : this.body)[operationId];
    return schema ? Object.keys((this.resolve(schema).properties ?? {}) as Record<string, Schema>) : [];
  }

  /** The schema of one field of an operation's query or body. */
  fieldSchema(operationId: string, where: 'query' | 'body', field: string): Schema | undefined {
    const schema = (where === 'query' ? this.query : this.body)[operationId];
    return schema ? ((this.resolve(schema).properties ?? {}) as Record<string, Schema>)[field] : undefined;
  }

  /**
   * Requests for one operation whose fields are valid against the spec's schemas: a query and a
   * JSON body where the operation takes them, and a key (none, a valid one in either header, or a
   * malformed one) where the operation takes one.
   */
  validRequest(operationId: string, keys: { valid: string }): fc.Arbitrary<{ query: Json; body: Json | null; headers: Record<string, string> }> {
    const query = this.fields(operationId, 'query') ?? fc.constant({});
    const body = this.fields(operationId, 'body') ?? fc.constant(null);
    const operation = listOperations(this.spec.document).find((o) => o.operationId === operationId)!.operation as Json;
    const security = operation.security as Json[] | undefined;
    const keyHeaders: fc.Arbitrary<Record<string, string>> = !security || security.length === 0
      ? fc.constant({})
      : fc.oneof(
          { weight: security.some((s) => Object.keys(s).length === 0) ? 6 : 0, arbitrary: fc.constant({}) },
          { weight: 3, arbitrary: fc.constant({ 'x-api-key': keys.valid }) },
          { weight: 3, arbitrary: fc.constant({ authorization: `Bearer ${keys.valid}` }) },
          { weight: 1, arbitrary: fc.constantFrom<Record<string, string>>({ 'x-api-key': 'bx_unknownunknownunknownunknownun' }, { authorization: 'Bearer' }) },
        );
    return fc.record({ query, body, headers: keyHeaders });
  }

  /** The request target for a query; values are sent as text, arrays as repeated parameters. */
  static target(path: string, query: Json): string {
    const parts: string[] = [];
    for (const [k, v] of Object.entries(query)) {
      if (v === undefined) continue;
      for (const one of Array.isArray(v) ? v : [v]) parts.push(`${encodeURIComponent(k)}=${encodeURIComponent(asQueryText(one))}`);
    }
    return parts.length === 0 ? path : `${path}?${parts.join('&')}`;
  }
}
