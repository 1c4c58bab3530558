// An address as the key of a per-client limit: the services' throttles count by it, whatever transport
// brought the address (src/http/client-address.ts reads it from a request).

/**
 * The client a per-client limit counts: an IPv4 address as it is; an IPv6 address by its /64, since one
 * host commonly holds every address of its network and could take a new one for each request. (Not for
 * naming a caller's own things, such as its idempotency keys: two hosts of one network stay apart there.)
 */
export function limitKey(address: string): string {
  const groups = ipv6Groups(address);
  if (groups === null) return address;
  // An IPv4 client on a dual-stack socket (::ffff:a.b.c.d) is that IPv4 address.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    return [groups[6]! >> 8, groups[6]! & 255, groups[7]! >> 8, groups[7]! & 255].join(".");
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(":")}::/64`;
}

/** The eight 16-bit groups of an IPv6 address (zone dropped, `::` and a dotted tail expanded), or null. */
function ipv6Groups(address: string): number[] | null {
  if (!address.includes(":")) return null;
  let text = address.replace(/%.*$/, "").toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const part = (half: string | undefined) => (half ? half.split(":") : []);
  const head = part(halves[0]);
  const tail = part(halves[1]);
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (!all.every((g) => /^[0-9a-f]{1,4}$/.test(g))) return null;
  return all.map((g) => Number.parseInt(g, 16));
}
