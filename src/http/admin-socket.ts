// The local admin socket: the same API, served on a unix socket in DATA_DIR whose requests act as
// the operator (admin of every project, and alone may create projects). It exists so that
// `npm run admin` can work while the API holds the embedded stores (one process per DATA_DIR):
// only a local user who can open DATA_DIR/admin.sock (mode 0600: the user running the API) reaches
// it. A request is the operator's because it arrived on this server, never because of a header.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { Logger } from '../logger.ts';

export const ADMIN_SOCKET_NAME = 'admin.sock';
/** sun_path holds 108 bytes with the terminating NUL. */
const MAX_SOCKET_PATH = 107;

const operatorRequests = new WeakSet<http.IncomingMessage>();

export function isOperatorRequest(req: http.IncomingMessage): boolean {
  return operatorRequests.has(req);
}

export function adminSocketPath(dataDir: string): string {
  return path.join(dataDir, ADMIN_SOCKET_NAME);
}

export interface AdminSocket {
  readonly path: string;
  close(): Promise<void>;
}

/**
 * Serves `handler` on DATA_DIR/admin.sock. Call only while holding the DATA_DIR lock: a socket file
 * left by a process that died is removed. Undefined (with a warning) when the path is too long for
 * a unix socket.
 */
export async function listenAdminSocket(handler: http.RequestListener, dataDir: string, logger: Logger): Promise<AdminSocket | undefined> {
  const file = adminSocketPath(dataDir);
  if (Buffer.byteLength(file) > MAX_SOCKET_PATH) {
    logger.warn(
      { path: file },
      `admin socket not served: its path is longer than ${MAX_SOCKET_PATH} bytes (use a shorter DATA_DIR); ` +
        'npm run admin needs the API stopped',
    );
    return undefined;
  }
  fs.rmSync(file, { force: true });
  const server = http.createServer((req, res) => {
    operatorRequests.add(req);
    handler(req, res);
  });
  server.keepAliveTimeout = 1_000;
  const listening = new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.once('listening', () => {
      server.off('error', reject);
      resolve();
    });
  });
  // The socket is made with mode 0600: the umask is 0177 while it is bound (listen binds a unix
  // socket synchronously), so there is no moment where another user could connect; and it is set
  // so again in case the file system ignores the umask.
  const umask = process.umask(0o177);
  try {
    server.listen(file);
  } finally {
    process.umask(umask);
  }
  await listening;
  fs.chmodSync(file, 0o600);
  logger.info({ path: file }, 'admin socket listening');
  return {
    path: file,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          fs.rmSync(file, { force: true });
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}
