// Daml types as the participant's command preprocessing reads them: a JSON Ledger API value is
// checked against the Daml type of the field it fills, as Canton checks a command's arguments
// against the uploaded package before interpreting anything, and refused with the path of the
// first value that does not fit (Canton's COMMAND_PREPROCESSING_FAILED). The checked value comes
// back normalised as Canton renders it: record fields in declaration order, an absent Optional as
// null, a Map's entries ordered by key. The same types give a prepared transaction its typed
// values.
import type { Value } from '@canton-network/core-ledger-proto';
import { Decimal } from '../../core/decimal.js';

export type DamlType =
  | { readonly kind: 'party' | 'text' | 'bool' | 'int64' | 'decimal' | 'time' | 'date' | 'contractId' | 'unit' }
  /** A value the sandbox takes as it comes: the argument of a call it refuses by name before running anything. */
  | { readonly kind: 'unchecked' }
  | { readonly kind: 'optional' | 'list' | 'textMap'; readonly of: DamlType }
  | { readonly kind: 'genMap'; readonly key: DamlType; readonly value: DamlType }
  | { readonly kind: 'record'; readonly name: string; readonly fields: ReadonlyArray<readonly [string, DamlType]> }
  /** Constructors behind a function: a variant may hold itself (AnyValue's lists and maps). */
  | { readonly kind: 'variant'; readonly name: string; readonly constructors: () => Readonly<Record<string, DamlType>> };

export const T = {
  party: { kind: 'party' },
  text: { kind: 'text' },
  bool: { kind: 'bool' },
  int64: { kind: 'int64' },
  decimal: { kind: 'decimal' },
  time: { kind: 'time' },
  date: { kind: 'date' },
  contractId: { kind: 'contractId' },
  unit: { kind: 'unit' },
  unchecked: { kind: 'unchecked' },
  optional: (of: DamlType): DamlType => ({ kind: 'optional', of }),
  list: (of: DamlType): DamlType => ({ kind: 'list', of }),
  textMap: (of: DamlType): DamlType => ({ kind: 'textMap', of }),
  genMap: (key: DamlType, value: DamlType): DamlType => ({ kind: 'genMap', key, value }),
  record: (name: string, fields: ReadonlyArray<readonly [string, DamlType]>): DamlType => ({ kind: 'record', name, fields }),
  variant: (name: string, constructors: () => Readonly<Record<string, DamlType>>): DamlType => ({ kind: 'variant', name, constructors }),
} as const satisfies Record<string, DamlType | ((...args: never[]) => DamlType)>;

/**
 * Every template's Archive choice, as `archive` exercises it: its argument the record
 * DA.Internal.Template:Archive, which has no fields; its result Unit.
 */
export const ARCHIVE = { choice: 'Archive', argumentType: T.record('Archive', []), resultType: T.unit } as const;

/** A value that does not type-check: what Canton's preprocessing refuses, before anything runs. */
export class DamlTypeError extends Error {
  override readonly name = 'DamlTypeError';
}

/** Daml-LF's party id string: letters, digits, `:-_ ` and spaces, 1 to 255 characters. */
const PARTY = /^[A-Za-z0-9:\-_ ]{1,255}$/;
const DECIMAL = /^-?[0-9]{1,28}(\.[0-9]{1,10})?$/;
const INT64 = /^-?[0-9]{1,19}$/;
const TIME = /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?(Z|[+-][0-9]{2}:[0-9]{2})$/;
const DATE = /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/;
/** A Canton contract id: `00`, the 32-byte discriminator, a suffix of whole bytes. */
const CONTRACT_ID = /^00[0-9a-f]{64}([0-9a-f]{2})*$/;

const isObject = (json: unknown): json is Record<string, unknown> => typeof json === 'object' && json !== null && !Array.isArray(json);
const shown = (json: unknown) => (json === undefined ? 'nothing' : JSON.stringify(json).slice(0, 60));
const mismatch = (path: string, expected: string, json: unknown) => new DamlTypeError(`${path}: expected ${expected}, got ${shown(json)}`);

