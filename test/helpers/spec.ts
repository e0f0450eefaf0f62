// Reads a spec (openapi/v1.yaml by default, v2's bundled with what it borrows from v1, or the key portal's) for the tests: its operations, their response examples with the
// `x-request` that produces each, and validators for response bodies and headers compiled from
// the spec itself (independently of generated/).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import { repoRoot } from '../../handlers/app.js';
import { COMPONENTS_ID, rehome } from '../../codegen/compile-validators.js';
import { listOperations, type OpenApiDocument } from '../../codegen/request-schemas.js';
import { bundledDocument, TARGETS } from '../../codegen/generate.js';

export const SPEC_PATH = path.join(repoRoot(), 'openapi', 'v1.yaml');
export const V2_SPEC_PATH = path.join(repoRoot(), 'openapi', 'v2.yaml');
export const PORTAL_SPEC_PATH = path.join(repoRoot(), 'openapi', 'portal.yaml');

/** The spec at `specPath` as one document: bundled with the specs it borrows from (codegen/), as the service serves it. */
export function specDocument(specPath: string): Record<string, unknown> {
  const text = readFileSync(specPath, 'utf8');
  const target = TARGETS.find((t) => path.join(repoRoot(), t.spec) === specPath);
  const borrows = Object.entries(target?.borrows ?? {});
  if (borrows.length === 0) return parse(text) as Record<string, unknown>;
  return bundledDocument(text, Object.fromEntries(borrows.map(([name, spec]) => [name, readFileSync(path.join(repoRoot(), spec), 'utf8')])));
}

type Json = Record<string, unknown>;

export interface ExampleRequest {
  readonly given?: readonly string[];
  readonly query?: Record<string, string>;
  readonly headers?: Record<string, string>;
  readonly body?: unknown;
  readonly rawBody?: string;
}

export interface SpecExample {
  readonly operationId: string;
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly name: string;
  readonly request: ExampleRequest;
  readonly volatile: readonly string[];
  readonly value: unknown;
  /** The example's media type: `application/json`, `text/event-stream` (its value the stream's text and `schema` each event's data's), or `text/csv` (its value the file's text). */
  readonly mediaType: string;
  readonly schema: ValidateFunction;
  readonly headers: Record<string, { required: boolean; validate: ValidateFunction }>;
}

/** One documented response of an operation: its body's validator (null when it has no JSON body) and headers. */
export interface SpecResponse {
  readonly schema: ValidateFunction | null;
  readonly headers: SpecExample['headers'];
}

export interface Spec {
  readonly document: OpenApiDocument & Json;
  readonly examples: readonly SpecExample[];
  /** Documented statuses per operationId. */
  readonly statuses: ReadonlyMap<string, readonly number[]>;
  /** Documented responses per operationId, by status. */
  readonly responses: ReadonlyMap<string, ReadonlyMap<number, SpecResponse>>;
  /** The introduction's error catalogue: each code's HTTP statuses. */
  readonly errorCodes: ReadonlyMap<string, readonly number[]>;
}

