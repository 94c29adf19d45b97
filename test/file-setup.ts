// Runs before each test file (vitest `setupFiles`). A worker process runs file after file
// (`isolate: false` in vitest.config.ts: the modules are loaded once per worker, not per file), so
// each file starts from what a process of its own would have: a chDB folder of its own for its
// services (the previous file's are closed; the engine refuses a second folder while one is open),
// and no OpenTelemetry globals (tracer provider, context manager, propagator) left by another file.
import { context, diag, metrics, propagation, trace } from '@opentelemetry/api';
import { beginTestFile } from './helpers/env.ts';

beginTestFile();
for (const api of [trace, context, propagation, metrics, diag]) api.disable();