/** `json` checked against `type` at `path`, normalised; DamlTypeError where it does not fit. */
export function checkValue(type: DamlType, json: unknown, path: string): unknown {
  switch (type.kind) {
    case 'party':
      if (typeof json !== 'string' || !PARTY.test(json)) throw mismatch(path, 'a Party', json);
      return json;
    case 'text':
      if (typeof json !== 'string') throw mismatch(path, 'a Text', json);
      return json;
    case 'bool':
      if (typeof json !== 'boolean') throw mismatch(path, 'a Bool', json);
      return json;
    case 'int64': {
      const text = typeof json === 'number' && Number.isSafeInteger(json) ? String(json) : json;
      if (typeof text !== 'string' || !INT64.test(text) || BigInt(text) > 2n ** 63n - 1n || BigInt(text) < -(2n ** 63n)) throw mismatch(path, 'an Int64', json);
      return text;
    }
    case 'decimal':
      if (typeof json !== 'string' || !DECIMAL.test(json)) throw mismatch(path, 'a Decimal (a string of up to 28 integer and 10 fractional digits)', json);
      return json;
    case 'time':
      if (typeof json !== 'string' || !TIME.test(json) || Number.isNaN(Date.parse(json))) throw mismatch(path, 'a Time (ISO 8601, e.g. 2026-01-01T00:00:00Z)', json);
      return json;
    case 'date':
      if (typeof json !== 'string' || !DATE.test(json) || Number.isNaN(Date.parse(json))) throw mismatch(path, 'a Date (YYYY-MM-DD)', json);
      return json;
    case 'contractId':
      if (typeof json !== 'string' || !CONTRACT_ID.test(json)) throw mismatch(path, 'a ContractId', json);
      return json;
    case 'unchecked':
      return json;
    case 'unit':
      if (!isObject(json) || Object.keys(json).length > 0) throw mismatch(path, 'Unit ({})', json);
      return {};
    case 'optional':
      // Nested optionals are not among the types the sandbox checks, so null is always None.
      return json === null || json === undefined ? null : checkValue(type.of, json, path);
    case 'list':
      if (!Array.isArray(json)) throw mismatch(path, 'a List (a JSON array)', json);
      return json.map((item, i) => checkValue(type.of, item, `${path}[${i}]`));
    case 'textMap':
      if (!isObject(json)) throw mismatch(path, 'a TextMap (a JSON object)', json);
      return Object.fromEntries(
        Object.entries(json)
          .sort(([a], [b]) => compareText(a, b))
          .map(([key, value]) => [key, checkValue(type.of, value, `${path}[${JSON.stringify(key).slice(0, 40)}]`)]),
      );
    case 'genMap': {
      if (!Array.isArray(json)) throw mismatch(path, 'a Map (a JSON array of [key, value] pairs)', json);
      const entries = json.map((entry, i): [unknown, unknown] => {
        if (!Array.isArray(entry) || entry.length !== 2) throw mismatch(`${path}[${i}]`, 'a [key, value] pair', entry);
        return [checkValue(type.key, entry[0], `${path}[${i}][0]`), checkValue(type.value, entry[1], `${path}[${i}][1]`)];
      });
      entries.sort(([a], [b]) => compareValues(type.key, a, b));
      const repeated = entries.findIndex(([key], i) => i > 0 && compareValues(type.key, entries[i - 1]![0], key) === 0);
      if (repeated > 0) throw new DamlTypeError(`${path}: a Map must not repeat a key, and ${shown(entries[repeated]![0])} is there twice`);
      return entries;
    }
    case 'record': {
      if (!isObject(json)) throw mismatch(path, `a record ${type.name} (a JSON object)`, json);
      const declared = new Set(type.fields.map(([name]) => name));
      const unexpected = Object.keys(json).find((name) => !declared.has(name));
      if (unexpected !== undefined) throw new DamlTypeError(`${path}: ${type.name} has no field ${unexpected.slice(0, 60)}`);
      return Object.fromEntries(
        type.fields.map(([name, field]) => {
          if (json[name] === undefined && field.kind !== 'optional') throw new DamlTypeError(`${path}: missing non-optional field ${name} of ${type.name}`);
          return [name, checkValue(field, json[name], path === '' ? name : `${path}.${name}`)];
        }),
      );
    }
    case 'variant': {
      const constructors = type.constructors();
      if (!isObject(json) || typeof json.tag !== 'string' || !('value' in json) || Object.keys(json).length !== 2) {
        throw mismatch(path, `a variant ${type.name} ({"tag": <constructor>, "value": <argument>})`, json);
      }
      const argument = constructors[json.tag];
      if (!argument) throw new DamlTypeError(`${path}: ${type.name} has no constructor ${json.tag.slice(0, 60)}`);
      return { tag: json.tag, value: checkValue(argument, json.value, `${path}.value`) };
    }
  }
}

