// Turns the first ajv error of a generated validator into a DomainError whose message names the
// offending parameter. Schemas whose `description` reads as "must be <description>" supply the
// wording; other keywords get a plain sentence.
import type { ErrorObject } from 'ajv';
import { DomainError, type DomainErrorCode } from '../../core/errors.js';

export type InputLocation = 'query' | 'body';

/**
 * Fields whose failures have their own code in an operation's contract; the rest are bad_request.
 * A Map, because the field name comes from the request: a plain object would answer `__proto__`
 * with Object.prototype.
 */
export type FieldCodes = ReadonlyMap<string, DomainErrorCode>;

const NO_FIELD_CODES: FieldCodes = new Map();

const noun = (location: InputLocation) => (location === 'query' ? 'query parameter' : 'body field');

function fieldName(error: ErrorObject): string {
  const path = error.instancePath.split('/').slice(1).map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (error.keyword === 'required') path.push(String(error.params.missingProperty));
  if (error.keyword === 'additionalProperties') path.push(String(error.params.additionalProperty));
  return path.join('.');
}

function sentence(error: ErrorObject, name: string, location: InputLocation): string {
  const subject = name ? `${noun(location)} '${name}'` : `the request ${location}`;
  const description = (error.parentSchema as { description?: unknown } | undefined)?.description;
  switch (error.keyword) {
    case 'required':
      return `missing required ${subject}`;
    case 'additionalProperties':
      return `unknown ${subject}`;
    case 'type':
      if (Array.isArray(error.data)) return `${subject} must be given once`;
      if (!name) return `the request ${location} must be a JSON object`;
      break;
    case 'format':
      return `${subject} must be an ISO 8601 date-time`;
  }
  if (typeof description === 'string' && description.length > 0) return `${subject} must be ${description}`;
  switch (error.keyword) {
    case 'type':
      return `${subject} must be ${error.params.type === 'integer' ? 'an integer' : `a ${String(error.params.type)}`}`;
    case 'minimum':
      return `${subject} must be at least ${String(error.params.limit)}`;
    case 'maximum':
      return `${subject} must be at most ${String(error.params.limit)}`;
    case 'minLength':
      return `${subject} must not be empty`;
    case 'maxLength':
      return `${subject} must be at most ${String(error.params.limit)} characters`;
    case 'enum':
      return `${subject} must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`;
    default:
      return `${subject} is invalid`;
  }
}

export function validationError(errors: readonly ErrorObject[] | null | undefined, location: InputLocation, fieldCodes: FieldCodes = NO_FIELD_CODES): DomainError {
  // oneOf reports its branches' errors first; the oneOf error itself describes the field as a whole.
  const error = errors?.find((e) => e.keyword === 'oneOf') ?? errors?.[0];
  if (!error) return new DomainError('bad_request', `the request ${location} is invalid`);
  const name = fieldName(error);
  const topField = name.split('.')[0] ?? '';
  return new DomainError(fieldCodes.get(topField) ?? 'bad_request', sentence(error, name, location));
}
