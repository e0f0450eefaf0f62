// An operation's validated queries, remembered by URL: a repeated request (the cached quote, the
// hot path) skips schema validation and hands its handler the very object it got the first time,
// so parsing downstream can be remembered by that object too. Sound because validation, and the
// coercion it applies, depend only on the query text, which the URL holds whole. Validation and
// the key-building it replaced cost a cached quote ~3,500 of its ~100,000 instructions. URLs are
// kept, so only operations whose queries may outlive their request opt in (rememberQueries).
import type { ValidateFunction } from 'ajv';
import { validationError, type FieldCodes } from './validation-error.js';

export type Query = Readonly<Record<string, unknown>>;

/** Distinct URLs remembered per operation; the memo starts over when full. */
const VALIDATED_QUERIES_MAX = 10_000;

export class ValidatedQueries {
  private readonly byUrl = new Map<string, Query>();

  constructor(
    private readonly validate: ValidateFunction,
    private readonly fieldCodes?: FieldCodes,
    private readonly max = VALIDATED_QUERIES_MAX,
  ) {}

  /**
   * The query of `url` validated and coerced: `parsed` (fastify's parse of that URL's query) the
   * first time, frozen, since later requests share it; the same object on every later call.
   * Throws the validation error, and remembers nothing, when it is not valid.
   */
  get(url: string, parsed: Record<string, unknown>): Query {
    let query = this.byUrl.get(url);
    if (query === undefined) {
      if (!this.validate(parsed)) throw validationError(this.validate.errors, 'query', this.fieldCodes);
      query = Object.freeze(parsed);
      // Clearing, not evicting one by one: a Map emptied from the front keeps its deleted slots
      // until it rehashes, and every lookup steps over them.
      if (this.byUrl.size >= this.max) this.byUrl.clear();
      this.byUrl.set(url, query);
    }
    return query;
  }
}
