// An encoding worker of the pool (encode-pool.ts): decodes, maps and encodes the trace exports
// the pool sends it, with the `spans` encoder built from the column list it was started with.
import { parentPort, workerData } from 'node:worker_threads';
import { Invalid } from '../errors.ts';
import { rowEncoder } from '../stores/row-binary.ts';
import { decodeTraceBody, encodeSpans } from './span-encoding.ts';
import type { EncodeReply, EncodeRequest, EncodeWorkerData } from './encode-pool.ts';

/** Below this a payload's buffer may be a slice of Node's shared pool: copied, never transferred. */
const TRANSFER_MIN_BYTES = 64 * 1024;

const { columns } = workerData as EncodeWorkerData;
const encoder = rowEncoder(columns);
const port = parentPort!;

port.on('message', (req: EncodeRequest) => {
  let reply: EncodeReply;
  const transfer: ArrayBuffer[] = [];
  try {
    const encoded = encodeSpans(req.projectId, decodeTraceBody(req.body), encoder, req.receivedAt, req.opts);
    if (encoded.payload.byteLength < TRANSFER_MIN_BYTES) encoded.payload = Uint8Array.prototype.slice.call(encoded.payload);
    else transfer.push(encoded.payload.buffer as ArrayBuffer);
    reply = { id: req.id, encoded };
  } catch (err) {
    reply = { id: req.id, error: { invalid: err instanceof Invalid, message: (err as Error).message } };
  }
  port.postMessage(reply, transfer);
});
