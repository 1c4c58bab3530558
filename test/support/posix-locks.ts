// Who holds a POSIX advisory lock on a byte range of a file, as any other process sees it: SQLite's
// locks between processes are these. fcntl(F_GETLK) never reports the asking process's own locks, so
// the question is asked from a child process (Bun, calling libc through bun:ffi; opening the file there
// costs no lock, since the child holds none).
import { runProcess } from "./cli.ts";

export interface LockHolder {
  type: "read" | "write";
  pid: number;
}

const PROBE = `
import { dlopen, FFIType, ptr } from "bun:ffi";
import { openSync } from "node:fs";
const [path, start, length] = process.argv.slice(-3);
const libc = dlopen("libc.so.6", { fcntl: { args: [FFIType.i32, FFIType.i32, FFIType.ptr], returns: FFIType.i32 } });
// struct flock on 64-bit Linux: l_type (short), l_whence (short), l_start (off_t, at 8), l_len (at 16), l_pid (at 24).
const flock = new Uint8Array(32);
const view = new DataView(flock.buffer);
view.setInt16(0, 1, true); // F_WRLCK: any lock conflicts with it, so any holder is reported
view.setInt16(2, 0, true); // SEEK_SET
view.setBigInt64(8, BigInt(start), true);
view.setBigInt64(16, BigInt(length), true);
const rc = libc.symbols.fcntl(openSync(path, "r"), 5 /* F_GETLK */, ptr(flock));
console.log(JSON.stringify({ rc, type: view.getInt16(0, true), pid: view.getInt32(24, true) }));
`;

/** The holder of a lock on `length` bytes of `path` from `start`, or null when none is held by another process. */
export async function lockHolder(path: string, start: number, length: number): Promise<LockHolder | null> {
  const run = await runProcess([process.execPath, "-e", PROBE, path, String(start), String(length)]);
  if (run.code !== 0) throw new Error(`the lock probe failed (${run.code}): ${run.stderr}`);
  const { rc, type, pid } = JSON.parse(run.stdout) as { rc: number; type: number; pid: number };
  if (rc !== 0) throw new Error(`fcntl(F_GETLK) on ${path} answered ${rc}`);
  // F_RDLCK 0, F_WRLCK 1, F_UNLCK 2.
  if (type === 2) return null;
  return { type: type === 0 ? "read" : "write", pid };
}

/** Where SQLite's unix VFS takes its locks (sqlite3.c: PENDING_BYTE, SHARED_FIRST, UNIX_SHM_DMS). */
export const SQLITE_LOCKS = {
  /** The database file's SHARED lock range: held by every connection in WAL mode while it is open. */
  shared: { start: 0x40000002, length: 510 },
  /** The WAL index's dead-man switch in the -shm file: held (read) by every process using the index. */
  walIndexInUse: { start: 128, length: 1 },
} as const;
