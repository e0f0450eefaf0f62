// Checks answers of the sandbox's Canton participant and token registry against the official
// OpenAPI documents pinned under sandbox/*/openapi/ (see the SOURCE.md beside each), so that the
// sandbox cannot drift from what a real participant or registry answers without a test noticing.
import { readFileSync } from 'node:fs';
import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

/** The pinned documents, relative to the repository root. */
export const OFFICIAL_OPENAPI = {
  ledger: 'sandbox/ledger/openapi/json-ledger-api-3.4.yaml',
  'transfer-instruction': 'sandbox/registry/openapi/transfer-instruction-v1.yaml',
  allocation: 'sandbox/registry/openapi/allocation-v1.yaml',
  'allocation-instruction': 'sandbox/registry/openapi/allocation-instruction-v1.yaml',
  'token-metadata': 'sandbox/registry/openapi/token-metadata-v1.yaml',
} as const;

export type OfficialOpenApiName = keyof typeof OFFICIAL_OPENAPI;

export interface OpenApiDocument {
  readonly openapi: string;
  readonly info: { readonly title: string; readonly version: string };
  readonly paths: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly components?: Readonly<Record<string, unknown>>;
}

export interface Answer {
  readonly method: string;
  /** The concrete request path; a query string is ignored. */
  readonly path: string;
  readonly status: number;
  readonly body: unknown;
  /** Picks among several documented media types; application/json (else the only one) when absent. */
  readonly contentType?: string;
}

export interface Verdict {
  readonly ok: boolean;
  /** One line per violation, empty when ok. */
  readonly errors: string;
}

export interface DocumentedOperation {
  /** Upper case, as on the wire. */
  readonly method: string;
  /** The path template, e.g. /v2/users/{user-id}. */
  readonly path: string;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

// The tests run compiled from dist/test/helpers/ while the documents stay in the source tree.
const REPO_ROOT = new URL('../../../', import.meta.url);

// Any absolute URI does: it only anchors the documents' own `#/components/...` references.
const DOC_ID = 'https://bestex.invalid/official-openapi.json';

type Json = Record<string, unknown>;

const loaded = new Map<OfficialOpenApiName, OpenApiDocument>();

export function loadOfficialOpenApi(name: OfficialOpenApiName): OpenApiDocument {
  let doc = loaded.get(name);
  if (!doc) {
    doc = parse(readFileSync(new URL(OFFICIAL_OPENAPI[name], REPO_ROOT), 'utf8')) as OpenApiDocument;
    loaded.set(name, doc);
  }
  return doc;
}

export function documentedOperations(doc: OpenApiDocument): DocumentedOperation[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.filter((m) => m in item).map((m) => ({ method: m.toUpperCase(), path })),
  );
}

interface Compiled {
  readonly ajv: InstanceType<typeof Ajv.default>;
  readonly validators: Map<string, ValidateFunction>;
}

const compiled = new WeakMap<OpenApiDocument, Compiled>();

function compiledFor(doc: OpenApiDocument): Compiled {
  let entry = compiled.get(doc);
  if (!entry) {
    // strict: false lets OpenAPI-only keywords (example, ...) through. OpenAPI 3.0's `nullable`
    // needs no rewriting: Ajv implements it for a schema that also has a `type`, and refuses to
    // compile one without, which then surfaces as a thrown error rather than a silent pass.
    const ajv = new Ajv.default({ strict: false, allErrors: true });
    addFormats.default(ajv);
    // The token standard's Instrument.decimals; ajv-formats has no int8.
    ajv.addFormat('int8', { type: 'number', validate: (n: number) => Number.isInteger(n) && n >= -128 && n <= 127 });
    // The whole document is one schema, so a response schema is compiled by its JSON pointer
    // and its `#/components/schemas/X` references resolve inside the same document.
    ajv.addSchema(doc as unknown as Json, DOC_ID);
    entry = { ajv, validators: new Map() };
    compiled.set(doc, entry);
  }
  return entry;
}

function templateRegExp(template: string): RegExp {
  const escaped = template
    .split(/(\{[^}]+\})/)
    .map((part) => (/^\{[^}]+\}$/.test(part) ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${escaped}$`);
}

// Where a literal segment and a parameter both match (/v2/parties/participant-id against
// /v2/parties/{party}), OpenAPI gives the literal template precedence.
function matchTemplate(doc: OpenApiDocument, concrete: string): string | undefined {
  const path = concrete.split(/[?#]/, 1)[0] ?? concrete;
  const literalLength = (t: string) => t.replace(/\{[^}]+\}/g, '').length;
  return Object.keys(doc.paths)
    .filter((template) => templateRegExp(template).test(path))
    .sort((a, b) => literalLength(b) - literalLength(a))[0];
}

function pointerToken(token: string): string {
  return encodeURIComponent(token.replace(/~/g, '~0').replace(/\//g, '~1'));
}

function resolveRef(doc: OpenApiDocument, ref: string): { node: unknown; pointer: string } {
  if (!ref.startsWith('#/')) throw new Error(`only local references are supported, got ${ref}`);
  const tokens = ref.slice(2).split('/').map((t) => decodeURIComponent(t).replace(/~1/g, '/').replace(/~0/g, '~'));
  const node = tokens.reduce<unknown>((n, key) => (n && typeof n === 'object' ? (n as Json)[key] : undefined), doc);
  if (node === undefined) throw new Error(`dangling reference ${ref} in ${describe(doc)}`);
  return { node, pointer: `#/${tokens.map(pointerToken).join('/')}` };
}

