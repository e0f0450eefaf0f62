// Derives one JSON Schema per operation input from the spec: the query parameters as a closed
// object (so an unknown or misspelt parameter is rejected) and the request body. An operation
// whose contract documents no 400 cannot refuse its query: it gets no query schema, and ignores
// any query it is sent (a cache-buster on the status, say). Used by the
// generator and by the contract tests, so both read the spec the same way.

export interface ParameterObject {
  name: string;
  in: 'query' | 'header' | 'path' | 'cookie';
  required?: boolean;
  schema?: Record<string, unknown>;
}

export interface OperationObject {
  operationId?: string;
  parameters?: Array<ParameterObject | { $ref: string }>;
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Record<string, unknown> }> };
  responses?: Record<string, unknown>;
}

export interface OpenApiDocument {
  paths?: Record<string, Record<string, OperationObject>>;
  components?: {
    schemas?: Record<string, Record<string, unknown>>;
    parameters?: Record<string, ParameterObject>;
  };
}

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export interface SpecOperation {
  operationId: string;
  method: (typeof HTTP_METHODS)[number];
  path: string;
  operation: OperationObject;
}

export function listOperations(spec: OpenApiDocument): SpecOperation[] {
  const out: SpecOperation[] = [];
  for (const [p, item] of Object.entries(spec.paths ?? {})) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!operation) continue;
      if (!operation.operationId) throw new Error(`${method.toUpperCase()} ${p} has no operationId`);
      out.push({ operationId: operation.operationId, method, path: p, operation });
    }
  }
  return out;
}

function resolveParameter(spec: OpenApiDocument, p: ParameterObject | { $ref: string }): ParameterObject {
  if (!('$ref' in p)) return p;
  const name = p.$ref.replace('#/components/parameters/', '');
  const resolved = spec.components?.parameters?.[name];
  if (!resolved) throw new Error(`unresolvable parameter reference ${p.$ref}`);
  return resolved;
}

export function requestSchemas(spec: OpenApiDocument): {
  query: Record<string, Record<string, unknown>>;
  body: Record<string, Record<string, unknown>>;
} {
  const query: Record<string, Record<string, unknown>> = {};
  const body: Record<string, Record<string, unknown>> = {};
  for (const { operationId, operation } of listOperations(spec)) {
    const params = (operation.parameters ?? []).map((p) => resolveParameter(spec, p)).filter((p) => p.in === 'query');
    const bodySchema = operation.requestBody?.content?.['application/json']?.schema;
    if (bodySchema) body[operationId] = bodySchema;
    if (operation.responses?.['400'] === undefined) {
      if (params.length > 0) throw new Error(`${operationId} takes query parameters but documents no 400 to refuse them with`);
      continue;
    }
    const properties: Record<string, unknown> = {};
    for (const p of params) properties[p.name] = p.schema ?? {};
    query[operationId] = {
      type: 'object',
      additionalProperties: false,
      required: params.filter((p) => p.required).map((p) => p.name),
      properties,
    };
  }
  return { query, body };
}
