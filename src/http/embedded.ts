// The gzipped files the binary carries (src/build/assets.ts), each read and unpacked on its first
// request; sent gzipped to clients that take it, 304 to those that have it.
import type { AssetName } from "../build/assets.ts";
import { version } from "../../package.json";
import { acceptsGzip } from "./accept-encoding.ts";

// Defined true by compile.ts. Run from source it is not defined, and the files are made on first
// request; in the binary that branch is gone, and render-graphiql with it.
// (Tested where it is used: the bundler drops the branch only then.)
declare const BUILT_AS_BINARY: boolean | undefined;

export interface Gzipped {
  plain: Uint8Array<ArrayBuffer>;
  gzip: Uint8Array<ArrayBuffer>;
  /** Changes with the content and with svc's version. */
  etag: string;
}

const loaded = new Map<AssetName, Promise<Gzipped>>();

/** The asset, read (or, from source, made) once. */
export function embeddedAsset(name: AssetName): Promise<Gzipped> {
  let asset = loaded.get(name);
  if (!asset) {
    asset = gzipOf(name).then((gzip) => {
      const plain = Bun.gunzipSync(gzip) as Uint8Array<ArrayBuffer>;
      return { plain, gzip, etag: `"${version}-${Bun.hash(plain).toString(36)}"` };
    });
    loaded.set(name, asset);
  }
  return asset;
}

async function gzipOf(name: AssetName): Promise<Uint8Array<ArrayBuffer>> {
  if (typeof BUILT_AS_BINARY === "undefined" || !BUILT_AS_BINARY)
    return (await import("../build/assets.ts")).gzipAsset(name);
  // Bun names an embedded file after its own, with a content hash: graphiql.html-1a2b3c4d.gz.
  const prefix = `${name}-`;
  const file = Bun.embeddedFiles.find((blob) => (blob as Blob & { name: string }).name.startsWith(prefix));
  if (!file) throw new Error(`the binary does not carry ${name} (build it with bun run build)`);
  return new Uint8Array(await file.arrayBuffer());
}

/** The file as an answer: gzipped when the client takes it, 304 when it has this version already. */
export async function assetResponse(request: Request, name: AssetName, contentType: string): Promise<Response> {
  const file = await embeddedAsset(name);
  const headers = {
    "content-type": contentType,
    // Revalidated after a day; a new svc version is a new ETag.
    "cache-control": "public, max-age=86400",
    etag: file.etag,
    vary: "Accept-Encoding",
  };
  if (request.headers.get("if-none-match") === file.etag) return new Response(null, { status: 304, headers });
  if (acceptsGzip(request.headers.get("accept-encoding"))) {
    return new Response(file.gzip, { headers: { ...headers, "content-encoding": "gzip" } });
  }
  return new Response(file.plain, { headers });
}
