// What the sandbox participant answers: a reply, and a refusal as a JsCantonError body with
// Canton's error id, category and codes, whether an endpoint refuses or a command throws.
import { randomUUID } from 'node:crypto';
import { BodyTooLarge } from '../../loopback-server.js';
import { LedgerRejection } from '../command-arguments.js';
import { DamlTypeError } from '../daml-types.js';
import { FilterRefused } from '../event-format.js';

export interface Reply {
  readonly status: number;
  readonly body: unknown;
  /** The body is plain text, as Canton's HTTP layer answers a request it cannot decode. */
  readonly text?: true;
}

/** Canton's error categories: the HTTP status, category number and gRPC code each answers with. */
const CATEGORY = {
  invalidIndependentOfSystemState: [400, 8, 3],
  invalidGivenCurrentSystemStateOther: [400, 9, 9],
  resourceMissing: [404, 11, 5],
  resourceExists: [409, 10, 6],
  authInterceptorInvalidAuthenticationCredentials: [401, 6, 16],
  insufficientPermission: [403, 7, 7],
  systemInternal: [500, 4, 13],
} as const;

/** A JsCantonError, as a participant answers a refused request. */
export function cantonError(category: keyof typeof CATEGORY, code: string, cause: string): Reply {
  const [status, errorCategory, grpcCodeValue] = CATEGORY[category];
  const body = {
    code, cause, correlationId: randomUUID(), context: { category: String(errorCategory), definite_answer: 'false' }, resources: [],
    errorCategory, grpcCodeValue, definiteAnswer: false,
  };
  return { status, body };
}
export const invalid = (cause: string) => cantonError('invalidIndependentOfSystemState', 'INVALID_ARGUMENT', cause);
export const notFound = (code: string, cause: string) => cantonError('resourceMissing', code, cause);
export const noRoute = (method: string, path: string) => notFound('NOT_FOUND', `no route ${method} ${path.slice(0, 160)}`);
export const packageNamesCause = (names: readonly string[]) => `The following package names do not match upgradable packages uploaded on this participant: [${names.join(', ')}].`;
export const ok = (body: unknown): Reply => ({ status: 200, body });

function rejection(err: LedgerRejection): Reply {
  if (err.code === 'CONTRACT_NOT_FOUND' || err.code === 'NOT_FOUND') return cantonError('resourceMissing', 'CONTRACT_NOT_FOUND', err.message);
  if (err.code === 'CONTRACT_NOT_ACTIVE') return cantonError('invalidGivenCurrentSystemStateOther', 'LOCAL_VERDICT_LOCKED_CONTRACTS', err.message);
  if (err.code === 'DUPLICATE_COMMAND') return cantonError('resourceExists', 'DUPLICATE_COMMAND', err.message);
  if (err.code === 'INVALID_ARGUMENT') return invalid(err.message);
  return cantonError('invalidGivenCurrentSystemStateOther', err.code, err.message);
}

/** What a request that threw is answered: its refusal in Canton's words, or an internal error. */
export function replyToError(err: unknown): Reply {
  return err instanceof BodyTooLarge ? cantonError('invalidIndependentOfSystemState', 'REQUEST_TOO_LARGE', 'request body too large')
    : err instanceof LedgerRejection ? rejection(err)
    : err instanceof DamlTypeError ? cantonError('invalidIndependentOfSystemState', 'COMMAND_PREPROCESSING_FAILED', err.message)
    : err instanceof FilterRefused ? { status: err.status, body: cantonError(err.status === 404 ? 'resourceMissing' : 'invalidIndependentOfSystemState', err.code, err.message).body }
    : cantonError('systemInternal', 'INTERNAL', 'the sandbox ledger failed');
}