/** Daml's Text order: by Unicode code point. */
function compareText(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** Daml's order on two checked values of `type` (the order a Map keeps its keys in). */
export function compareValues(type: DamlType, a: unknown, b: unknown): number {
  switch (type.kind) {
    case 'bool':
      return Number(a) - Number(b);
    case 'int64':
    case 'decimal':
      return new Decimal(a as string).comparedTo(new Decimal(b as string));
    case 'time':
    case 'date':
      return Math.sign(Date.parse(a as string) - Date.parse(b as string));
    case 'unit':
    case 'unchecked':
      return 0;
    case 'optional':
      return a === null || b === null ? Number(a !== null) - Number(b !== null) : compareValues(type.of, a, b);
    case 'list':
      return compareLists((a as unknown[]).map((v) => [type.of, v]), (b as unknown[]).map((v) => [type.of, v]));
    case 'textMap':
      return compareLists(
        Object.entries(a as Record<string, unknown>).flatMap(([k, v]) => [[T.text, k], [type.of, v]] as Array<[DamlType, unknown]>),
        Object.entries(b as Record<string, unknown>).flatMap(([k, v]) => [[T.text, k], [type.of, v]] as Array<[DamlType, unknown]>),
      );
    case 'genMap':
      return compareLists(
        (a as Array<[unknown, unknown]>).flatMap(([k, v]) => [[type.key, k], [type.value, v]] as Array<[DamlType, unknown]>),
        (b as Array<[unknown, unknown]>).flatMap(([k, v]) => [[type.key, k], [type.value, v]] as Array<[DamlType, unknown]>),
      );
    case 'record':
      return compareLists(
        type.fields.map(([name, field]) => [field, (a as Record<string, unknown>)[name]]),
        type.fields.map(([name, field]) => [field, (b as Record<string, unknown>)[name]]),
      );
    case 'variant': {
      const names = Object.keys(type.constructors());
      const [x, y] = [a, b] as Array<{ tag: string; value: unknown }>;
      const byTag = names.indexOf(x!.tag) - names.indexOf(y!.tag);
      return byTag !== 0 ? Math.sign(byTag) : compareValues(type.constructors()[x!.tag]!, x!.value, y!.value);
    }
    default:
      return compareText(a as string, b as string);
  }
}

function compareLists(a: ReadonlyArray<[DamlType, unknown]>, b: ReadonlyArray<[DamlType, unknown]>): number {
  for (let i = 0; i < Math.min(a.length, b.length); i += 1) {
    const order = compareValues(a[i]![0], a[i]![1], b[i]![1]);
    if (order !== 0) return order;
  }
  return Math.sign(a.length - b.length);
}

const DAY_MS = 86_400_000;

/** A checked value as the typed Daml value a prepared transaction carries. */
export function typedValue(type: DamlType, json: unknown): Value {
  switch (type.kind) {
    case 'party':
      return { sum: { oneofKind: 'party', party: json as string } };
    case 'text':
      return { sum: { oneofKind: 'text', text: json as string } };
    case 'bool':
      return { sum: { oneofKind: 'bool', bool: json as boolean } };
    case 'int64':
      return { sum: { oneofKind: 'int64', int64: json as string } };
    case 'decimal':
      return { sum: { oneofKind: 'numeric', numeric: new Decimal(json as string).toFixed(10) } };
    case 'time':
      return { sum: { oneofKind: 'timestamp', timestamp: String(BigInt(Date.parse(json as string)) * 1000n) } };
    case 'date':
      return { sum: { oneofKind: 'date', date: Math.floor(Date.parse(json as string) / DAY_MS) } };
    case 'contractId':
      return { sum: { oneofKind: 'contractId', contractId: json as string } };
    case 'unit':
      return { sum: { oneofKind: 'unit', unit: {} } };
    case 'unchecked':
      throw new DamlTypeError('an unchecked value has no Daml type');
    case 'optional':
      return { sum: { oneofKind: 'optional', optional: json === null ? {} : { value: typedValue(type.of, json) } } };
    case 'list':
      return { sum: { oneofKind: 'list', list: { elements: (json as unknown[]).map((item) => typedValue(type.of, item)) } } };
    case 'textMap':
      return { sum: { oneofKind: 'textMap', textMap: { entries: Object.entries(json as Record<string, unknown>).map(([key, value]) => ({ key, value: typedValue(type.of, value) })) } } };
    case 'genMap':
      return { sum: { oneofKind: 'genMap', genMap: { entries: (json as Array<[unknown, unknown]>).map(([key, value]) => ({ key: typedValue(type.key, key), value: typedValue(type.value, value) })) } } };
    case 'record':
      return { sum: { oneofKind: 'record', record: { fields: type.fields.map(([label, field]) => ({ label, value: typedValue(field, (json as Record<string, unknown>)[label]) })) } } };
    case 'variant': {
      const { tag, value } = json as { tag: string; value: unknown };
      return { sum: { oneofKind: 'variant', variant: { constructor: tag, value: typedValue(type.constructors()[tag]!, value) } } };
    }
  }
}
