// Fee schemas: the terms a partner's keyed quotes and plans disclose, and those of the keyless
// (first-party, B2C) plans. A schema sets the service's
// rate and the cap on an integrator's fee; an override is one partner's negotiated terms on top of
// a schema (a different service rate, a lower cap), and is what `appliedSchema.overrideId` names.
// A key records the id of the schema or override that applies to it. The set is operator data: a
// JSON file (FEE_SCHEMAS_FILE) read and validated at start, or the built-in default below.
import { readFileSync } from 'node:fs';
import { ConfigError, type Config } from '../config.js';

/** The spec's ceiling on an integrator's fee, in bps. */
export const MAX_INTEGRATOR_BPS = 10;
/** A sanity ceiling on the service's own rate, in bps: a schema above it is a typo. */
export const MAX_SERVICE_BPS = 100;

export interface FeeTerms {
  readonly schemaId: string;
  /** The partner's override, or null when the schema applies as is. */
  readonly overrideId: string | null;
  /** The service's rate in bps of a venue's net. */
  readonly serviceBps: number;
  /** The highest integrator fee, in bps, this partner may ask for. */
  readonly integratorCapBps: number;
}

export interface FeeSchemaFile {
  readonly defaultSchemaId: string;
  /** The schema of keyless plans; `defaultSchemaId` when omitted. Its integrator cap is unused. */
  readonly b2cSchemaId?: string;
  readonly schemas: ReadonlyArray<{ readonly id: string; readonly serviceBps: number; readonly integratorCapBps: number }>;
  readonly overrides?: ReadonlyArray<{
    readonly id: string;
    readonly schemaId: string;
    readonly serviceBps?: number;
    readonly integratorCapBps?: number;
  }>;
}

export const DEFAULT_FEE_SCHEMAS: FeeSchemaFile = {
  defaultSchemaId: 'partner-default',
  b2cSchemaId: 'b2c-default',
  schemas: [
    { id: 'partner-default', serviceBps: 5, integratorCapBps: MAX_INTEGRATOR_BPS },
    { id: 'b2c-default', serviceBps: 5, integratorCapBps: 0 },
  ],
  overrides: [],
};

const ID = /^[a-z0-9][a-z0-9-]{0,63}$/;

export class FeeSchemas {
  /** The schema a key gets when its creator names none. */
  readonly defaultSchemaId: string;
  /** The terms of keyless plans. */
  readonly b2c: FeeTerms;
  private readonly terms = new Map<string, FeeTerms>();

  /** Validates `file`; throws a list of every problem found. */
  constructor(file: FeeSchemaFile) {
    const problems: string[] = [];
    const bps = (value: unknown, max: number, what: string): number => {
      if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= max) return value;
      problems.push(`${what} must be an integer from 0 to ${max} (got ${JSON.stringify(value)})`);
      return 0;
    };
    const named = (id: unknown, what: string): id is string => {
      if (typeof id === 'string' && ID.test(id) && !this.terms.has(id)) return true;
      problems.push(`${what} id ${JSON.stringify(id)} must be unique and 1-64 lowercase letters, digits or hyphens`);
      return false;
    };
    for (const [i, schema] of (Array.isArray(file.schemas) ? file.schemas : []).entries()) {
      if (!named(schema?.id, `schemas[${i}]`)) continue;
      this.terms.set(schema.id, {
        schemaId: schema.id,
        overrideId: null,
        serviceBps: bps(schema.serviceBps, MAX_SERVICE_BPS, `schemas[${i}].serviceBps`),
        integratorCapBps: bps(schema.integratorCapBps, MAX_INTEGRATOR_BPS, `schemas[${i}].integratorCapBps`),
      });
    }
    for (const [i, override] of (Array.isArray(file.overrides) ? file.overrides : []).entries()) {
      const base = this.terms.get(override?.schemaId);
      if (!base || base.overrideId !== null) {
        problems.push(`overrides[${i}].schemaId ${JSON.stringify(override?.schemaId)} must name a schema`);
        continue;
      }
      if (!named(override.id, `overrides[${i}]`)) continue;
      const cap = override.integratorCapBps === undefined ? base.integratorCapBps : bps(override.integratorCapBps, base.integratorCapBps, `overrides[${i}].integratorCapBps (at most its schema's cap)`);
      this.terms.set(override.id, {
        schemaId: base.schemaId,
        overrideId: override.id,
        serviceBps: override.serviceBps === undefined ? base.serviceBps : bps(override.serviceBps, MAX_SERVICE_BPS, `overrides[${i}].serviceBps`),
        integratorCapBps: cap,
      });
    }
    const fallback = this.terms.get(file.defaultSchemaId);
    if (!fallback || fallback.overrideId !== null) problems.push(`defaultSchemaId ${JSON.stringify(file.defaultSchemaId)} must name a schema`);
    const b2c = this.terms.get(file.b2cSchemaId ?? file.defaultSchemaId);
    if (file.b2cSchemaId !== undefined && (!b2c || b2c.overrideId !== null)) problems.push(`b2cSchemaId ${JSON.stringify(file.b2cSchemaId)} must name a schema`);
    if (problems.length > 0) throw new ConfigError(problems);
    this.defaultSchemaId = file.defaultSchemaId;
    this.b2c = b2c!;
  }

  /** Every schema and override id, sorted. */
  get ids(): string[] {
    return [...this.terms.keys()].sort();
  }

  /** Whether `id` names a schema or an override. */
  has(id: string): boolean {
    return this.terms.has(id);
  }

  /**
   * The terms that apply to a partner, by its key's schema id. A key naming a schema no longer
   * configured is a server fault (500), never a quote or plan under other terms.
   */
  termsOfPartner(partner: { readonly id: string; readonly schemaId: string }): FeeTerms {
    const terms = this.terms.get(partner.schemaId);
    if (!terms) throw new Error(`key ${partner.id} names fee schema '${partner.schemaId}', which FEE_SCHEMAS_FILE does not define`);
    return terms;
  }

  /** The terms of a schema or override id; undefined when it is not configured. */
  termsOf(id: string): FeeTerms | undefined {
    return this.terms.get(id);
  }
}

/** The configured fee schemas: FEE_SCHEMAS_FILE, or the built-in default. Bad data is a ConfigError. */
export function loadFeeSchemas(config: Pick<Config, 'feeSchemasFile'>): FeeSchemas {
  if (config.feeSchemasFile === null) return new FeeSchemas(DEFAULT_FEE_SCHEMAS);
  let file: FeeSchemaFile;
  try {
    file = JSON.parse(readFileSync(config.feeSchemasFile, 'utf8')) as FeeSchemaFile;
  } catch (err) {
    throw new ConfigError([`FEE_SCHEMAS_FILE ${config.feeSchemasFile} cannot be read as JSON: ${(err as Error).message}`]);
  }
  try {
    return new FeeSchemas(file);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    throw new ConfigError(err.problems.map((p) => `FEE_SCHEMAS_FILE ${config.feeSchemasFile}: ${p}`));
  }
}
