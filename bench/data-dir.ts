// A bench's DATA_DIR, removed once its service is closed. The embedded engine may still be
// finishing a merge in it for a moment: the removal is tried again (a directory not empty yet).
import fs from 'node:fs';

export function removeDataDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
}
