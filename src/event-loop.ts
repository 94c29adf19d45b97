// Long synchronous work on the thread that serves requests (a batch's assembly, decoding or
// encoding thousands of rows) gives requests their turn now and then, so no request waits behind
// a whole batch: one `await nextTurn()` lets the I/O callbacks waiting run first.
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