function deref<T>(document: Json, node: unknown): T {
  if (node && typeof node === 'object' && '$ref' in node) {
    const pointer = String((node as { $ref: string }).$ref).replace(/^#\//, '').split('/');
    return deref<T>(document, pointer.reduce<unknown>((n, key) => (n as Json)[key], document));
  }
  return node as T;
}

export function loadSpec(specPath: string = SPEC_PATH): Spec {
  const document = specDocument(specPath) as OpenApiDocument & Json;
  const ajv = new Ajv2020.default({ strict: false, allErrors: true });
  // Every format the specs use (the portal's usage days are dates, its counts int64).
  addFormats.default(ajv, ['date-time', 'date', 'int32', 'int64']);
  ajv.addSchema({ $id: COMPONENTS_ID, $defs: rehome(document.components?.schemas ?? {}) });
  const examples: SpecExample[] = [];
  const statuses = new Map<string, number[]>();
  const responses = new Map<string, Map<number, SpecResponse>>();
  for (const { operationId, method, path: p, operation } of listOperations(document)) {
    statuses.set(operationId, Object.keys(operation.responses ?? {}).map(Number));
    const byStatus = new Map<number, SpecResponse>();
    responses.set(operationId, byStatus);
    for (const [status, responseRef] of Object.entries(operation.responses ?? {})) {
      const response = deref<Json>(document, responseRef);
      const media = (response.content as Json | undefined)?.['application/json'] as Json | undefined;
      const schema = ajv.compile(rehome(media?.schema ?? {}) as Json);
      const headers: SpecExample['headers'] = {};
      for (const [name, headerRef] of Object.entries((response.headers as Json | undefined) ?? {})) {
        const header = deref<Json>(document, headerRef);
        headers[name.toLowerCase()] = { required: header.required === true, validate: ajv.compile(rehome(header.schema) as Json) };
      }
      byStatus.set(Number(status), { schema: media ? schema : null, headers });
      // Each media type's examples, with what its value is checked against: an event stream's text
      // event by event (`x-data-schema`), a CSV file's text as records by the header's names (its
      // volatile pointers naming /<row>/<column>), a JSON body whole.
      const mediaTypes: Array<[string, (content: Json) => ValidateFunction]> = [
        ['text/event-stream', (content) => ajv.compile(rehome(content['x-data-schema'] ?? {}) as Json)],
        ['text/csv', (content) => ajv.compile(rehome(content.schema ?? {}) as Json)],
        ['application/json', () => schema],
      ];
      for (const [mediaType, schemaOf] of mediaTypes) {
        const content = (response.content as Json | undefined)?.[mediaType] as Json | undefined;
        if (!content) continue;
        const validate = schemaOf(content);
        for (const [name, example] of Object.entries((content.examples as Json | undefined) ?? {})) {
          const ex = example as Json;
          examples.push({
            operationId,
            method: method.toUpperCase(),
            path: p,
            status: Number(status),
            name,
            request: (ex['x-request'] ?? {}) as ExampleRequest,
            volatile: (ex['x-volatile'] ?? []) as string[],
            value: ex.value,
            mediaType,
            schema: validate,
            headers,
          });
        }
      }
    }
  }
  return { document, examples, statuses, responses, errorCodes: errorCatalogue(String((document.info as Json | undefined)?.description ?? '')) };
}

/** The rows `| code | HTTP | meaning | action |` of the introduction's "Error codes" table. */
function errorCatalogue(description: string): Map<string, number[]> {
  const section = description.split('## Error codes')[1]?.split('\n## ')[0] ?? '';
  const codes = new Map<string, number[]>();
  for (const row of section.split('\n')) {
    const cells = row.split('|').map((c) => c.trim());
    if (cells.length < 4 || !/^[a-z_]+$/.test(cells[1]!) || !/^\d/.test(cells[2]!)) continue;
    codes.set(cells[1]!, cells[2]!.split(',').map((s) => Number(s.trim())));
  }
  return codes;
}

/** Removes the values at the given JSON pointers (volatile values such as timestamps). */
export function withoutPointers(value: unknown, pointers: readonly string[]): unknown {
  const copy = structuredClone(value);
  for (const pointer of pointers) {
    const keys = pointer.split('/').slice(1);
    const last = keys.pop();
    const parent = keys.reduce<unknown>((n, k) => (n && typeof n === 'object' ? (n as Json)[k] : undefined), copy);
    if (last !== undefined && parent && typeof parent === 'object') delete (parent as Json)[last];
  }
  return copy;
}

export function pointerExists(value: unknown, pointer: string): boolean {
  let node = value;
  for (const key of pointer.split('/').slice(1)) {
    if (!node || typeof node !== 'object' || !(key in node)) return false;
    node = (node as Json)[key];
  }
  return true;
}

/** A server-sent events text as its events: each a map of its fields (comments left out), the `retry` frame included. */
export function sseFrames(text: string): Array<Record<string, string>> {
  return text
    .split(/\r?\n\r?\n/)
    .map((block) => block.split(/\r?\n/).filter((line) => line !== '' && !line.startsWith(':')))
    .filter((lines) => lines.length > 0)
    .map((lines) => Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).replace(/^ /, '')])));
}
