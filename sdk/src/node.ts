// Node-only parts of the SDK, apart so the main entry never pulls in node:fs: a file storage
// for execution records, one JSON file per plan in a directory, written whole (a temporary file
// renamed over the old one) and readable by its owner only.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { readRecord, type ExecutionStorage } from './execution/storage.js';

export function fileStorage(directory: string): ExecutionStorage {
  const fileOf = (planId: string) => path.join(directory, `${encodeURIComponent(planId)}.json`);
  return {
    async get(planId) {
      return readRecord(await readFile(fileOf(planId), 'utf8').catch(() => null));
    },
    async set(record) {
      await mkdir(directory, { recursive: true });
      const file = fileOf(record.planId);
      const temporary = `${file}.${process.pid}.tmp`;
      await writeFile(temporary, JSON.stringify(record), { mode: 0o600 });
      await rename(temporary, file);
    },
  };
}