function describe(doc: OpenApiDocument): string {
  return `${doc.info.title} ${doc.info.version}`;
}

function mediaTypeOf(contentType: string): string {
  return (contentType.split(';', 1)[0] ?? contentType).trim().toLowerCase();
}

function pickMediaType(content: Json, wanted: string | undefined): string | undefined {
  const types = Object.keys(content);
  if (wanted === undefined) return types.includes('application/json') ? 'application/json' : types[0];
  const media = mediaTypeOf(wanted);
  return (
    types.find((t) => t.toLowerCase() === media) ??
    types.find((t) => t.endsWith('/*') && media.startsWith(t.slice(0, -1).toLowerCase())) ??
    types.find((t) => t === '*/*')
  );
}

function formatError(e: ErrorObject): string {
  const where = e.instancePath === '' ? 'body' : `body${e.instancePath}`;
  const allowed = e.keyword === 'enum' ? ` (${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')})` : '';
  return `${where} ${e.message ?? e.keyword}${allowed}`;
}

/**
 * Validates one answer against the operation documented for its method and concrete path, using
 * the response documented for its status (else its NXX range, else `default`). Throws when the
 * path, method, status or media type is not documented at all: that is itself a conformance
 * failure, not a body to judge.
 */
export function validateAnswer(doc: OpenApiDocument, answer: Answer): Verdict {
  const method = answer.method.toLowerCase();
  const operation = `${answer.method.toUpperCase()} ${answer.path}`;
  const template = matchTemplate(doc, answer.path);
  if (template === undefined) throw new Error(`${operation}: no such path in ${describe(doc)}`);
  const item = doc.paths[template] as Json;
  if (!METHODS.includes(method as (typeof METHODS)[number]) || !(method in item)) {
    throw new Error(`${operation}: ${template} documents no ${answer.method.toUpperCase()} in ${describe(doc)}`);
  }
  const responses = ((item[method] as Json).responses ?? {}) as Json;
  // Canton documents a 400 as its request decoder's text/plain answer and its own JsCantonError
  // refusals under `default`: an answer of a media type its status does not list is held to `default`.
  const listsMediaType = (key: string) => {
    if (answer.contentType === undefined) return true;
    let response = responses[key] as Json;
    while (typeof response.$ref === 'string') response = resolveRef(doc, response.$ref).node as Json;
    const content = response.content as Json | undefined;
    return content === undefined || pickMediaType(content, answer.contentType) !== undefined;
  };
  const keys = [String(answer.status), `${String(answer.status).charAt(0)}XX`, 'default'].filter((k) => k in responses);
  const statusKey = keys.find(listsMediaType) ?? keys[0];
  if (statusKey === undefined) {
    throw new Error(`${operation}: status ${answer.status} is not documented for ${template} in ${describe(doc)}`);
  }

  let pointer = `#/paths/${pointerToken(template)}/${method}/responses/${pointerToken(statusKey)}`;
  let response = responses[statusKey] as Json;
  while (typeof response.$ref === 'string') {
    const resolved = resolveRef(doc, response.$ref);
    response = resolved.node as Json;
    pointer = resolved.pointer;
  }

  const content = response.content as Json | undefined;
  const context = `${answer.method.toUpperCase()} ${template} ${statusKey}`;
  if (content === undefined || Object.keys(content).length === 0) {
    const empty = answer.body === undefined || answer.body === null || answer.body === '';
    return { ok: empty, errors: empty ? '' : `${context}: documents no body, got one` };
  }
  const mediaType = pickMediaType(content, answer.contentType);
  if (mediaType === undefined) {
    throw new Error(`${operation}: ${answer.contentType} is not documented for ${template} ${statusKey} in ${describe(doc)}`);
  }
  if ((content[mediaType] as Json | undefined)?.schema === undefined) return { ok: true, errors: '' };

  const schemaPointer = `${pointer}/content/${pointerToken(mediaType)}/schema`;
  const { ajv, validators } = compiledFor(doc);
  const validate = validators.get(schemaPointer) ?? ajv.compile({ $ref: `${DOC_ID}${schemaPointer}` });
  validators.set(schemaPointer, validate);
  if (validate(answer.body)) return { ok: true, errors: '' };
  const lines = (validate.errors ?? []).map(formatError);
  return { ok: false, errors: [`${context} ${mediaType}:`, ...lines].join('\n') };
}
