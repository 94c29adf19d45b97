// Once before the suite: the web console's bundle, which the service serves at / (the browser
// tests load it). Built only when web/src changed since the last build.
import { buildConsole } from '../web/build.ts';

export default async function setup(): Promise<void> {
  await buildConsole({ ifStale: true });
}
