// Turns an OpenRPC document (the wallet's dApp API, pinned in sdk/openrpc/) into TypeScript types.
// An OpenRPC schema is a JSON Schema, as an OpenAPI 3.1 one is, so the conversion is
// openapi-typescript's, the one the swap API's types go through: the document's
// components.schemas are handed to it as an OpenAPI document's. Each method's params and result
// get the name the official client (@canton-network/core-wallet-dapp-rpc-client) gives them, their
// schema's title, and RpcTypes maps each method to them as that client's RpcTypes does, so the
// SDK's types can be held to the official ones name for name.
import path from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';

type JsonSchema = Record<string, unknown>;

interface ContentDescriptor {
  readonly name: string;
  readonly required?: boolean;
  readonly schema: JsonSchema;
}

interface OpenRpcMethod {
  readonly name: string;
  readonly description?: string;
  readonly params: readonly ContentDescriptor[];
  readonly result?: ContentDescriptor;
}

export interface OpenRpcDocument {
  readonly openrpc: string;
  readonly info: { readonly title: string; readonly version: string };
  readonly methods: readonly OpenRpcMethod[];
  readonly components?: { readonly schemas?: Record<string, JsonSchema> };
}

const SCHEMAS = '/components/schemas/';
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * The document with every `$ref` local: it names itself by its path in its own repository
 * (`api-specs/openrpc-dapp-api.json#/...`), which means nothing where the copy is pinned.
 */
function localRefs<T>(node: T, file: string): T {
  if (Array.isArray(node)) return node.map((item: unknown) => localRefs(item, file)) as T;
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if (key !== '$ref') {
      out[key] = localRefs(value, file);
      continue;
    }
    const [where = '', pointer = ''] = String(value).split('#', 2);
    if (!pointer.startsWith(SCHEMAS) || (where !== '' && path.posix.basename(where) !== file)) {
      throw new Error(`${String(value)}: only references to the document's own components.schemas are understood`);
    }
    out[key] = `#${pointer}`;
  }
  return out as T;
}

/** The component a schema is nothing but a reference to, or null. */
function bareRef(schema: JsonSchema): string | null {
  const keys = Object.keys(schema);
  return keys.length === 1 && keys[0] === '$ref' ? String(schema.$ref).slice(`#${SCHEMAS}`.length) : null;
}

const pascal = (name: string) => name.charAt(0).toUpperCase() + name.slice(1);

const comment = (text: string, indent: string) => `${indent}/** ${text.replaceAll('*/', '*\\/').replace(/\s*\n\s*/g, ' ')} */`;

/** The module's text: the component schemas and the method-level ones, each by name, then RpcTypes. */
export async function openRpcTypes(document: OpenRpcDocument, file: string): Promise<string> {
  const local = localRefs(document, file);
  const components = local.components?.schemas ?? {};
  const schemas: Record<string, JsonSchema> = { ...components };
  const added = new Map<string, string>();

  /** The type name of a method's params or result: its component, or its title's, added to the schemas. */
  const nameOf = (schema: JsonSchema, fallback: string): string => {
    const ref = bareRef(schema);
    if (ref !== null) {
      if (!(ref in components)) throw new Error(`#${SCHEMAS}${ref} is not in the document`);
      return ref;
    }
    const name = typeof schema.title === 'string' ? pascal(schema.title) : fallback;
    if (!IDENTIFIER.test(name)) throw new Error(`${name} cannot name a type`);
    const text = JSON.stringify(schema);
    // Two methods may share one params schema (prepareExecute and prepareExecuteAndWait do): one name.
    if (added.has(name) && added.get(name) !== text) throw new Error(`two different method schemas are both titled ${name}`);
    if (!added.has(name) && name in components) throw new Error(`a method schema's name ${name} is a component's too`);
    added.set(name, text);
    schemas[name] = schema;
    return name;
  };

  const methods = local.methods.map((method) => {
    if (!IDENTIFIER.test(method.name)) throw new Error(`the method name ${method.name} is not an identifier`);
    // The SDK's request carries one params object, as the official client's does.
    if (method.params.length > 1) throw new Error(`${method.name} takes ${method.params.length} params; one object is understood`);
    const params = method.params[0] ? nameOf(method.params[0].schema, `${pascal(method.name)}Params`) : 'never';
    const result = method.result ? nameOf(method.result.schema, `${pascal(method.name)}Result`) : 'void';
    return { name: method.name, description: method.description, params, result };
  });

  const ast = await openapiTS({ openapi: '3.1.0', info: local.info, paths: {}, components: { schemas } } as never, {
    alphabetize: false,
    immutable: false,
    rootTypes: true,
    rootTypesNoSchemaPrefix: true,
    rootTypesKeepCasing: true,
  });
  // An OpenAPI document's other roots are empty here, and a JSON-RPC API has no paths to name.
  const unused = new Set(['paths', 'webhooks', '$defs', 'operations']);
  const nodes = ast.filter((node) => !(ts.isTypeAliasDeclaration(node) && unused.has(node.name.text)));

  const rpcTypes = [
    "/** Each method's params (never for one that takes none) and result, as the official client's RpcTypes has them. */",
    'export interface RpcTypes {',
    ...methods.flatMap((m) => [...(m.description ? [comment(m.description, '    ')] : []), `    ${m.name}: {`, `        params: ${m.params};`, `        result: ${m.result};`, '    };']),
    '}',
    '',
    'export type RpcMethod = keyof RpcTypes;',
  ];
  return `${astToString(nodes)}\n${rpcTypes.join('\n')}\n`;
}
