// Where an execution's record is kept, so that `resume` can continue it after a reload or a
// crash without submitting again: in memory by default, in the browser's localStorage, or (from
// '@bestex/sdk/node') in a file. A record is versioned JSON; a reader skips a version it does not know.
import { RECORD_VERSION, type ExecutionRecord } from './types.js';

export interface ExecutionStorage {
  get(planId: string): Promise<ExecutionRecord | null>;
  set(record: ExecutionRecord): Promise<void>;
}

/** Parses a stored record; null for one of another version or another shape. */
export function readRecord(text: string | null): ExecutionRecord | null {
  if (text === null) return null;
  try {
    const record = JSON.parse(text) as ExecutionRecord;
    return record?.version === RECORD_VERSION && typeof record.planId === 'string' ? record : null;
  } catch {
    return null;
  }
}

export function memoryStorage(): ExecutionStorage {
  const records = new Map<string, string>();
  return {
    get: async (planId) => readRecord(records.get(planId) ?? null),
    set: async (record) => void records.set(record.planId, JSON.stringify(record)),
  };
}

/**
 * What this package uses of the Web Storage API: a browser's `localStorage` or `sessionStorage` is
 * one, and so is any object with these two methods. Declared here rather than as the DOM's
 * `Storage`, so that a project compiled without the DOM library can use this entry.
 */
export interface WebStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/**
 * The browser's localStorage (or any WebStorage), under `prefix`. It is looked up when first used,
 * never on import, so server-side rendering never touches it.
 */
export function localStorageStorage(storage?: WebStorage, prefix = 'bestex:execution:'): ExecutionStorage {
  const store = (): WebStorage => {
    const found = storage ?? (globalThis as { localStorage?: WebStorage }).localStorage;
    if (!found) throw new Error('no localStorage here: pass a Storage, or use memoryStorage()');
    return found;
  };
  return {
    get: async (planId) => readRecord(store().getItem(prefix + planId)),
    set: async (record) => store().setItem(prefix + record.planId, JSON.stringify(record)),
  };
}
