// SVC_TLS_CERT and SVC_TLS_KEY read and checked: at start-up (a problem stops svc with one line) and at
// each SIGHUP (a problem keeps the certificate in use). Bun.serve would refuse a bad pair too, but
// without saying which file is at fault; this names the variable, the path and the problem. Loaded
// only when TLS is on: it brings node:crypto.
import { createPrivateKey, X509Certificate } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { ConfigError, type TlsFiles } from "../config/index.ts";

/** The files' contents, as Bun.serve's `tls` takes them, and what the log says of the certificate. */
export interface TlsMaterial {
  cert: string;
  key: string;
  /** The (first) certificate's SHA-256 fingerprint, as `openssl x509 -fingerprint -sha256` prints it. */
  fingerprint: string;
  /** When it expires, ISO 8601. */
  notAfter: string;
}

/** A TLS file svc cannot use: `svc: SVC_TLS_CERT: /etc/svc/cert.pem: no such file`. */
export class TlsFileError extends ConfigError {
  constructor(variable: "SVC_TLS_CERT" | "SVC_TLS_KEY", path: string, problem: string) {
    super(variable, "", path);
    this.message = `${variable}: ${path}: ${problem}`;
  }
}

const CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;

export async function loadTls({ certPath, keyPath }: TlsFiles): Promise<TlsMaterial> {
  const [cert, key] = await Promise.all([read("SVC_TLS_CERT", certPath), read("SVC_TLS_KEY", keyPath)]);
  const blocks = cert.match(CERTIFICATE) ?? [];
  if (blocks.length === 0)
    throw new TlsFileError("SVC_TLS_CERT", certPath, "no PEM certificate in it (-----BEGIN CERTIFICATE-----)");
  // Every certificate of a chain, so that a damaged intermediate stops start-up rather than clients.
  const chain = blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch {
      throw new TlsFileError("SVC_TLS_CERT", certPath, `certificate ${i + 1} of ${blocks.length} is not valid PEM`);
    }
  });
  let privateKey: ReturnType<typeof createPrivateKey>;
  try {
    privateKey = createPrivateKey(key);
  } catch (error) {
    const encrypted = /ENCRYPTED/.test(key) || /passphrase/i.test(String(error));
    throw new TlsFileError(
      "SVC_TLS_KEY",
      keyPath,
      encrypted
        ? "the key is encrypted; svc needs it unencrypted (readable by svc's user alone)"
        : "no PEM private key in it",
    );
  }
  const leaf = chain[0]!;
  if (!leaf.checkPrivateKey(privateKey))
    throw new TlsFileError(
      "SVC_TLS_KEY",
      keyPath,
      `not the private key of the certificate in SVC_TLS_CERT (${certPath})`,
    );
  return { cert, key, fingerprint: leaf.fingerprint256, notAfter: new Date(leaf.validTo).toISOString() };
}

/**
 * Far more than a certificate chain (a few KB) or a key could need: a path to something else (a log, a
 * device) is refused before it is read, rather than filling memory.
 */
const MAX_BYTES = 1024 * 1024;

/**
 * The file's text, opened without waiting (O_NONBLOCK: a FIFO would otherwise block the open until a
 * writer came, with SIGTERM held until start-up ends) and read only when fstat says it is a regular
 * file of at most MAX_BYTES. Symbolic links are followed (certbot's live/ folder is made of them).
 */
async function read(variable: "SVC_TLS_CERT" | "SVC_TLS_KEY", path: string): Promise<string> {
  let file: FileHandle;
  try {
    file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new TlsFileError(variable, path, readProblem(error));
  }
  try {
    const stats = await file.stat();
    if (stats.isDirectory()) throw new TlsFileError(variable, path, "a folder, not a file");
    if (!stats.isFile()) throw new TlsFileError(variable, path, `not a regular file (${kind(stats)})`);
    if (stats.size > MAX_BYTES) throw new TlsFileError(variable, path, sizeRefusal(stats.size));
    // At most one byte past the cap, in case the file grew since fstat.
    const buffer = Buffer.alloc(MAX_BYTES + 1);
    let length = 0;
    for (;;) {
      const { bytesRead } = await file.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
      if (length > MAX_BYTES) throw new TlsFileError(variable, path, sizeRefusal(length));
    }
    return buffer.toString("utf8", 0, length);
  } catch (error) {
    if (error instanceof TlsFileError) throw error;
    throw new TlsFileError(variable, path, readProblem(error));
  } finally {
    await file.close();
  }
}

function sizeRefusal(bytes: number): string {
  return `${(bytes / MAX_BYTES).toFixed(1)} MiB, larger than the 1 MiB a certificate chain or key could need`;
}

function kind(stats: Stats): string {
  if (stats.isFIFO()) return "a FIFO";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  if (stats.isSocket()) return "a socket";
  return "not a file";
}

function readProblem(error: unknown): string {
  switch ((error as { code?: unknown }).code) {
    case "ENOENT":
      return "no such file";
    case "EACCES":
    case "EPERM":
      return "permission denied: svc's user cannot read it";
    case "EISDIR":
      return "a folder, not a file";
    default:
      return error instanceof Error ? error.message.split("\n")[0]! : String(error);
  }
}
