// The worker thread a snapshot is taken in while svc serves (in-worker.ts): one request, one answer. An
// entry point of its own in the binary (src/build/compile.ts).
import { describeError } from "../errors/safe-errors.ts";
import { type SnapshotRequest, takeSnapshot } from "./snapshot.ts";

declare const self: Worker;

self.onmessage = async (event: MessageEvent<SnapshotRequest>) => {
  try {
    postMessage({ ok: true, snapshot: await takeSnapshot(event.data) });
  } catch (error) {
    postMessage({ ok: false, problem: describeError(error) });
  }
};
