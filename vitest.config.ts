import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Two worker processes (the 2-core machine), each running file after file with its modules
    // loaded once (isolate: false: a file no longer pays a process start and the imports of the
    // whole service). Each file still gets stores of its own and no globals of the file before it
    // (test/file-setup.ts); a test that kills, restarts or starves a service runs it as a child.
    pool: 'forks',
    isolate: false,
    setupFiles: ['test/file-setup.ts'],
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});
