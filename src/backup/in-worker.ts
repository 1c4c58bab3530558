// Runs takeSnapshot (snapshot.ts) in a worker thread, so that serving goes on meanwhile: VACUUM INTO, the
// integrity check and gzip each hold their thread for as long as the database is large (about 2 s for
// 100,000 users, bench/results.md). The worker lives for one snapshot.
import { pathToFileURL } from "node:url";
import type { SnapshotRequest, TakenSnapshot } from "./snapshot.ts";

declare const BUILT_AS_BINARY: boolean | undefined;

type Answer = { ok: true; snapshot: TakenSnapshot } | { ok: false; problem: string };

/** A running snapshot: its result, and a way to end it (at shutdown). */
export interface SnapshotJob {
  done: Promise<TakenSnapshot>;
  stop(): void;
}

export function snapshotInWorker(request: SnapshotRequest): SnapshotJob {
  const worker = new Worker(workerUrl());
  let settle: ((answer: Answer) => void) | undefined;
  const done = new Promise<TakenSnapshot>((resolve, reject) => {
    settle = (answer) => {
      settle = undefined;
      void worker.terminate();
      if (answer.ok) resolve(answer.snapshot);
      else reject(new Error(answer.problem));
    };
  });
  worker.onmessage = (event: MessageEvent<Answer>) => settle?.(event.data);
  worker.onerror = (event) => settle?.({ ok: false, problem: event.message });
  worker.postMessage(request);
  return { done, stop: () => settle?.({ ok: false, problem: "svc is stopping" }) };
}

/**
 * The binary holds the worker as an entry point of its own, under its root as the file is under src/
 * (compile.ts lists it); from source, it is the file beside this one.
 */
function workerUrl(): URL {
  if (typeof BUILT_AS_BINARY !== "undefined" && BUILT_AS_BINARY)
    return new URL("./backup/snapshot-worker.ts", pathToFileURL(Bun.main));
  return new URL("./snapshot-worker.ts", import.meta.url);
}
