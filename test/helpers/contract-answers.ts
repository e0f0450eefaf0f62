// Judges one HTTP answer against a spec (openapi/v1.yaml, openapi/portal.yaml), whatever the
// request was: the rules every answer keeps (the version headers, never a 5xx, never a stack,
// never the key the request sent, the spec's cross-origin rule), those of an operation's
// documented responses (status, body schema, headers), and the conventions for what the
// operations do not cover (404 `not_found`, 405 `method_not_allowed` with `Allow`, the error
// envelope with `no-store` on every non-2xx, its `code` from the catalogue with that code's
// status). Returns every violation as a short sentence; it never throws on a malformed answer, so
// a body that is not JSON is a violation, not an error someone could swallow.
import type { Spec } from './spec.js';
import { listOperations } from '../../codegen/request-schemas.js';

export interface Answer {
  readonly status: number;
  /** Header names in lower case. */
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

export interface Asked {
  readonly method: string;
  /** The request target as sent (path and query). */
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * The request is not well-formed HTTP: its head ('head': the server must close the connection
   * after refusing it) or its target ('target'). Either may be refused with any 4xx of the
   * catalogue, in the error envelope; if it is answered instead, that answer is judged as usual.
   */
  readonly malformed?: 'head' | 'target';
}

// What a stack trace or a framework error leaves in a body.
const LEAKS = /\n\s+at \S|node:internal|node_modules|\/dist\/|FST_ERR|"statusCode"/;

/** The path a target names, percent-decoded as a router reads it (an absolute-form target's too). */
export function pathOf(target: string): string {
  const raw = /^[a-z]+:\/\//i.test(target) ? target.replace(/^[a-z]+:\/\/[^/?#]*/i, '') : target;
  const path = raw.split(/[?#]/)[0]!;
  try {
    return decodeURIComponent(path);
  } catch {
    return path;
  }
}

export interface ContractJudge {
  (asked: Asked, answer: Answer): string[];
}

export interface JudgeOptions {
  /**
   * Each error code's statuses, where the spec has no "Error codes" table of its own (the portal's
   * answers errors "with the swap API's codes"); by default the spec's own catalogue.
   */
  readonly errorCodes?: ReadonlyMap<string, readonly number[]>;
  /**
   * Whether a 5xx may answer: in a run whose ports fail on purpose (test/helpers/faults.ts) one
   * must, and it is held to its operation's documented answers and the error envelope like any
   * other error. By default no answer is a 5xx.
   */
  readonly serverErrors?: boolean;
}

type Json = Record<string, unknown>;

/** Whether `node` names the component schema `name`, itself or through any $ref or subschema. */
function reaches(document: Json, node: unknown, name: string, seen = new Set<string>()): boolean {
  if (!node || typeof node !== 'object') return false;
  const ref = (node as Json).$ref;
  if (typeof ref === 'string') {
    if (ref === `#/components/schemas/${name}`) return true;
    if (seen.has(ref)) return false;
    seen.add(ref);
    const target = ref.replace(/^#\//, '').split('/').reduce<unknown>((n, k) => (n && typeof n === 'object' ? (n as Json)[k] : undefined), document);
    return reaches(document, target, name, seen);
  }
  return Object.values(node as Json).some((child) => reaches(document, child, name, seen));
}

/** The key a request sent, in either header; null when none long enough to be recognised in an answer. */
function sentKey(asked: Asked): string | null {
  const key = asked.headers?.['x-api-key'] ?? asked.headers?.authorization?.replace(/^\S+\s+/, '').split(' ')[0];
  return key !== undefined && key.length >= 20 ? key : null;
}

export function contractJudge(spec: Spec, options: JudgeOptions = {}): ContractJudge {
  const document = spec.document as Json;
  const errorCodes = options.errorCodes ?? spec.errorCodes;
  const operations = listOperations(spec.document).map((op) => ({
    ...op,
    method: op.method.toUpperCase(),
    pattern: new RegExp(`^${op.path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
    // The statuses whose body may carry a key: those whose schema has one (the portal's PartnerKey).
    keyed: new Set(Object.entries(op.operation.responses ?? {}).filter(([, r]) => reaches(document, r, 'PartnerKey')).map(([status]) => Number(status))),
  }));
  // Every response documents the two version headers alike: the first operation's first 2xx says how.
  const firstResponses = spec.responses.get(operations[0]!.operationId)!;
  const versionHeaders = firstResponses.get(Math.min(...[...firstResponses.keys()].filter((s) => s >= 200 && s < 300)))!.headers;
  // A spec whose responses document Access-Control-Allow-Origin is read cross-origin (the swap
  // API: every answer carries it, a preflight is 204); one that documents it nowhere is
  // first-party only (the portal's "no Access-Control-Allow-Origin"): no answer may carry it, and
  // a preflight is an OPTIONS like any other.
  const crossOrigin = [...spec.responses.values()].some((byStatus) => [...byStatus.values()].some((r) => 'access-control-allow-origin' in r.headers));
  // A key as the spec writes one (its PartnerKey schema's pattern), to find one in any answer.
  const keyPattern = (document.components as Json | undefined)?.schemas as Record<string, Json> | undefined;
  const keyShape = typeof keyPattern?.PartnerKey?.pattern === 'string' ? new RegExp(keyPattern.PartnerKey.pattern.replace(/^\^|\$$/g, '')) : null;

  const header = (answer: Answer, name: string): string | undefined => {
    const value = answer.headers[name];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  const parse = (answer: Answer): { ok: true; value: unknown } | { ok: false } => {
    try {
      return { ok: true, value: JSON.parse(answer.body) as unknown };
    } catch {
      return { ok: false };
    }
  };
  const excerpt = (body: string) => JSON.stringify(body.length > 120 ? `${body.slice(0, 120)}…` : body);

  return (asked, answer) => {
    const out: string[] = [];
    const status = answer.status;
    const pathname = pathOf(asked.url);
    const refusedAsMalformed = asked.malformed !== undefined && status >= 400;
    const preflight = crossOrigin && asked.method === 'OPTIONS' && asked.headers?.origin !== undefined && asked.headers['access-control-request-method'] !== undefined;
    // A method HTTP does not define is the one head the server refuses with a 5xx: 501, as HTTP has it.
    if (status >= 500 && !options.serverErrors && !(status === 501 && asked.malformed === 'head')) out.push(`a ${status}: no answer is a 5xx here: ${excerpt(answer.body)}`);
    if (LEAKS.test(answer.body)) out.push(`the body leaks a stack or framework detail: ${excerpt(answer.body)}`);
    for (const name of ['x-service-api-version', 'x-service-build']) {
      const value = header(answer, name);
      if (value === undefined) out.push(`no ${name} header`);
      else if (!versionHeaders[name]!.validate(value)) out.push(`${name}: ${JSON.stringify(value)} is outside its schema`);
    }
    if (!crossOrigin && header(answer, 'access-control-allow-origin') !== undefined) out.push('an Access-Control-Allow-Origin on a first-party answer');
    const key = sentKey(asked);
    if (key !== null && (answer.body.includes(key) || Object.values(answer.headers).some((v) => String(v).includes(key)))) out.push('the answer echoes the key the request sent');
    if (asked.malformed === 'head' && header(answer, 'connection')?.toLowerCase() !== 'close') out.push('a malformed head refused without Connection: close');

    const atPath = refusedAsMalformed ? [] : operations.filter((op) => op.pattern.test(pathname));
    const operation = atPath.find((op) => op.method === asked.method || (op.method === 'GET' && asked.method === 'HEAD'));
    const head = asked.method === 'HEAD';
    if (head && answer.body !== '') out.push(`a HEAD answer has a body: ${excerpt(answer.body)}`);

    if (keyShape?.test(answer.body) && !(operation?.keyed.has(status) ?? false)) out.push(`a ${status} carries a key`);
    if (operation) {
      const documented = spec.responses.get(operation.operationId)!.get(status);
      if (!documented) {
        out.push(`${status} is not documented for ${operation.operationId}`);
      } else {
        for (const [name, { required, validate }] of Object.entries(documented.headers)) {
          // The version headers are checked above, on every answer.
          if (name === 'x-service-api-version' || name === 'x-service-build') continue;
          const value = header(answer, name);
          if (value === undefined) {
            if (required) out.push(`no ${name} header on a ${status} of ${operation.operationId}`);
          } else if (!validate(value)) out.push(`${name}: ${JSON.stringify(value)} is outside its schema on a ${status} of ${operation.operationId}`);
        }
        if (documented.schema && !head) {
          if (!/^application\/json\b/.test(header(answer, 'content-type') ?? '')) out.push(`content-type ${JSON.stringify(header(answer, 'content-type'))} on a JSON ${status}`);
          const body = parse(answer);
          if (!body.ok) out.push(`the ${status} body is not JSON: ${excerpt(answer.body)}`);
          else if (!documented.schema(body.value)) {
            const first = documented.schema.errors?.[0];
            out.push(`the ${status} body is outside its schema (${first?.instancePath || '/'} ${first?.message ?? ''})`);
          }
        }
      }
    } else if (preflight) {
      if (status !== 204) out.push(`a preflight answered ${status}, not 204`);
    } else if (atPath.length > 0) {
      if (status !== 405) out.push(`${asked.method} on a defined path answered ${status}, not 405`);
      else if (!header(answer, 'allow')) out.push('a 405 without Allow');
      else {
        const allow = header(answer, 'allow')!.split(',').map((m) => m.trim());
        const missing = atPath.filter((op) => !allow.includes(op.method));
        if (missing.length > 0) out.push(`Allow ${JSON.stringify(header(answer, 'allow'))} omits ${missing.map((op) => op.method).join(', ')}`);
      }
    } else if (!refusedAsMalformed && status !== 404) {
      out.push(`an undefined path answered ${status}, not 404`);
    }

    if (status >= 300 || (!operation && !preflight)) {
      if (!operation && header(answer, 'cache-control') !== 'no-store') out.push(`a ${status} without Cache-Control: no-store`);
      if (!head) {
        const body = parse(answer);
        const error = body.ok ? (body.value as Record<string, unknown> | null) : null;
        if (!body.ok) out.push(`the ${status} body is not JSON: ${excerpt(answer.body)}`);
        else if (
          !error ||
          typeof error !== 'object' ||
          typeof error.error !== 'string' ||
          typeof error.code !== 'string' ||
          !['undefined', 'string'].includes(typeof error.action) ||
          Object.keys(error).some((k) => !['error', 'code', 'action'].includes(k))
        ) {
          out.push(`the ${status} body is not the error envelope {error, code, action?}: ${excerpt(answer.body)}`);
        } else {
          const statuses = errorCodes.get(error.code as string);
          if (!statuses) out.push(`code ${JSON.stringify(error.code)} is not in the catalogue`);
          else if (!statuses.includes(status)) out.push(`code ${error.code as string} with status ${status} (the catalogue says ${statuses.join(', ')})`);
        }
      }
    }
    return out;
  };
}
