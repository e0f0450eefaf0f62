// Turns the first ajv error of a generated validator into a DomainError whose message names the
// offending parameter. A schema whose `description` starts with a lower-case letter wrote it to
// read as "must be <description>" ("a token symbol (CC, USDCx or CBTC)"), and supplies the
// wording; a description that starts with a capital is prose for the reader of the spec ("The
// caller's unique id ...") and never goes into a sentence. Other keywords get a plain sentence.
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

/** A description written to follow "must be": it starts with a lower-case letter. */
function mustBeWording(schema: unknown): string | undefined {
  const description = (schema as { description?: unknown } | undefined)?.description;
  return typeof description === 'string' && /^[a-z]/.test(description) ? description : undefined;
}

/** The spec's patterns that no lower-case description words, in words. */
const PATTERN_WORDS: Readonly<Record<string, string>> = {
  '^[\\x21-\\x7e]+$': 'printable ASCII characters, without spaces',
  '^[^\\u0000-\\u001f\\u007f]+$': 'text without control characters (such as a tab or a line break)',
};

/** A JSON type with its article: "an integer", "a string", "an object". */
const typeNoun = (type: string): string => (/^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`);

function sentence(error: ErrorObject, name: string, location: InputLocation): string {
  const subject = name ? `${noun(location)} '${name}'` : `the request ${location}`;
  switch (error.keyword) {
    case 'required':
      return `missing required ${subject}`;
    case 'additionalProperties':
      return `unknown ${subject}`;
    case 'type':
      // A query parameter sent twice is parsed as an array; a body has no such case.
      if (location === 'query' && Array.isArray(error.data)) return `${subject} must be given once`;
      if (!name) return `the request ${location} must be a JSON object`;
      break;
    case 'format':
      return `${subject} must be an ISO 8601 date-time`;
  }
  const wording = mustBeWording(error.parentSchema);
  if (wording !== undefined) return `${subject} must be ${wording}`;
  switch (error.keyword) {
    case 'type': {
      const types = Array.isArray(error.params.type) ? (error.params.type as string[]) : String(error.params.type).split(',');
      return `${subject} must be ${types.map(typeNoun).join(' or ')}`;
    }
    case 'pattern': {
      const pattern = String(error.params.pattern);
      return `${subject} must be ${Object.hasOwn(PATTERN_WORDS, pattern) ? PATTERN_WORDS[pattern] : `text matching ${pattern}`}`;
    }
    case 'minimum':
      return `${subject} must be at least ${String(error.params.limit)}`;
    case 'maximum':
      return `${subject} must be at most ${String(error.params.limit)}`;
    case 'minLength':
      return error.params.limit === 1 ? `${subject} must not be empty` : `${subject} must be at least ${String(error.params.limit)} characters`;
    case 'maxLength':
      return `${subject} must be at most ${String(error.params.limit)} characters`;
    case 'enum':
      return `${subject} must be one of ${(error.params.allowedValues as unknown[]).join(', ')}`;
    case 'maxItems':
      return `${subject} must have at most ${String(error.params.limit)} items; it has ${Array.isArray(error.data) ? error.data.length : 'more'}`;
    case 'minItems':
      return `${subject} must have at least ${String(error.params.limit)} items; it has ${Array.isArray(error.data) ? error.data.length : 'fewer'}`;
    case 'uniqueItems': {
      // ajv names the later item i and the earlier j.
      const [first, second] = [Number(error.params.j), Number(error.params.i)];
      return `${subject} must not repeat an item: ${name}[${first}] and ${name}[${second}] are the same`;
    }
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
