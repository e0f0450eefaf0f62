// The official dApp API documents (sdk/openrpc/, sandbox/gateway/openrpc/) as validators: what a
// wallet gateway answers for a remote dApp API method, and the events it pushes, must be what the
// documents' schemas say. The documents refer to each other as `api-specs/<file>#…`; each is given
// an absolute id under one base, and its references made relative to it, so they resolve as they
// do in the repository they come from.
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';

const BASE = 'https://wallet-gateway.invalid/api-specs/';
const read = (path: string): Record<string, unknown> => JSON.parse(readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8').replaceAll('"$ref": "api-specs/', '"$ref": "')) as Record<string, unknown>;

/**
 * One correction, to a contradiction inside the document: its Provider requires `clientType` while
 * its properties (with no others allowed) name it `providerType`, so no answer could satisfy it.
 * The official types (core-wallet-dapp-rpc-client) read it the same way: `providerType` optional,
 * no `clientType`. Nothing else is changed.
 */
function withProviderAsTyped(doc: Record<string, unknown>): Record<string, unknown> {
  const provider = (doc as { components: { schemas: { Provider: { required: string[] } } } }).components.schemas.Provider;
  provider.required = provider.required.filter((name) => name !== 'clientType');
  return doc;
}

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema({ ...withProviderAsTyped(read('sdk/openrpc/openrpc-dapp-api.json')), $id: `${BASE}openrpc-dapp-api.json` });
ajv.addSchema({ ...read('sandbox/gateway/openrpc/openrpc-user-api.json'), $id: `${BASE}openrpc-user-api.json` });
const remote = read('sandbox/gateway/openrpc/openrpc-dapp-remote-api.json') as { methods: Array<{ name: string; result: { schema: Record<string, unknown> } }> };

const validators = new Map<string, ValidateFunction>();

/** The remote dApp API's schema for `method`'s result (for an event, its payload), compiled once. */
export function remoteResult(method: string): ValidateFunction {
  let validate = validators.get(method);
  if (!validate) {
    const entry = remote.methods.find((m) => m.name === method);
    if (!entry) throw new Error(`the remote dApp API has no method ${method}`);
    validate = ajv.compile({ ...entry.result.schema, $id: `${BASE}remote-result-${method}.json` });
    validators.set(method, validate);
  }
  return validate;
}

/** The schema's complaints about `value` as `method`'s result, in words; '' when it conforms. */
export function remoteResultErrors(method: string, value: unknown): string {
  const validate = remoteResult(method);
  return validate(value) ? '' : ajv.errorsText(validate.errors);
}
