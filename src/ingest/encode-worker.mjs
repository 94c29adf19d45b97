// The entry of an encoding worker thread: loads encode-worker.ts through tsx (the API's own
// TypeScript loader), whatever loader the parent thread runs under.
import { workerData } from 'node:worker_threads';
import { tsImport } from 'tsx/esm/api';

await tsImport(workerData.entry, import.meta.url);
